"""DBOS workflows: the browser (newest first, keyset pages, ``/`` filter, marks) and a
workflow's detail (fields, step timeline, tree of child workflows, events and streams),
with the workflow actions of ``qctl.systems.dbos.actions`` on either."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static, Tree

from qctl.core.parse import parse_duration
from qctl.core.verbs import MAX_TARGETS, Selection, Verb
from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.tui import cells
from qctl.tui import fmt, widgets
from qctl.tui.base import Dashboarded
from qctl.tui.panes import PAGE_BINDINGS, DetailScreen, MarkedPages, RecordView, StatePicked
from qctl.tui.widgets import Column, PromptDialog, flex, refill, table
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database

PAGE = 100
TREE_NODES = 200
TIMELINE_STEPS = 500
"""Steps of a workflow's tree on the detail's timeline."""
"""Child workflows drawn in a detail's tree (breadth first, one read per level)."""
FILTER_KEYS = {
    "queue": "queue_name",
    "version": "app_version",
    "parent": "parent_workflow_id",
    "executor": "executor_id",
}
"""``/`` words ``key=value`` and the ``WorkflowFilter`` field each sets."""

QUEUE_FIELD = ("queue", "onto queue (empty: DBOS's internal queue)", "")
WORKFLOW_BINDINGS = [
    Binding("C", "wf_cancel", "Cancel"),
    Binding("R", "wf_resume", "Resume"),
    Binding("F", "wf_fork", "Fork"),
    Binding("W", "wf_rewind", "Rewind"),
    Binding("D", "wf_delete", "Delete"),
    Binding("T", "wf_cancel_tree", "Cancel tree"),
    Binding("E", "wf_delete_tree", "Delete tree"),
    Binding("L", "wf_delay", "Delay"),
]


def parse_filter(text: str, status: str | None = None) -> reads.WorkflowFilter:
    """``/`` text: workflow names, statuses, ``queue=Q``, ``version=V``, ``parent=ID``,
    ``executor=E`` and ``id=PREFIX``; ``status`` (the ``t`` key) overrides the typed
    statuses. Raises ``InvalidInput`` on an unknown key."""
    values: dict[str, Any] = {"name": [], "status": []}
    prefix = ""
    for word in text.split():
        key, eq, value = word.partition("=")
        if not eq:
            values["status" if word.upper() in reads.STATUSES else "name"].append(
                word.upper() if word.upper() in reads.STATUSES else word
            )
        elif key == "id":
            prefix = value
        elif key in FILTER_KEYS:
            values.setdefault(FILTER_KEYS[key], []).append(value)
        else:
            keys = ", ".join(f"{k}=" for k in [*FILTER_KEYS, "id"])
            raise InvalidInput(f"filter: unknown key {key!r} (a name, a status, {keys})")
    if status:
        values["status"] = [status]
    fields: dict[str, Any] = {k: tuple(v) for k, v in values.items()}
    return reads.WorkflowFilter(workflow_id_prefix=prefix, **fields)


