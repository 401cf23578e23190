"""Columns that several of azync's tables share: a job's (the jobs list, a DAG run's
tasks, an event's deliveries, the leases, a workflow's jobs) and a DAG name's runs (the
overview and the DAGs tab)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from qctl.tui import fmt
from qctl.tui.widgets import Column, flex
from qctl_store.types import DAG_TERMINAL_STATES, DAGState, Job

JOB_SOURCE: Column[Job] = Column(
    "source", "queue, event, dag or workflow", lambda j: j.source.value, drop=1
)
"""Hidden first where a table is too wide: the kind mostly says it, and the error needs
the room."""
JOB_KIND = flex("kind", "the job kind", lambda j: j.kind, middle=True)
JOB_STATE: Column[Job] = Column("state", "the job's state", lambda j: fmt.state_text(j.state))
JOB_ATTEMPT: Column[Job] = Column(
    "attempt", "attempts used / allowed", lambda j: f"{j.attempt}/{j.max_attempts}"
)
JOB_ERROR = flex("error", "the last error", lambda j: j.last_error)
"""Whole: the column is flexible and cuts it to the width it has."""


def job_columns(*lead: Column[Job], tail: Sequence[Column[Job]] = ()) -> tuple[Column[Job], ...]:
    """A table of jobs: ``lead``, their state and attempt, ``tail``, their last error."""
    return (*lead, JOB_STATE, JOB_ATTEMPT, *tail, JOB_ERROR)


DagCounts = tuple[str, dict[DAGState, int]]
"""A DAG name and its runs by state."""


def split_counts(counts: dict[DAGState, int]) -> tuple[Text, Text]:
    """A name's run counts as (live states, terminal states) summaries."""
    live = {s: n for s, n in counts.items() if s not in DAG_TERMINAL_STATES}
    done = {s: n for s, n in counts.items() if s in DAG_TERMINAL_STATES}
    return fmt.counts_summary(live), fmt.counts_summary(done)


DAG_COUNT_COLUMNS: tuple[Column[DagCounts], ...] = (
    flex("live", "its runs still going, by state", lambda r: split_counts(r[1])[0]),
    flex("done", "its finished runs, by state", lambda r: split_counts(r[1])[1]),
)
