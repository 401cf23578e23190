"""The demo workload (qctl.systems.azync.demo) and ``qctl demo --no-tui``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from qctl.systems.azync.demo import Demo, approval_dag, dag_kinds, etl_dag, saga_dag
from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.types import (
    KIND_SLEEP,
    DAGFilter,
    DAGState,
    EnqueueParams,
    JobSearch,
    JobState,
    Source,
)

pytestmark = pytest.mark.timeout(180)

QCTL = Path(sys.executable).parent / "qctl"


def test_dag_shapes_have_fan_out_fan_in_signal_sleep_and_compensation() -> None:
    etl = etl_dag(4)
    assert sum(d.depends_on_key == "extract" for d in etl.deps) == 4
    assert sum(d.task_key == "load" for d in etl.deps) == 4
    kinds = {t.kind for t in approval_dag().tasks}
    assert {"$signal", "$sleep"} <= kinds
    assert all(t.compensation_kind for t in saga_dag(False).tasks[:2])
    assert "$sleep" not in dag_kinds() and "saga.refund" in dag_kinds()


def test_workload_runs_bounded_and_stops(store: Any) -> None:
    demo = Demo(store, speed=4.0, duration=6.0, seed=7).start()
    demo.wait()
    assert not any(t.is_alive() for t in demo._threads)
    s = demo.summary()
    for key in ("jobs.enqueued", "jobs.acked", "jobs.retried", "events.published"):
        assert s.get(key, 0) > 0, (key, s)
    assert any(k.startswith("dags.created") for k in s), s
    assert s.get("workflows.started", 0) > 0, s
    depths = store.kind_depths(Source.QUEUE)
    assert depths["legacy.sync"].dead > 0  # a kind that piles up dead jobs
    assert store.list_kinds(Source.DAG)
    assert store.dag_name_state_counts()
    # the demo's writes are visible through the console's own reads
    assert store.count_jobs(type_search(JobState.DEAD))[0] > 0


def test_approval_flow_completes(store: Any) -> None:
    """The demo maintains with ``qctl maintain``'s pass: ``$sleep`` tasks are settled by
    complete_due_sleeps, never promoted to pending where nothing would complete them
    (before, every approval.flow run stayed running forever)."""
    demo = Demo(store, speed=4.0, duration=16.0, seed=3).start()
    demo.wait()
    done, _ = store.list_dags(DAGFilter(name="approval.flow", state=DAGState.SUCCEEDED), 0, 5)
    assert done, store.dag_name_state_counts().get("approval.flow")
    stuck = store.search_jobs(JobSearch(source=Source.DAG, kind=KIND_SLEEP, state=JobState.PENDING))
    assert stuck == []
    assert demo.summary().get("maint.complete_due_sleeps", 0) > 0


def type_search(state: JobState) -> Any:
    from qctl_store.types import JobSearch

    return JobSearch(state=state)


def test_stop_event_ends_an_unbounded_run(store: Any) -> None:
    demo = Demo(store, speed=2.0, seed=1).start()
    time.sleep(1.0)
    demo.stop()
    demo.join()
    assert not any(t.is_alive() for t in demo._threads)


def run_qctl(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "cfg"))
    env.pop("QCTL_DSN", None)
    return subprocess.run(
        [str(QCTL), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_cli_demo_headless_on_the_embedded_demo_database(tmp_path: Path) -> None:
    r = run_qctl(["demo", "--no-tui", "--duration", "3s", "--speed", "3", "--seed", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["jobs.enqueued"] > 0
    assert (tmp_path / "data" / "qctl" / "demo.db").exists()
    assert "demo.db" in r.stderr


def test_cli_demo_on_a_shared_postgres_database_runs_in_its_own_schema(
    tmp_path: Path, fresh_pg_database: str
) -> None:
    """``qctl demo --dsn`` needs nothing else: on a database that already holds azync's
    tables in public and DBOS's (detection would find both), the demo's --system
    (azync by default) decides; it creates, migrates and maintains azync_demo, says how
    to read it, runs again without a question, and leaves public as it was."""
    import psycopg

    from qctl.systems.azync.cli.demo import DEMO_SCHEMA, OWNED

    dsn = fresh_pg_database
    app = PostgresStore(dsn, Config())
    app.migrate()
    app.enqueue(EnqueueParams(kind="app.job"))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA dbos")
        conn.execute("CREATE TABLE dbos.workflow_status (workflow_uuid text)")
        conn.execute("CREATE TABLE dbos.dbos_migrations (version bigint)")
    demo = ["--dsn", dsn, "demo", "--no-tui", "--duration", "3s", "--speed", "3"]
    for _ in range(2):
        r = run_qctl(demo, tmp_path)
        assert r.returncode == 0, r.stderr
        summary = json.loads(r.stdout)
        assert summary["jobs.enqueued"] > 0
        assert any(key.startswith("maint.") for key in summary), summary
        assert f"--system azync --schema {DEMO_SCHEMA} jobs list" in r.stderr
    with psycopg.connect(dsn, autocommit=True) as conn:
        comment = conn.execute("SELECT obj_description(%s::regnamespace)", [DEMO_SCHEMA])
        assert comment.fetchone() == (OWNED,)
    assert app.kind_depths(Source.QUEUE)["app.job"].pending == 1
    assert app.list_kinds(Source.QUEUE) == ["app.job"]
    app.close()
    reset = run_qctl([*demo, "--schema", "public", "--reset"], tmp_path)
    assert reset.returncode == 2 and "only a schema the demo created" in reset.stderr


def test_cli_demo_on_a_schema_it_did_not_create_asks_and_maintains_nothing(
    tmp_path: Path, fresh_pg_schema: str
) -> None:
    from tests.conftest import PG_DSN

    root = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    assert run_qctl([*root, "db", "migrate"], tmp_path).returncode == 0
    demo = [*root, "demo", "--no-tui", "--duration", "2s", "--speed", "3"]
    refused = run_qctl(demo, tmp_path)
    assert refused.returncode == 4 and "pass --yes" in refused.stderr
    r = run_qctl([*demo, "--yes"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert not any(key.startswith("maint.") for key in json.loads(r.stdout))


def test_cli_demo_refuses_read_only(tmp_path: Path) -> None:
    r = run_qctl(["--read-only", "demo", "--no-tui", "--duration", "1s"], tmp_path)
    assert r.returncode == 4, r.stderr
    assert not (tmp_path / "data" / "qctl" / "demo.db").exists()


def _database_with_a_running_job(path: Path) -> Any:
    """An SQLite store holding one job of someone else's, leased by a worker whose lease
    has run out (a reaper would take it back)."""
    from qctl_store.sqlite import SqliteStore
    from qctl_store.types import DequeueParams, EnqueueParams

    store = SqliteStore(str(path))
    store.migrate()
    store.enqueue(EnqueueParams(kind="billing.charge", payload={"n": 1}))
    [job] = store.dequeue_batch(
        Source.QUEUE, DequeueParams(kind="billing.charge", lease=timedelta(milliseconds=1))
    )
    return store, job


def test_demo_never_runs_on_the_database_a_context_names(tmp_path: Path) -> None:
    """A context (or QCTL_DSN) names the database an operator works on: the demo runs on
    its own file and leaves that one as it was."""
    prod = tmp_path / "prod.db"
    store, job = _database_with_a_running_job(prod)
    (tmp_path / "cfg" / "qctl").mkdir(parents=True)
    (tmp_path / "cfg" / "qctl" / "config.toml").write_text(
        f'default_context = "prod"\n[contexts.prod]\ndsn = "sqlite:///{prod}"\n'
    )
    r = run_qctl(["demo", "--no-tui", "--duration", "2s", "--speed", "3"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "on its own database, not" in r.stderr and str(prod) in r.stderr
    assert (tmp_path / "data" / "qctl" / "demo.db").exists()
    assert store.list_kinds(Source.QUEUE) == ["billing.charge"]
    assert store.get_job(Source.QUEUE, job.id).state == JobState.ACTIVE
    store.close()


def test_a_demo_that_needs_a_dsn_says_only_that_under_a_context(tmp_path: Path) -> None:
    """With a default context, a PostgreSQL-only demo's one line is its error: nothing
    about a database of its own that it does not have."""
    (tmp_path / "cfg" / "qctl").mkdir(parents=True)
    (tmp_path / "cfg" / "qctl" / "config.toml").write_text(
        f'default_context = "prod"\n[contexts.prod]\ndsn = "sqlite:///{tmp_path}/prod.db"\n'
    )
    r = run_qctl(["demo", "--system", "hopper", "--no-tui"], tmp_path)
    assert r.returncode == 2
    [line] = r.stderr.splitlines()
    assert line.startswith("qctl: error: the hopper demo needs --dsn postgresql://")


def test_demo_on_a_dsn_holding_jobs_confirms_and_maintains_nothing(tmp_path: Path) -> None:
    """Given --dsn of a database with jobs of its own, the demo asks first (--yes off a
    terminal), then adds its workload without its maintenance: the other job's lapsed
    lease is not reaped by it."""
    path = tmp_path / "app.db"
    store, job = _database_with_a_running_job(path)
    demo = ["--dsn", f"sqlite:///{path}", "demo", "--no-tui", "--duration", "3s", "--speed", "3"]
    r = run_qctl(demo, tmp_path)
    assert r.returncode == 4, r.stderr
    assert "already holds jobs" in r.stderr and "pass --yes" in r.stderr
    assert store.list_kinds(Source.QUEUE) == ["billing.charge"]
    r = run_qctl([*demo, "--yes"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["jobs.enqueued"] > 0
    assert "maint.reap_expired" not in json.loads(r.stdout)
    assert store.get_job(Source.QUEUE, job.id).state == JobState.ACTIVE
    store.close()
