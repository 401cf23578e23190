"""Jobs: a keyset-paginated browser by source/kind/state, detail, and the job actions,
on the row under the cursor or on the marked rows (space; ``*`` for every match)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.errors import NoSuchName
from qctl.core.triage import ErrorGroup, ErrorGroups, literal
from qctl.core.verbs import Selection, Verb
from qctl.systems.azync.ops import jobs as ops_jobs
from qctl.systems.azync.ops.views import (
    Attempt,
    attempt_history,
    error_groups,
    free_text,
    require_kind,
    unindexed_read,
)
from qctl.systems.azync.order import newest_first
from qctl.systems.azync.tui.columns import JOB_KIND, JOB_SOURCE, job_columns
from qctl.tui import fmt
from qctl.tui.base import Dashboarded
from qctl.tui.panes import PAGE_BINDINGS, DetailScreen, MarkedPages, RecordView, StatePicked
from qctl.tui.triage import error_group_columns, groups_summary
from qctl.tui.widgets import Column, cells, flex, marked, refill, table
from qctl_kit.decode import elapsed
from qctl_kit.errors import InvalidInput
from qctl_kit.values import PageCursor
from qctl_store.types import Job, JobSearch, JobState, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

PAGE = 50
SOURCES: list[Source | None] = [None, *Source]

JOB_BINDINGS = [
    Binding("R", "job_retry", "Retry"),
    Binding("N", "job_run_now", "Run now"),
    Binding("P", "job_pause", "Pause"),
    Binding("U", "job_resume", "Resume"),
    Binding("A", "job_archive", "Archive"),
    Binding("D", "job_delete", "Delete"),
]


class JobActions(Dashboarded):
    """The job verbs (``qctl.systems.azync.ops.jobs.VERBS``), run by the verb engine as
    ``qctl jobs`` runs them (``top.act_verb``), on the job ``current_job`` names (list
    row or detail)."""

    def current_job(self) -> Job | None:
        raise NotImplementedError

    def chosen(self) -> tuple[Selection, list[str | None]] | None:
        """What the verbs act on and the states it was seen in (None: a filter of any
        state); None (said) when nothing is."""
        job = self.current_job()
        if job is None:
            self.top.notify("no job selected", severity="warning")
            return None
        return Selection.of_ids([str(job.id)]), [job.state]

    def marks_done(self) -> None:
        """After a run: the marks it acted on are cleared."""

    def _job_act(self, verb: Verb[Any]) -> None:
        chosen = self.chosen()
        if chosen is None:
            return
        selection, states = chosen
        if verb is ops_jobs.DELETE and None not in states:
            # The states on screen: a job that moved on meanwhile is not deleted.
            try:
                verb = ops_jobs.deleting([JobState(s) for s in states if s is not None])
            except InvalidInput as exc:
                self.top.notify(str(exc), severity="error")
                return
        self.top.act_verb(verb, selection, self.marks_done)

    def action_job_retry(self) -> None:
        self._job_act(ops_jobs.RETRY)

    def action_job_run_now(self) -> None:
        self._job_act(ops_jobs.RUN_NOW)

    def action_job_pause(self) -> None:
        self._job_act(ops_jobs.PAUSE)

    def action_job_resume(self) -> None:
        self._job_act(ops_jobs.RESUME)

    def action_job_archive(self) -> None:
        self._job_act(ops_jobs.ARCHIVE)

    def action_job_delete(self) -> None:
        self._job_act(ops_jobs.DELETE)


@dataclass
class JobPage:
    jobs: list[Job]
    count: int
    estimated: bool
    next_cursor: PageCursor | None
    asked: tuple[JobSearch, PageCursor | None]
    """The search and cursor this page answers: a page fetched before the operator
    changed them is stale and never shown (the load for the new ones is queued)."""
    scans: bool = False
    """No index holds this listing: on a huge table it read the whole job table."""
    notice: str = ""
    """Said once when shown: the filter names a kind no job has."""
    searched: JobSearch | None = None
    """The search the page was read with: the ``/`` word resolved (see ``free_text``)."""
    unknown: bool = False
    """The ``/`` word names no kind, and no job's kind, id or last error contains it."""
    groups: ErrorGroups | None = None
    """``g`` on dead jobs: the matching jobs grouped by their last error."""


def parse_search(source: Source | None, state: JobState | None, text: str) -> JobSearch:
    """``/`` filter text: a kind (or part of a kind, an id or the last error: see
    ``free_text``), plus ``key=value`` meta pairs and ``error:TEXT``."""
    search = JobSearch(source=source, state=state, reverse=newest_first(state))
    words = text.split()
    for i, word in enumerate(words):
        if word.startswith("error:"):
            search.error = " ".join([word[len("error:") :], *words[i + 1 :]]).strip()
            break
        if "=" in word:
            k, v = word.split("=", 1)
            search.meta[k] = v
        else:
            search.kind = word
    return search


