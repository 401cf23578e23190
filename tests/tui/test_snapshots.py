"""Text snapshots of the main screens at 120x36 with fixed data and a fixed clock.

The snapshots are the plain text an operator reads (colours aside), in
``tests/tui/snapshots/``. After an intended change of the screens, regenerate them with
``QCTL_UPDATE_SNAPSHOTS=1 pytest tests/tui/test_snapshots.py`` and review the diff.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qctl.cli.context import CliContext
from qctl.systems.azync.tui import (
    DagGraphScreen,
    EventDetailScreen,
    JobDetailScreen,
    WorkflowDetailScreen,
)
from qctl.tui.app import QctlTop
from qctl_kit import errors
from qctl_kit.throughput import ThroughputCount
from qctl_store.types import (
    AttemptError,
    DAGDep,
    DAGState,
    DAGView,
    DailyCount,
    Depths,
    EventAdminRow,
    HistoryEvent,
    Job,
    JobState,
    OnFailurePolicy,
    OpsStats,
    Source,
    Subscriber,
    SubscriberView,
    WorkflowExecutionView,
    WorkflowState,
)
from tests.tui.helpers import screen_text, until

SNAPSHOTS = Path(__file__).parent / "snapshots"
NOW = datetime(2026, 3, 14, 15, 9, 26, tzinfo=UTC)
DAG_ID = uuid.UUID("da6e71a0-0000-4000-8000-000000000da6")


def uid(n: int) -> uuid.UUID:
    return uuid.UUID(int=(n * 0x9E3779B1 << 96) % (1 << 128) | n)


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def job(n: int, kind: str, state: JobState, **kw: Any) -> Job:
    kw.setdefault("source", Source.QUEUE)
    kw.setdefault("enqueued_at", ago(600 - n))
    return Job(id=uid(n), kind=kind, state=state, max_attempts=5, **kw)


JOBS = [
    job(1, "email.send", JobState.PENDING, meta={"tenant": "acme"}),
    job(2, "email.send", JobState.ACTIVE, attempt=1, lease_until=NOW + timedelta(seconds=12)),
    job(
        3,
        "billing.charge",
        JobState.DEAD,
        attempt=5,
        last_error="card declined",
        payload={"amount": 42},
        started_at=ago(100),
        failed_at=ago(99),
    ),
    job(4, "report.generate", JobState.SCHEDULED, run_at=NOW + timedelta(minutes=5)),
    job(
        5,
        "$op:charge@1",
        JobState.UNCERTAIN,
        source=Source.WORKFLOW,
        run_id=uid(77),
        attempt=1,
        last_error="charge timed out: outcome unknown",
        failed_at=ago(60),
    ),
    job(6, "$wf:checkout", JobState.SUCCEEDED, source=Source.WORKFLOW, run_id=uid(77)),
    job(7, "fulfillment", JobState.DEAD, source=Source.EVENT, event_id=uid(99), attempt=5),
]
TASKS = [
    job(10 + i, k, s, source=Source.DAG, dag_id=DAG_ID, task_key=key)
    for i, (key, k, s) in enumerate(
        [
            ("extract", "etl.extract", JobState.SUCCEEDED),
            ("transform_0", "etl.transform", JobState.SUCCEEDED),
            ("transform_1", "etl.transform", JobState.DEAD),
            ("transform_2", "etl.transform", JobState.SUCCEEDED),
            ("load", "etl.load", JobState.CANCELLED),
            ("comp:extract", "etl.cleanup", JobState.PENDING),
        ]
    )
]
DEPS = [DAGDep(f"transform_{i}", "extract") for i in range(3)] + [
    DAGDep("load", f"transform_{i}") for i in range(3)
]


class FixedStore:
    """The read surface the dashboard uses, answering fixed rows."""

    def live_depths(self, source: Source) -> tuple[dict[str, Depths], bool]:
        """The queue source answers as a huge table would: terminal counts estimated."""
        if source == Source.QUEUE:
            return {
                "email.send": Depths(120, 4, 2, 0, 0, 9000, timedelta(seconds=75)),
                "billing.charge": Depths(3, 0, 1, 17, 1, 800, timedelta(minutes=12)),
                "report.generate": Depths(0, 12, 0, 0, 0, 40),
            }, True
        if source == Source.EVENT:
            return {"audit.log": Depths(5, 0, 0, 0, 0, 310, timedelta(seconds=2))}, False
        return {}, False

    def sources_depths(self, sources: list[Source]) -> dict[Source, tuple[dict[str, Depths], bool]]:
        return {s: self.live_depths(s) for s in sources}

    def all_daily(self, source: Source) -> list[DailyCount]:
        if source != Source.QUEUE:
            return []
        return [
            DailyCount(datetime(2026, 3, d, tzinfo=UTC), 100 * d, 90 * d, d, d % 3)
            for d in range(1, 15)
        ]

    def throughput(
        self, source: Source, window: timedelta, bucket: timedelta, kind: str = ""
    ) -> list[ThroughputCount]:
        if source != Source.QUEUE:
            return []
        start = NOW.replace(second=0) - window + bucket
        return [
            ThroughputCount(k, start + i * bucket, processed=(i * n) % 7, failed=int(i == 50))
            for k, n in (("email.send", 3), ("billing.charge", 1))
            for i in range(int(window / bucket))
        ]

    def dag_name_state_counts(self) -> dict[str, dict[DAGState, int]]:
        return {
            "etl.nightly": {DAGState.RUNNING: 2, DAGState.SUCCEEDED: 40, DAGState.FAILED: 1},
            "order.saga": {DAGState.COMPENSATING: 1, DAGState.SUSPENDED: 2},
        }

    def ops_stats(self) -> OpsStats:
        return OpsStats(undispatched=3, total_24h=1234, types_24h=3, subscribers=4)

    def search_jobs(
        self, search: Any, limit: int = 50, after: Any = None, payload: bool = True
    ) -> list[Job]:
        return [
            j
            for j in JOBS
            if search.state in (None, j.state)
            and search.run_id in (None, j.run_id)
            and search.event_id in (None, j.event_id)
        ][:limit]

    def count_jobs(self, search: Any, exact: bool = False) -> tuple[int, bool]:
        return len(self.search_jobs(search)), False

    def job_cursor(self, job: Job, state: Any) -> None:
        return None

    def listing_scans(self, state: Any) -> bool:
        return False

    def find_job(self, id: uuid.UUID) -> Job:
        for j in JOBS + TASKS:
            if j.id == id:
                return j
        raise errors.NotFound("FindJob")

    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        return [AttemptError(i, f"card declined (try {i})", ago(500 - 60 * i)) for i in (1, 2)]

    def _dag(self) -> DAGView:
        return DAGView(
            DAG_ID,
            "etl.nightly",
            DAGState.COMPENSATING,
            OnFailurePolicy.CANCEL,
            failure_reason="dead tasks: transform_1",
            created_at=ago(900),
        )

    def list_dags(self, f: Any, offset: int = 0, limit: int = 0) -> tuple[list[DAGView], int]:
        return [self._dag()], 1

    def dag_task_counts(self, ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[JobState, int]]:
        return {DAG_ID: {JobState.SUCCEEDED: 3, JobState.DEAD: 1, JobState.CANCELLED: 1}}

    def get_dag(self, id: uuid.UUID) -> DAGView:
        return self._dag()

    def dag_tasks(self, id: uuid.UUID) -> list[Job]:
        return TASKS

    def dag_deps(self, id: uuid.UUID) -> list[DAGDep]:
        return DEPS

    def get_event(self, id: uuid.UUID) -> EventAdminRow:
        return EventAdminRow(
            uid(99), "order.placed", "order", "o-17", 2, ago(30), ago(29), {}, {"total": 9}, 2
        )

    def list_events(self, f: Any, offset: int = 0, limit: int = 0) -> tuple[list[Any], int]:
        return [self.get_event(uid(99))], 1

    def list_subscriber_views(self, event_type: str = "") -> list[SubscriberView]:
        return [SubscriberView("order.placed", "fulfillment", 5, ago(86400), ago(3600))]

    def subscribers(self, event_type: str) -> list[Subscriber]:
        return [Subscriber("fulfillment", event_type)]

    def list_workflow_executions(
        self, f: Any, offset: int = 0, limit: int = 0
    ) -> tuple[list[WorkflowExecutionView], int]:
        return [self.get_workflow_execution(uid(77))], 1

    def get_workflow_execution(self, id: uuid.UUID) -> WorkflowExecutionView:
        return WorkflowExecutionView(
            uid(77),
            "checkout",
            "1",
            WorkflowState.SUSPENDED,
            failure_reason="charge timed out",
            created_at=ago(120),
        )

    def list_history(self, id: uuid.UUID) -> list[HistoryEvent]:
        return [HistoryEvent(id, 1, "WorkflowStarted", {"cart": "c1"}, ago(120))]


def check(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("QCTL_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text + "\n")
        if os.environ.get("QCTL_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"snapshot {path} was missing and has been written; review it")
    assert text + "\n" == path.read_text(), f"screen differs from {path}"


async def snap(
    name: str, keys: list[str], marker: str, screen: Any = None, read_only: bool = False
) -> None:
    where = CliContext(dsn="snapshot.db", read_only=read_only).describe()
    app = QctlTop(FixedStore(), location=where, live=False, clock=lambda: NOW, read_only=read_only)
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        for key in keys:
            await pilot.press(key)
        if screen is not None:
            await app.push_screen(screen)
        # the data and the footer (it lands a frame later) are both on screen
        await until(pilot, lambda: marker in screen_text(app) and "? Help" in screen_text(app))
        await pilot.pause(0.3)  # let every loader of the screen land
        check(name, screen_text(app))


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ages are computed from the app clock; ``fmt`` defaults use the real one."""
    import qctl.tui.fmt as fmt

    real_ago, real_when = fmt.ago, fmt.when
    monkeypatch.setattr(fmt, "ago", lambda at, now=None: real_ago(at, NOW))
    monkeypatch.setattr(fmt, "when", lambda at, now=None: real_when(at, NOW))