class WorkflowActions(Dashboarded):
    """The workflow verbs (``qctl.systems.dbos.actions``' declarations, run by the verb
    engine as ``qctl workflows`` runs them) on the marked workflows, on every workflow
    the filter matches (``*``), else on the one ``current_workflow`` names."""

    def current_workflow(self) -> Mapping[str, Any] | None:
        raise NotImplementedError

    def marked_selection(self) -> Selection | None:
        """The marks, or the filter with ``*``; None: the verbs act on
        ``current_workflow``."""
        return None

    def marks_done(self) -> None:
        """The marks were acted on."""

    def _act(
        self,
        verb: Verb[Database],
        tree: bool = False,
        check: Callable[[Database, Sequence[str]], object] | None = None,
    ) -> None:
        """``verb`` on the selection; with ``tree``, on every workflow they started too,
        at any depth, as ``qctl workflows <verb> --children`` does; ``check`` refuses
        before the plan, as the command line does (a fork's or rewind's options, and a
        marked workflow they cannot take)."""
        chosen = self.marked_selection()
        then = None if chosen is None else self.marks_done
        if chosen is None:
            wf = self.current_workflow()
            if wf is None:
                self.top.notify("no workflow selected", severity="warning")
                return
            chosen = Selection.of_ids([wf["workflow_id"]])
        picked = chosen

        def read(db: Database) -> Selection:
            if check is not None:
                check(db, picked.ids)
            return actions.with_descendants(db, picked, MAX_TARGETS) if tree else picked

        self.top.act_verb(verb, read if tree or check else chosen, then)

    def _ask(
        self, title: str, fields: list[tuple[str, str, str]], then: Callable[..., None]
    ) -> None:
        def got(values: dict[str, str] | None) -> None:
            if values is None:
                self.top.notify("cancelled")
                return
            try:
                then(**{k: v.strip() for k, v in values.items()})
            except InvalidInput as exc:
                self.top.notify(str(exc), severity="error")

        self.top.push_screen(PromptDialog(title, fields), got)

    def action_wf_cancel(self) -> None:
        self._act(actions.CANCEL)

    def action_wf_delete(self) -> None:
        self._act(actions.DELETE)

    def action_wf_cancel_tree(self) -> None:
        self._act(actions.CANCEL, tree=True)

    def action_wf_delete_tree(self) -> None:
        self._act(actions.DELETE, tree=True)

    def action_wf_resume(self) -> None:
        self._ask(
            "resume: re-enqueued to run from its last completed step",
            [QUEUE_FIELD],
            lambda queue: self._act(actions.resume(queue or None)),
        )

    def action_wf_fork(self) -> None:
        def then(step: str, version: str, queue: str) -> None:
            n, v, q = step_number(step), version or None, queue or None
            actions.check_step(n)
            self._act(
                actions.fork_verb(n, v, q),
                check=lambda db, ids: actions.check_placed(db, ids, n, v, q, None),
            )

        self._ask(
            "fork: a new workflow with the same inputs, the steps before N copied",
            [
                ("step", "from step N (1 runs it all again)", "1"),
                ("version", "application version (empty: none, the latest's executors run it)", ""),
                QUEUE_FIELD,
            ],
            then,
        )

    def action_wf_rewind(self) -> None:
        def then(step: str, queue: str) -> None:
            n, q = step_number(step), queue or None
            actions.check_step(n)
            self._act(
                actions.rewind(n, queue_name=q),
                check=lambda db, ids: actions.check_placed(db, ids, n, None, q, None),
            )

        self._ask(
            "rewind: same id, its history from step N on dropped, re-enqueued",
            [("step", "to step N (1 runs it all again)", "1"), QUEUE_FIELD],
            then,
        )

    def action_wf_delay(self) -> None:
        def then(delay: str) -> None:
            wait = parse_duration(delay)
            self._act(actions.set_delay(int((datetime.now(UTC) + wait).timestamp() * 1000)))

        self._ask(
            "delay: a DELAYED workflow starts after this long instead",
            [("delay", "start after (e.g. 10m; 0s: now)", "0s")],
            then,
        )


def step_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(f"step: {text!r} is not a step number") from None


def _plus(value: Any, more: int) -> Any:
    """A group's status or name, and how many others the group has (``+N``)."""
    return value + (f" +{more - 1}" if more > 1 else "")