def resolved(page: JobPage) -> str:
    """What the ``/`` word came to mean when it named no kind (shown beside it)."""
    asked, searched = page.asked[0], page.searched
    if searched is None or searched == asked:
        return ""
    if searched.kind:
        return f" (kind {searched.kind})"
    if page.unknown:
        return " (no such kind, and no kind, id or last error contains it)"
    return f" (kind, id or error contains {searched.text!r})"


def scans_warning(state: JobState | None) -> tuple[tuple[str, str], ...]:
    """The jobs bar's warning that no index holds the listing, and what it reads."""
    return (("   no index", "dim"), (f": reads {unindexed_read(state)}", "yellow"))


def job_when(job: Job, now: datetime) -> str:
    if job.state in (JobState.SCHEDULED, JobState.PAUSED) and job.run_at:
        return fmt.ago(job.run_at, now)
    if job.state == JobState.ACTIVE and job.lease_until:
        return "lease " + fmt.ago(job.lease_until, now)
    if job.completed_at:
        return fmt.ago(job.completed_at, now)
    if job.state == JobState.DEAD:
        return fmt.ago(ops_jobs.died_at(job), now)
    return fmt.ago(job.enqueued_at, now)


JOB_WHEN: Column[Job] = Column(
    "when",
    "run at (scheduled, paused), lease expiry (active), completed, died (dead), else enqueued",
    lambda j: j,
    time=job_when,
)
JOB_COLUMNS = job_columns(
    Column("id", "the job's id (short; ● marked)", lambda j: fmt.short_id(j.id)),
    JOB_SOURCE,
    JOB_KIND,
    tail=(JOB_WHEN,),
)
ERROR_GROUP_COLUMNS = error_group_columns("dead jobs", "kinds")
"""The grouped view of dead jobs (``g``): one row per distinct last error."""
ATTEMPT_COLUMNS: tuple[Column[Attempt], ...] = (
    Column("lifetime", "attempts since a retry started them again", lambda a: a.lifetime),
    Column("attempt", "the attempt's number in its lifetime", lambda a: a.attempt),
    Column("at", "when it failed", lambda a: a.at, time="when"),
    flex("error", "its error", lambda a: a.error),
)
"""A job's attempts, on its detail screen."""


