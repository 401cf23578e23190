"""``qctl queues list`` on both backends: estimated counts are marked (``~N`` in tables,
``"estimated"`` in JSON and CSV) and ``--exact`` takes the exact read instead."""

from __future__ import annotations

import csv
import io
import uuid
from typing import Any

import psycopg
import pytest

from qctl_store import types
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import (
    DAGDep,
    DAGParams,
    DAGTask,
    Depths,
    DequeueParams,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.cli.conftest import Run, enqueue, out_json


@pytest.fixture
def estimating(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stores answer sources_depths as a huge table would: counts flagged as estimates
    (unless ``exact``)."""
    for cls in (PostgresStore, SqliteStore):
        real = cls.sources_depths

        def live(
            self: Any, sources: list[Source], exact: bool = False, real: Any = real
        ) -> dict[Source, tuple[dict[str, Depths], bool]]:
            out = real(self, sources, exact=True)
            return {s: (depths, not exact) for s, (depths, _) in out.items()}

        monkeypatch.setattr(cls, "sources_depths", live)


def _row(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (row,) = [r for r in rows if r["kind"] == kind]
    return row


def test_exact_counts_are_not_marked(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2)
    row = _row(out_json(run("queues", "list", "-s", "queue", "-o", "json")), kind)
    assert (row["pending"], row["estimated"]) == (2, False)
    table = run("queues", "list", "-s", "queue").stdout
    assert "~" not in table and kind in table


def test_estimated_counts_are_marked(run: Run, st: Any, kind: str, estimating: None) -> None:
    enqueue(st, kind, 2)
    row = _row(out_json(run("queues", "list", "-s", "queue", "-o", "json")), kind)
    assert (row["pending"], row["succeeded"], row["estimated"]) == (2, 0, True)
    (line,) = [ln for ln in run("queues", "list", "-s", "queue").stdout.splitlines() if kind in ln]
    assert line.count("~0") == 2  # succeeded and paused; live states stay plain
    csv_rows = list(csv.DictReader(io.StringIO(run("queues", "list", "-o", "csv").stdout)))
    assert _row(csv_rows, kind)["estimated"] == "true"
    exact = _row(out_json(run("queues", "list", "--exact", "-s", "queue", "-o", "json")), kind)
    assert (exact["pending"], exact["estimated"]) == (2, False)


def test_a_backlog_at_the_cap_is_marked(
    run: Run, st: Any, kind: str, estimating: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kind's pending count at the cap of live_depths may be the statistics': marked;
    one below it is exact: plain."""
    enqueue(st, kind, 2)
    monkeypatch.setattr(types, "LIVE_DEPTH_CAP", 2)
    (line,) = [ln for ln in run("queues", "list", "-s", "queue").stdout.splitlines() if kind in ln]
    assert line.split()[2:4] == ["~2", "0"], line  # pending marked, scheduled plain
    monkeypatch.setattr(types, "LIVE_DEPTH_CAP", 3)
    (line,) = [ln for ln in run("queues", "list", "-s", "queue").stdout.splitlines() if kind in ln]
    assert line.split()[2:4] == ["2", "0"], line


def test_list_shows_waiting_blocked_uncertain_and_held_jobs(run: Run, st: Any, kind: str) -> None:
    dag = DAGParams(
        name=f"dag_{kind}",
        tasks=[
            DAGTask(key="a", kind=kind),
            DAGTask(key="b", kind=kind),
            DAGTask(key="s", kind="$signal", signal_name="go"),
        ],
        deps=[DAGDep(task_key="b", depends_on_key="a")],
    )
    st.create_dag(dag)
    wf = WorkflowStartParams(id=uuid.uuid4(), name=f"wf_{kind}")
    st.start_workflow(wf)
    op = f"$op:{kind}@1"
    job_id = st.schedule_operation(ScheduleOperationParams(workflow_id=wf.id, kind=op))
    (leased,) = st.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=op, limit=1))
    st.mark_uncertain(job_id, leased.lease_token, "ambiguous")
    paused, _ = enqueue(st, kind, 2)
    st.pause_job(Source.QUEUE, paused)

    rows = out_json(run("queues", "list", "-o", "json"))
    dag_row = next(r for r in rows if r["source"] == "dag" and r["kind"] == kind)
    assert (dag_row["pending"], dag_row["blocked"], dag_row["status"]) == (1, 1, "")
    signal = next(r for r in rows if r["source"] == "dag" and r["kind"] == "$signal")
    assert signal["waiting"] >= 1
    assert _row([r for r in rows if r["source"] == "workflow"], op)["uncertain"] == 1
    queue = _row([r for r in rows if r["source"] == "queue"], kind)
    assert (queue["pending"], queue["paused"], queue["status"]) == (1, 1, "1 held")
    (line,) = [ln for ln in run("queues", "list", "-s", "queue").stdout.splitlines() if kind in ln]
    assert "1 held" in line and "paused" not in line
    header = run("queues", "list").stdout.splitlines()[0]
    assert all(w in header for w in ("WAITING", "BLOCKED", "UNCERTAIN", "STATUS"))


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_one_connection_and_one_depth_statement_on_postgres(
    run: Run, st: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL the system detection reads on the connection the store then takes
    over, and every source's depths come from one statement."""
    enqueue(st, kind)
    connects: list[str] = []
    statements: list[str] = []
    connect, execute = psycopg.Connection.connect.__func__, psycopg.Cursor.execute  # type: ignore[attr-defined]

    def counted_connect(cls: Any, *args: Any, **kwargs: Any) -> Any:
        connects.append(str(args[0]))
        return connect(cls, *args, **kwargs)

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        statements.append(str(query))
        return execute(self, query, *args, **kwargs)

    # Every connection, whatever its class (the store's know when they wait).
    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(counted_connect))
    monkeypatch.setattr(psycopg.Cursor, "execute", counted_execute)
    rows = out_json(run("queues", "list", "-o", "json"))
    assert _row(rows, kind)["pending"] == 1
    assert len(connects) == 1
    assert sum("COUNT(*)" in s for s in statements) == 1