WORKFLOW_COLUMNS: tuple[Column[reads.WorkflowPayloads], ...] = (
    widgets.ident("workflow id", "DBOS's id (● marked)", lambda r: r["workflow_id"]),
    Column("status", "its status (Statuses)", lambda r: cells.status(r["status"])),
    flex("name", "its workflow's name (its function)", lambda r: r["name"] or ""),
    Column("queue", "the queue it ran from", lambda r: r["queue_name"] or ""),
    Column("version", "the application version that runs it", lambda r: r["app_version"] or ""),
    Column("created", "when it was created", lambda r: r["created_at"], time=cells.when),
    Column(
        "took", "created to completed", lambda r: cells.took(r["created_at"], r["completed_at"])
    ),
    Column("recovery", "recovery attempts so far", lambda r: r["recovery_attempts"]),
)
GROUP_COLUMNS: tuple[Column[reads.ErrorGroup], ...] = (
    Column("count", "the failed workflows with that error", lambda g: g["count"]),
    Column(
        "status",
        "theirs (+N: N more statuses)",
        lambda g: _plus(cells.status(g["status"]), g["statuses"]),
    ),
    flex("name", "theirs (+N: N more names)", lambda g: _plus(g["name"] or "", g["names"])),
    flex(
        "error",
        "the error they share, decoded, values folded (<n>, <str>, <uuid>, <hex>, <id>)",
        lambda g: Text(fmt.safe(g["fingerprint"]), "red") if g["error"] else "(none recorded)",
    ),
    Column(
        "last failed", "the newest one's creation", lambda g: g["last_created_at"], time=cells.when
    ),
)
STEP_NUMBER = "the step's number (fork and rewind count from it)"
STEP_TOOK = "started to completed"
STEP_COLUMNS: tuple[Column[reads.Step], ...] = (
    Column("step", STEP_NUMBER, lambda s: s["function_id"]),
    flex("function", "the step's function", lambda s: s["function_name"] or ""),
    Column("started", "when it started", lambda s: s["started_at_epoch_ms"], time=cells.when),
    Column(
        "took",
        STEP_TOOK,
        lambda s: cells.took(s["started_at_epoch_ms"], s["completed_at_epoch_ms"]),
    ),
    flex(
        "output / error",
        "what it returned or raised",
        lambda s: (
            Text(cells.value(s["error"]), "red")
            if s["error"] is not None
            else cells.value(s["output"])
        ),
    ),
    Column("child", "a child workflow it started", lambda s: s["child_workflow_id"] or ""),
)


@dataclass(frozen=True)
class Axis:
    """The detail's timeline: where its time starts (the workflow's creation, epoch ms),
    how long it is, and each workflow of the tree's depth and name."""

    origin: int
    span: int
    depth: Mapping[str, int]
    names: Mapping[str, str]

    def who(self, wf_id: str) -> str:
        """The step's workflow, indented by its depth in the tree."""
        d = self.depth.get(wf_id, 0)
        return ("  " * (d - 1) + "└ " if d else "") + fmt.one_line(
            self.names.get(wf_id) or wf_id, 30
        )


TimelineRow = tuple[reads.TimelineStep, Axis]
TIMELINE_COLUMNS: tuple[Column[TimelineRow], ...] = (
    Column(
        "at",
        "when the step started, counted from the workflow's creation",
        lambda r: (
            ""
            if r[0]["started_at_epoch_ms"] is None
            else f"+{(r[0]['started_at_epoch_ms'] - r[1].origin) / 1000:.3f}s"
        ),
    ),
    Column(
        "took",
        STEP_TOOK,
        lambda r: cells.took(r[0]["started_at_epoch_ms"], r[0]["completed_at_epoch_ms"]),
    ),
    Column(
        "workflow", "the step's workflow, under its parent", lambda r: r[1].who(r[0]["workflow_id"])
    ),
    Column("step", STEP_NUMBER, lambda r: r[0]["function_id"]),
    Column(
        "function",
        "the step's function (red: it failed)",
        lambda r: Text(r[0]["function_name"] or "", "red" if r[0]["failed"] else ""),
    ),
    Column(
        "span",
        "the step's time as a bar on the time of the whole tree",
        lambda r: _bar(
            r[0]["started_at_epoch_ms"], r[0]["completed_at_epoch_ms"], r[1].origin, r[1].span
        ),
    ),
)
EVENT_COLUMNS: tuple[Column[Mapping[str, Any]], ...] = (
    # A row is a ``reads.Event`` or a ``reads.StreamValue`` (with an offset).
    Column(
        "kind",
        "event (set_event) or stream (write_stream, with its offset)",
        lambda r: f"stream {r['offset']}" if "offset" in r else "event",
    ),
    Column("key", "the event's or stream's key", lambda r: r["key"]),
    flex(
        "value",
        "its value, decoded",
        lambda r: "(closed)" if r.get("closed") else cells.value(r["value"]),
    ),
)