class JobsPane(JobActions, StatePicked, MarkedPages[JobPage]):
    BINDINGS = [
        Binding("s", "cycle_source", "Source"),
        StatePicked.STATE_BINDING,
        Binding("g", "group_errors", "Group errors"),
        *PAGE_BINDINGS,
        *JOB_BINDINGS,
    ]
    filter_hint = "kind, id or error text [key=value ...] [error:text]"
    source: Source | None = None
    state: JobState | None = None
    """Every state at first, as every system's Jobs tab opens (``first_state``)."""
    opened = False
    """Whether the tab has read once (``first_state``)."""
    states = tuple(JobState)
    state_type = JobState
    page: JobPage | None = None
    table_id = "jobs-table"
    grouped = False
    """``g``: dead jobs shown grouped by their last error (see ``grouping``)."""
    shown_groups: tuple[ErrorGroup, ...] = ()
    """The groups on screen, by row."""
    tables = (
        ("Jobs", JOB_COLUMNS),
        ("Grouped (g)", ERROR_GROUP_COLUMNS),
        ("Job detail, attempts", ATTEMPT_COLUMNS),
    )

    def compose(self) -> ComposeResult:
        yield Static(id="jobs-filter", classes="bar")
        yield from self.compose_filter()
        yield table("jobs-table", *JOB_COLUMNS)
        groups = table("error-groups", *ERROR_GROUP_COLUMNS)
        groups.display = False
        yield groups

    @property
    def grouping(self) -> bool:
        """Whether the grouped view is on screen: ``g`` pressed, dead jobs listed."""
        return self.grouped and self.state == JobState.DEAD

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Off the dead jobs, g is the app's jump again.
        if action == "group_errors":
            return self.state == JobState.DEAD
        return super().check_action(action, parameters)

    def action_group_errors(self) -> None:
        self.grouped = not self.grouped
        self.reload()

    def search(self) -> JobSearch:
        return parse_search(self.source, self.state, self.filter_text)

    def open_with(self, source: Source | None, kind: str, state: JobState | None) -> None:
        self.source, self.state, self.filter_text = source, state, kind
        self.restart()

    def page_rows(self) -> list[Job]:
        return self.page.jobs if self.page else []

    def row_key(self, row: Job) -> uuid.UUID:
        return row.id

    def filter_changed(self) -> None:
        self.restart()

    def asked(self) -> tuple[JobSearch, PageCursor | None]:
        return self.search(), self.cursors[-1]

    @property
    def current(self) -> bool:
        """Whether the page on screen answers the search and cursor now asked for."""
        return self.page is not None and self.page.asked == self.asked()

    def first_state(self, store: ConsoleStore) -> None:
        """On the tab's first read, pending jobs rather than every state where no index
        holds every state's order on a huge table (each refresh would read and sort all
        of it; ``t`` gets there anyway)."""
        if not self.opened:
            self.opened = True
            if self.state is None and store.listing_scans(None):
                self.state = JobState.PENDING

    def fetch(self, store: ConsoleStore) -> JobPage:
        self.first_state(store)
        asked = self.asked()
        search, after = asked
        scans = store.listing_scans(search.state)
        jobs = store.search_jobs(search, limit=PAGE, after=after)
        notice, unknown = "", False
        if not jobs and search.kind:
            # Not a kind any job has: a kind it is part of, else last-error text.
            word, (meant, notice) = search.kind, free_text(store, search)
            if meant != search:
                search, jobs = meant, store.search_jobs(meant, limit=PAGE, after=after)
            if not jobs and not notice:
                sources = [search.source] if search.source else list(Source)
                try:
                    require_kind(store, word, sources)
                except NoSuchName as exc:
                    notice = f"{exc}, and no job's kind, id or last error contains it"
                    unknown = True
        count, estimated = store.count_jobs(search)
        nxt = store.job_cursor(jobs[-1], search.state) if len(jobs) == PAGE else None
        groups = error_groups(store, search) if self.grouping else None
        return JobPage(jobs, count, estimated, nxt, asked, scans, notice, search, unknown, groups)

    def show(self, data: JobPage) -> None:
        if data.asked != self.asked():
            return
        if data.notice and (self.page is None or self.page.asked != data.asked):
            self.top.notify(data.notice, severity="warning")
        self.page = data
        now = self.top.clock()
        rows = [(str(j.id), self._cells(j, now)) for j in data.jobs]
        jobs_table = self.query_one("#jobs-table", DataTable)
        refill(jobs_table, rows)
        self._show_groups(data.groups)
        first = (len(self.cursors) - 1) * PAGE
        shown = f"{first + 1}-{first + len(data.jobs)}" if data.jobs else "0"
        about = "≈" if data.estimated else ""
        self.query_one("#jobs-filter", Static).update(
            Text.assemble(
                ("source ", "dim"),
                (self.source.value if self.source else "all", "bold"),
                ("  state ", "dim"),
                (self.state.value if self.state else "all", "bold"),
                ("  filter ", "dim"),
                (self.filter_text or "-", "bold"),
                (resolved(data), "italic"),
                ("   shown ", "dim"),
                f"{shown} of {about}{data.count}",
                ("   page ", "dim"),
                str(len(self.cursors)),
                *(scans_warning(data.asked[0].state) if data.scans else ()),
                *self._marks_text(data),
                *self._groups_text(data.groups),
            )
        )

    def _show_groups(self, groups: ErrorGroups | None) -> None:
        """The grouped view instead of the jobs while ``g`` is on (enter: its jobs)."""
        groups_table = self.query_one("#error-groups", DataTable)
        jobs_table = self.query_one("#jobs-table", DataTable)
        on = groups is not None and self.grouping
        if on and groups is not None:
            now = self.top.clock()
            self.shown_groups = tuple(groups.groups)
            refill(
                groups_table,
                [(str(i), cells(ERROR_GROUP_COLUMNS, g, now)) for i, g in enumerate(groups.groups)],
            )
        if groups_table.display != on:
            focused = self.screen.focused in (groups_table, jobs_table)
            groups_table.display, jobs_table.display = on, not on
            if focused:
                (groups_table if on else jobs_table).focus()

    @staticmethod
    def _groups_text(groups: ErrorGroups | None) -> tuple[tuple[str, str] | str, ...]:
        if groups is None:
            return ()
        return ("   grouped by error ", "dim"), groups_summary(groups)

    def _cells(self, job: Job, now: datetime) -> list[Any]:
        row = cells(JOB_COLUMNS, job, now)
        if self.is_marked(job):
            row[0] = marked(row[0])
        return row

    def _marks_text(self, data: JobPage) -> tuple[tuple[str, str], ...]:
        if self.all_marked:
            count = f"   all {'≈' if data.estimated else ''}{data.count} matching"
        elif self.marked:
            count = f"   {len(self.marked)}"
        else:
            return ()
        return (count, "bold magenta"), (" marked", "dim")

    def chosen(self) -> tuple[Selection, list[str | None]] | None:
        """The marked jobs when there are any (``*``: every job the filter matches, as
        the page was read), else the row under the cursor."""
        if self.all_marked:
            search = (self.page.searched if self.page else None) or self.search()
            return Selection(filter=ops_jobs.job_filter(search)), [search.state]
        if self.marked:
            jobs = list(self.marked.values())
            return Selection.of_ids([str(j.id) for j in jobs], by="marks"), [j.state for j in jobs]
        return super().chosen()

    def marks_done(self) -> None:
        self.clear_marks()

    def current_job(self) -> Job | None:
        job: Job | None = self.current_row()
        return job

    def action_cycle_source(self) -> None:
        self.source = SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)]
        self.restart()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id == "error-groups":
            # The group's jobs, listed again as jobs: the filter's kind and meta words
            # kept, the longest part of the group's error that its fingerprint keeps as
            # its error text (a substring the whole group has, on one line).
            group = self.shown_groups[int(str(event.row_key.value))]
            first = literal(group.sample)
            words = self.filter_text.split("error:", 1)[0].strip()
            self.grouped, self.filter_text = False, f"{words} error:{first}".strip()
            self.restart()
            return
        self.top.push_screen(JobDetailScreen(uuid.UUID(str(event.row_key.value))))


