"""The Queues and Jobs tabs and the job detail of a system whose jobs have integer ids and
wait in named queues, and whose operator verbs are retry, cancel and delete of jobs and
pause and resume of queues (River, Oban). The behaviour is here once; a system's
subclasses declare their columns and name their reads, verbs and words.

What a subclass names (``reads``, ``verbs``): its module of reads, with ``list_jobs(db,
states, limit=, **contains)`` (a keyword per ``contains_columns``: the JSON object that
column must contain), ``get_job(db, id)`` and ``attempt_errors(job)`` (dicts of ``attempt``,
``at``, ``error``), and its module of verbs, with ``RETRY``, ``CANCEL``, ``DELETE``,
``PAUSE`` and ``RESUME``."""

from __future__ import annotations

from types import ModuleType
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from qctl.core.sqldb import row_record
from qctl.core.verbs import Selection, Verb
from qctl.tui import fmt
from qctl.tui.panes import (
    MARK_BINDINGS,
    ContainsFiltered,
    DetailScreen,
    ListPane,
    RecordView,
    StatePicked,
)
from qctl.tui.widgets import flex, refill, table

PAGE = 200
"""Rows the Jobs tab reads per refresh (newest first)."""

JOB_BINDINGS = [
    Binding("R", "job_retry", "Retry"),
    Binding("C", "job_cancel", "Cancel"),
    Binding("X", "job_delete", "Delete"),
]


class JobActions:
    """``R``, ``C``, ``X``: retry, cancel or delete the jobs at hand (``act_on``)."""

    verbs: ClassVar[ModuleType]
    """The system's module of verbs."""

    def act_on(self, verb: Verb[Any], what: str) -> None:
        raise NotImplementedError

    def action_job_retry(self) -> None:
        self.act_on(self.verbs.RETRY, "job")

    def action_job_cancel(self) -> None:
        self.act_on(self.verbs.CANCEL, "job")

    def action_job_delete(self) -> None:
        self.act_on(self.verbs.DELETE, "job")


class QueuesTab(ListPane):
    """The queues, one row each (``row.queue``): enter shows the queue's jobs on the Jobs
    tab; ``P``, ``U`` pause and resume the marked queues or the one under the cursor."""

    BINDINGS = [
        Binding("P", "queue_pause", "Pause"),
        Binding("U", "queue_resume", "Resume"),
        *MARK_BINDINGS,
    ]
    filter_hint = "filter queue name (substring)"
    verbs: ClassVar[ModuleType]

    def row_key(self, row: Any) -> str:
        return str(row.queue)

    def words(self, row: Any) -> tuple[str, ...]:
        return (row.queue,)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.screen.action_show_tab("jobs")  # type: ignore[attr-defined]
        self.screen.query_one(JobsTab).open_with(str(event.row_key.value))

    def action_queue_pause(self) -> None:
        self.act_on(self.verbs.PAUSE, "queue")

    def action_queue_resume(self) -> None:
        self.act_on(self.verbs.RESUME, "queue")


class JobsTab(ContainsFiltered, StatePicked, ListPane, JobActions):
    """The newest jobs (``PAGE``, in the order ``list_jobs`` reads them: River's finalized
    states newest finalized first), in the state picked, those whose JSON columns
    contain the ``/`` filter's ``COLUMN.KEY=VALUE`` words; enter opens a job's detail."""

    BINDINGS = [StatePicked.STATE_BINDING, *JOB_BINDINGS, *MARK_BINDINGS]
    reads: ClassVar[ModuleType]
    detail: ClassVar[type[JobDetail]]
    kind: ClassVar[str] = "kind"
    """The job's field that names what runs it (River's kind, Oban's worker): the ``/``
    filter's words are a state, a queue and that."""

    def fetch(self, db: Any) -> list[Any]:
        return list(self.reads.list_jobs(db, self.picked(), limit=PAGE, **self.contains))

    def row_key(self, row: Any) -> str:
        return str(row.id)

    def words(self, row: Any) -> tuple[str, ...]:
        return (row.state, row.queue, getattr(row, self.kind))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(self.detail(int(str(event.row_key.value))))


class JobView(RecordView[Any]):
    """Every column of a job, its JSON columns (``decoded``) decoded, then its failed
    attempts."""

    reads: ClassVar[ModuleType]
    decoded: ClassVar[frozenset[str]]
    prefix: ClassVar[str]
    """Of its widgets' ids: ``PREFIX-text``, ``PREFIX-errors``."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id=f"{self.prefix}-text")
            yield table(f"{self.prefix}-errors", "attempt", "at", flex("error"))

    def fetch(self, db: Any) -> Any:
        return self.reads.get_job(db, int(self.record_id))

    def render_detail(self) -> None:
        if self.detail is None:
            return
        job = self.detail
        record: dict[str, Any] = row_record(job)
        record.pop("errors")  # the table below
        lines = fmt.record_lines(record, json_keys=tuple(self.decoded))
        self.query_one(f"#{self.prefix}-text", Static).update(Text("\n".join(lines)))
        refill(
            self.query_one(f"#{self.prefix}-errors", DataTable),
            [
                (str(i), [fmt.any_text(e.get(k)) for k in ("attempt", "at", "error")])
                for i, e in enumerate(self.reads.attempt_errors(job))
            ],
        )


class JobDetail(JobActions, DetailScreen):
    """One job (``view_type``), titled ``label job ID``; ``R``, ``C``, ``X`` act on it."""

    BINDINGS = [*JOB_BINDINGS]
    label: ClassVar[str]
    view_type: ClassVar[type[JobView]]

    def view(self) -> JobView:
        view = self.view_type(self.record_id)
        view.border_title = f"{self.label} job {self.record_id}"
        return view

    def act_on(self, verb: Verb[Any], what: str) -> None:
        self.top.act_verb(verb, Selection.of_ids([str(self.record_id)]))