async def test_overview_snapshot() -> None:
    await snap("overview", [], "billing.charge")


DEAD_STATE = ["t", "d", "enter"]
"""From the Jobs tab's first state (all) to dead, by the state picker."""


async def test_jobs_snapshot() -> None:
    await snap("jobs", ["2", *DEAD_STATE], "card declined")


async def test_jobs_read_only_snapshot() -> None:
    await snap("jobs_read_only", ["2", *DEAD_STATE], "card declined", read_only=True)


async def test_job_detail_snapshot() -> None:
    await snap("job_detail", [], "try 2", screen=JobDetailScreen(uid(3)))


async def test_dags_snapshot() -> None:
    await snap("dags", ["3"], "dead tasks")


async def test_dag_graph_snapshot() -> None:
    await snap("dag_graph", [], "comp:extract", screen=DagGraphScreen(DAG_ID))


async def test_events_snapshot() -> None:
    await snap("events", ["4"], "fulfillment")


async def test_workflows_snapshot() -> None:
    await snap("workflows", ["5"], "checkout")


async def test_event_detail_snapshot() -> None:
    await snap("event_detail", [], "fulfillment  dead", screen=EventDetailScreen(uid(99)))


async def test_workflow_detail_snapshot() -> None:
    await snap("workflow_detail", [], "$op:charge@1", screen=WorkflowDetailScreen(uid(77)))