@dataclass
class WorkflowPage:
    rows: list[reads.WorkflowPayloads]
    next_cursor: reads.Cursor | None
    asked: tuple[reads.WorkflowFilter, reads.Cursor | None, bool]
    """The filter, cursor and grouping this page answers: an older page is never shown."""
    groups: list[reads.ErrorGroup] = field(default_factory=list)
    """``reads.error_groups`` when grouped by error (``g``)."""


class WorkflowsPane(WorkflowActions, StatePicked, MarkedPages[WorkflowPage]):
    BINDINGS = [
        Binding("t", "pick_state", "Status"),
        Binding("g", "toggle_groups", "By error"),
        *PAGE_BINDINGS,
        *WORKFLOW_BINDINGS,
    ]
    filter_hint = "name, status, queue=Q, version=V, id=PREFIX, parent=ID"
    states = reads.STATUSES
    state_word = "status"
    state: str | None = None
    page: WorkflowPage | None = None
    grouped = False
    """``g``: failed workflows grouped by error (``reads.error_groups``) in place of
    the workflows; enter opens a group's newest workflow."""

    table_id = "dbos-workflows"
    tables = (
        ("Workflows", WORKFLOW_COLUMNS),
        ("By error (g)", GROUP_COLUMNS),
        ("Detail", STEP_COLUMNS),
        ("Detail timeline", TIMELINE_COLUMNS),
        ("Detail events and streams", EVENT_COLUMNS),
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.filter = reads.WorkflowFilter()

    def compose(self) -> ComposeResult:
        yield Static(id="dbos-wf-filter", classes="bar")
        yield from self.compose_filter()
        yield table("dbos-workflows", *WORKFLOW_COLUMNS)
        groups = table("dbos-error-groups", *GROUP_COLUMNS)
        groups.display = False
        yield groups

    def open_with(self, text: str) -> None:
        """Show the workflows ``text`` (``/`` words) matches."""
        self.filter_text = text
        self.filter_changed()

    def filter_changed(self) -> None:
        try:
            self.filter = parse_filter(self.filter_text, self.state)
        except InvalidInput as exc:
            self.top.notify(str(exc), severity="error")
            return
        self.restart()

    def asked(self) -> tuple[reads.WorkflowFilter, reads.Cursor | None, bool]:
        return self.filter, self.cursors[-1], self.grouped

    def fetch(self, db: Database) -> WorkflowPage:
        asked = self.asked()
        if self.grouped:
            return WorkflowPage([], None, asked, reads.error_groups(db, asked[0], PAGE))
        rows = reads.list_workflows(db, asked[0], PAGE, asked[1])
        nxt = reads.cursor_of(rows[-1]) if len(rows) == PAGE else None
        return WorkflowPage(rows, nxt, asked)

    def show(self, data: WorkflowPage) -> None:
        if data.asked != self.asked():
            return
        self.page = data
        now = self.top.clock()
        workflows = self.query_one("#dbos-workflows", DataTable)
        groups = self.query_one("#dbos-error-groups", DataTable)
        if workflows.display == self.grouped:
            workflows.display, groups.display = not self.grouped, self.grouped
            (groups if self.grouped else workflows).focus()
        refill(
            groups,
            [(g["workflow_id"] or "", widgets.cells(GROUP_COLUMNS, g, now)) for g in data.groups],
        )
        rows = []
        for r in data.rows:
            row = widgets.cells(WORKFLOW_COLUMNS, r, now)
            if self.is_marked(r):
                row[0] = widgets.marked(row[0])
            rows.append((r["workflow_id"], row))
        refill(workflows, rows)
        first = (len(self.cursors) - 1) * PAGE
        shown = f"{first + 1}-{first + len(data.rows)}" if data.rows else "0"
        if self.grouped:
            shown = f"{len(data.groups)} error group(s)"
        marks = ""
        if self.all_marked:
            marks = "   every matching workflow marked"
        elif self.marked:
            marks = f"   {len(self.marked)} marked"
        self.query_one("#dbos-wf-filter", Static).update(
            Text.assemble(
                ("status ", "dim"),
                (self.state or "all", "bold"),
                ("  filter ", "dim"),
                (self.filter_text or "-", "bold"),
                (f"   {shown}", ""),
                (f"   page {len(self.cursors)}", "dim"),
                (marks, "bold magenta"),
            )
        )

    def page_rows(self) -> list[reads.WorkflowPayloads]:
        return self.page.rows if self.page else []

    def row_key(self, row: Mapping[str, Any]) -> str:
        return str(row["workflow_id"])

    def current_workflow(self) -> Mapping[str, Any] | None:
        row: Mapping[str, Any] | None = self.current_row()
        return row

    def marked_selection(self) -> Selection | None:
        if self.all_marked:
            return Selection(filter=actions.selection_filter(self.filter))
        if self.marked:
            # Read again when acted on: the statuses on screen may be a poll old.
            return Selection.of_ids(list(self.marked), by="marks")
        return None

    def marks_done(self) -> None:
        self.clear_marks()

    def action_toggle_groups(self) -> None:
        self.grouped = not self.grouped
        self.restart()

    def state_changed(self) -> None:
        self.filter_changed()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if not event.row_key.value:  # a group whose newest workflow was deleted since
            return
        self.top.push_screen(WorkflowDetailScreen(str(event.row_key.value)))


@dataclass
class Node:
    row: Mapping[str, Any]
    """The workflow (``reads.WorkflowPayloads``) or a descendant (``reads.Child``)."""
    children: list[Node] = field(default_factory=list)


@dataclass
class WorkflowDetail:
    workflow: reads.WorkflowPayloads
    steps: list[reads.Step]
    tree: Node
    forks: list[reads.Related]
    events: list[reads.Event]
    streams: list[reads.StreamValue]
    truncated: bool = False
    """The tree has more than ``TREE_NODES`` children."""
    timeline: list[reads.TimelineStep] = field(default_factory=list)
    """The steps of the workflow and its descendants in the tree, by start
    (``reads.steps_of``): Conductor's trace view."""


def child_tree(db: Database, root: Mapping[str, Any]) -> tuple[Node, bool]:
    """The workflow and its descendants, breadth first, one read per level; at most
    ``TREE_NODES`` (and whether some were left out)."""
    top = Node(root)
    level, count = [top], 0
    while level and count < TREE_NODES:
        by_id = {n.row["workflow_id"]: n for n in level}
        rows = reads.children(db, list(by_id), TREE_NODES - count + 1)
        level = []
        for row in rows[: TREE_NODES - count]:
            node = Node(row)
            by_id[row["parent_workflow_id"]].children.append(node)
            level.append(node)
        count += len(level)
        if len(rows) > len(level):
            return top, True
    return top, False


def workflow_text(wf: reads.WorkflowPayloads, forks: list[reads.Related], now: datetime) -> Text:
    t = Text.assemble(
        (f"{fmt.safe(wf['name'] or '')} ", "bold"),
        (f"{fmt.safe(wf['workflow_id'])}  ", "dim"),
        cells.status(wf["status"]),
        "\n",
    )

    def line(label: str, value: object, style: str = "") -> None:
        if value in (None, ""):
            return
        t.append(f"{label:>17} ", "bold")
        t.append(f"{fmt.safe(str(value))}\n", style)

    line("queue", wf["queue_name"])
    line("executor", wf["executor_id"])
    line("version", wf["app_version"])
    line("recovery attempts", wf["recovery_attempts"])
    line("created", cells.full(wf["created_at"], now))
    line("dequeued", cells.full(wf["dequeued_at"], now))
    line("completed", cells.full(wf["completed_at"], now))
    line("took", cells.took(wf["created_at"], wf["completed_at"]))
    if wf["workflow_timeout_ms"]:
        line("timeout", fmt.duration(int(wf["workflow_timeout_ms"]) / 1000))
    line("deadline", cells.full(wf["workflow_deadline_epoch_ms"], now))
    line("delayed until", cells.full(wf["delay_until_epoch_ms"], now))
    line("parent", wf["parent_workflow_id"])
    line("forked from", wf["forked_from"])
    line("forks", ", ".join(f["workflow_id"] for f in forks))
    line("schedule", wf["schedule_name"])
    line("input", cells.value(wf["input"], 300))
    line("output", cells.value(wf["output"], 300))
    line("error", cells.value(wf["error"], 300), "red")
    return t


class WorkflowView(RecordView[WorkflowDetail]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="dbos-wf-text")
            yield table("dbos-steps", *STEP_COLUMNS)
            with Horizontal(id="dbos-wf-bottom"):
                yield Tree("children", id="dbos-children")
                yield table("dbos-timeline", *TIMELINE_COLUMNS)
                yield table("dbos-events", *EVENT_COLUMNS)

    def fetch(self, db: Database) -> WorkflowDetail:
        wf = reads.get_workflow(db, self.record_id)
        tree, truncated = child_tree(db, wf)
        ids = [n.row["workflow_id"] for n in _walk(tree)]
        return WorkflowDetail(
            wf,
            reads.list_steps(db, self.record_id),
            tree,
            reads.related(db, "forked_from", self.record_id),
            reads.list_events(db, self.record_id),
            reads.list_streams(db, self.record_id),
            truncated,
            reads.steps_of(db, ids, TIMELINE_STEPS),
        )

    def render_detail(self) -> None:
        data = self.detail
        if data is None:
            return
        now = self.top.clock()
        self.query_one("#dbos-wf-text", Static).update(
            workflow_text(data.workflow, data.forks, now)
        )
        steps = self.query_one("#dbos-steps", DataTable)
        steps.border_title = f"steps: {len(data.steps)}"
        refill(
            steps,
            [(str(s["function_id"]), widgets.cells(STEP_COLUMNS, s, now)) for s in data.steps],
        )
        self._draw_tree(data)
        self._draw_timeline(data)
        events = self.query_one("#dbos-events", DataTable)
        events.border_title = f"events: {len(data.events)}  streams: {len(data.streams)} value(s)"
        refill(
            events,
            [(f"event\x1f{e['key']}", widgets.cells(EVENT_COLUMNS, e, now)) for e in data.events]
            + [
                (f"stream\x1f{s['key']}\x1f{s['offset']}", widgets.cells(EVENT_COLUMNS, s, now))
                for s in data.streams
            ],
        )

    def _draw_tree(self, data: WorkflowDetail) -> None:
        tree: Tree[str] = self.query_one("#dbos-children", Tree)
        line = tree.cursor_line
        tree.clear()

        def label(row: Mapping[str, Any]) -> Text:
            return Text.assemble(
                cells.status(row["status"]),
                f" {fmt.one_line(row['workflow_id'], 40)} ",
                (fmt.one_line(row["name"] or "", 30), "dim"),
            )

        def add(parent: Any, node: Node) -> None:
            for child in node.children:
                item = parent.add(label(child.row), data=child.row["workflow_id"], expand=True)
                add(item, child)

        tree.root.set_label(label(data.tree.row))
        tree.root.data = data.tree.row["workflow_id"]
        add(tree.root, data.tree)
        tree.root.expand_all()
        n = sum(1 for _ in _walk(data.tree)) - 1
        tree.border_title = f"child workflows: {n}" + (
            " (more not shown)" if data.truncated else ""
        )
        tree.cursor_line = max(0, line)

    def _draw_timeline(self, data: WorkflowDetail) -> None:
        """Every step of the tree on one time axis: its start after the workflow's
        creation, its duration, its workflow (indented by depth) and a bar of its span."""
        # Epoch ms as DBOS writes them; SQLite keeps whatever a writer put there instead.
        created = data.workflow["created_at"]
        starts = [s["started_at_epoch_ms"] for s in data.timeline]
        origin = created if isinstance(created, int) else min(_ms(starts), default=0)
        ends = [s["completed_at_epoch_ms"] or s["started_at_epoch_ms"] for s in data.timeline]
        axis = Axis(
            origin,
            max([*_ms(ends), origin + 1]) - origin,
            {n.row["workflow_id"]: d for n, d in _walk_depth(data.tree)},
            {n.row["workflow_id"]: n.row["name"] or "" for n in _walk(data.tree)},
        )
        now = self.top.clock()
        rows = [
            (
                f"{s['workflow_id']}\x1f{s['function_id']}",
                widgets.cells(TIMELINE_COLUMNS, (s, axis), now),
            )
            for s in data.timeline
        ]
        t = self.query_one("#dbos-timeline", DataTable)
        more = " (more not shown)" if len(data.timeline) >= TIMELINE_STEPS else ""
        t.border_title = f"timeline: {len(data.timeline)} step(s) of the tree{more}"
        refill(t, rows)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        wf_id = event.node.data
        if wf_id and wf_id != self.record_id:
            self.top.push_screen(WorkflowDetailScreen(wf_id))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "dbos-timeline":
            wf_id = str(event.row_key.value).split("\x1f")[0]
            if wf_id != self.record_id:
                self.top.push_screen(WorkflowDetailScreen(wf_id))
            return
        if event.data_table.id != "dbos-steps" or self.detail is None:
            return
        step = next(
            (s for s in self.detail.steps if str(s["function_id"]) == event.row_key.value), None
        )
        if step and step["child_workflow_id"]:
            self.top.push_screen(WorkflowDetailScreen(step["child_workflow_id"]))


def _walk(node: Node) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)