@dataclass
class JobDetail:
    job: Job
    attempts: list[Attempt] = field(default_factory=list)


def job_text(job: Job, now: datetime, payload: bool) -> Text:
    t = Text()

    def line(label: str, value: object, style: str = "") -> None:
        if value in (None, "", {}):
            return
        t.append(f"{label:>14} ", "bold")
        t.append(f"{fmt.safe(str(value))}\n", style)

    line("id", job.id)
    line("source/kind", f"{job.source.value} / {job.kind}")
    line("state", job.state.value, fmt.state_style(job.state))
    line("attempt", f"{job.attempt} of {job.max_attempts}, reaped {job.reap_count}")
    line("last error", job.last_error, "red")
    # azync's meta maps strings to strings; another writer's JSON values as JSON.
    meta = {k: v if isinstance(v, str) else fmt.json_text(v) for k, v in job.meta.items()}
    line("meta", ", ".join(f"{k}={v}" for k, v in sorted(meta.items())))
    line("idempotency", job.idempotency_key)
    line("dag", f"{job.dag_id} task {job.task_key}" if job.dag_id else "")
    line("event", job.event_id)
    line("workflow run", job.run_id)
    line("signal", job.signal_name)
    line("compensation", job.compensation_kind)
    for label, at in [
        ("enqueued", job.enqueued_at),
        ("run at", job.run_at),
        ("started", job.started_at),
        ("lease until", job.lease_until),
        ("deadline", job.deadline_at),
        ("failed", job.failed_at),
        ("completed", job.completed_at),
    ]:
        if at is not None:
            line(label, fmt.full(at, now))
    queued_for = elapsed(job.enqueued_at, job.started_at)
    if queued_for is not None:
        line("queued for", fmt.duration(queued_for))
    ran_for = elapsed(job.started_at, job.completed_at or job.failed_at)
    if ran_for is not None:
        line("ran for", fmt.duration(ran_for))
    if job.result is not None:
        line("result", fmt.json_text(job.result, 400))
    if payload:
        line("payload", fmt.json_text(job.payload))
    else:
        line("payload", "hidden (press v to show)", "dim")
    return t


class JobView(RecordView[JobDetail]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="job-text")
            yield table("attempts", *ATTEMPT_COLUMNS)

    def fetch(self, store: ConsoleStore) -> JobDetail:
        job = store.find_job(self.record_id)
        return JobDetail(job, attempt_history(store.job_attempts(job.source, job.id)))

    def render_detail(self) -> None:
        if self.detail is None:
            return
        now = self.top.clock()
        self.query_one("#job-text", Static).update(job_text(self.detail.job, now, self.payload))
        rows = [
            # Keyed by position: a retried job repeats attempt numbers.
            (str(i), cells(ATTEMPT_COLUMNS, a, now))
            for i, a in enumerate(self.detail.attempts)
        ]
        refill(self.query_one("#attempts", DataTable), rows)


class JobDetailScreen(JobActions, DetailScreen):
    BINDINGS = [Binding("v", "toggle_payload", "Payload"), *JOB_BINDINGS]

    def view(self) -> JobView:
        view = JobView(self.record_id)
        view.border_title = f"job {self.record_id}"
        return view

    def current_job(self) -> Job | None:
        detail = self.query_one(JobView).detail
        return None if detail is None else detail.job