def _walk_depth(node: Node, depth: int = 0) -> Any:
    yield node, depth
    for child in node.children:
        yield from _walk_depth(child, depth + 1)


BAR = 24
"""Characters of a timeline bar: the whole tree's time."""


def _bar(start: int | None, end: int | None, origin: int, span: int) -> str:
    """A step's span on the tree's time axis (``origin`` to ``origin + span`` ms)."""
    if start is None:
        return ""
    first = min(BAR - 1, max(0, (start - origin) * BAR // span))
    last = min(BAR, max(first + 1, ((end or start) - origin) * BAR // span))
    return " " * first + "█" * (last - first) + " " * (BAR - last)


class WorkflowDetailScreen(WorkflowActions, DetailScreen):
    BINDINGS = [*WORKFLOW_BINDINGS]

    def view(self) -> WorkflowView:
        view = WorkflowView(self.record_id)
        view.border_title = f"DBOS workflow {self.record_id}"
        return view

    def current_workflow(self) -> Mapping[str, Any] | None:
        detail = self.query_one(WorkflowView).detail
        return None if detail is None else detail.workflow


def _ms(values: list[Any]) -> list[int]:
    """The epoch-ms instants among ``values`` (no NULL, no text)."""
    return [v for v in values if isinstance(v, int)]
