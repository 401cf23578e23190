"""``qctl demo --system river``: River's own clients (the demo's Go program, built as
the harness builds it: ``tests/river/riverdemo_env.py``) on River's schema written by the
demo in a schema it creates (the same schema River's migrator makes) where there is Go,
else labelled stand-in clients running River's own SQL; on a schema it shares with
River's clients, stand-ins that touch only what the demo made."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.systems.river import reads, riverclients, standin
from qctl.systems.river.cli.demo import OWNED
from qctl.systems.river.database import Database
from qctl.systems.river.reads import STATES
from tests.conftest import PG_DSN, raw_pg
from tests.go.harness import Harness, pgx_dsn, require_go
from tests.river import riverdemo_env

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def harness_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo finds River's clients where the harness builds them, never in the
    operator's cache."""
    monkeypatch.setattr(riverclients, "demo_dir", lambda: riverdemo_env.DIR)


@pytest.fixture
def no_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Go toolchain on this machine, as far as the demo can tell."""
    monkeypatch.setenv("QCTL_RIVERDEMO_GO", "")


@pytest.fixture
def river_clients() -> Path:
    """River's clients of the demo, built if the harness has not (skips without Go,
    fails under ``QCTL_REQUIRE_GO=1``)."""
    require_go()
    try:
        return riverclients.build(riverdemo_env.DIR)
    except RuntimeError as exc:
        pytest.fail(str(exc))


def demo(schema: str, *extra: str) -> Result:
    return CliRunner().invoke(
        app,
        ["--dsn", PG_DSN, "--schema", schema, "demo", "--system", "river", "--no-tui",
         "--duration", "3s", "--speed", "5", "--seed", "7", *extra],
    )  # fmt: skip


def test_headless_demo_runs_rivers_own_clients(fresh_pg_schema: str, river_clients: Path) -> None:
    run = demo(fresh_pg_schema, "--duration", "6s")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout).get("completed", 0) > 0
    assert "stand-in" not in run.stderr
    names = standin.Workload(PG_DSN, fresh_pg_schema, program=river_clients).client_names
    assert "River 0.51.2 clients " + ", ".join(names) in run.stderr
    with raw_pg(fresh_pg_schema) as c:
        by = c.execute(
            "SELECT DISTINCT attempted_by[1] FROM river_job WHERE state = 'completed'"
        ).fetchall()
        assert by and {row[0] for row in by} <= set(names)
        failed = c.execute(
            "SELECT count(*) FROM river_job WHERE errors IS NOT NULL AND state <> 'running'"
        ).fetchone()
        assert failed is not None and failed[0] > 0  # the args' failures, as River records them
        queues = c.execute("SELECT array_agg(name ORDER BY name) FROM river_queue")
        assert queues.fetchone() == (sorted(standin.QUEUES),)


def test_rivers_clients_cancel_a_running_job_qctl_cancels(
    fresh_pg_schema: str, river_clients: Path
) -> None:
    """A report takes long enough to cancel while it runs: River's client cancels its
    work on qctl's cancel (River's control topic) and the job ends cancelled."""
    assert demo(fresh_pg_schema, "--duration", "1s").exit_code == 0  # the demo's schema
    work = standin.Workload(
        PG_DSN, fresh_pg_schema, speed=0.5, lead=True, seed=5, program=river_clients
    )
    work.start()
    args = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    try:
        running: list[Any] = []
        for _ in range(300):
            with raw_pg(fresh_pg_schema) as c:
                running = c.execute(
                    "SELECT id FROM river_job WHERE state = 'running' AND queue = 'reports'"
                    " AND (args->>'seconds')::float > 5"
                ).fetchall()
            if running:
                break
            time.sleep(0.1)
        assert running
        job = running[0][0]
        cancel = CliRunner().invoke(app, [*args, "jobs", "cancel", str(job), "--yes"])
        assert cancel.exit_code == 0, cancel.output
        state = None
        for _ in range(100):
            with raw_pg(fresh_pg_schema) as c:
                row = c.execute("SELECT state FROM river_job WHERE id = %s", [job]).fetchone()
            state = row and row[0]
            if state == "cancelled":
                break
            time.sleep(0.1)
        assert state == "cancelled"
    finally:
        work.stop()
    assert work.errors == []


def test_without_go_nothing_is_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QCTL_RIVERDEMO_GO", "")
    assert riverclients.toolchain() is None
    with pytest.raises(RuntimeError, match="no Go toolchain"):
        riverclients.build(tmp_path / "build")


def test_a_failed_build_falls_back_to_the_stand_ins(
    fresh_pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = tmp_path / "go"
    go.write_text("#!/bin/sh\necho 'go: no network' >&2\nexit 1\n")
    go.chmod(0o755)
    monkeypatch.setenv("QCTL_RIVERDEMO_GO", str(go))
    monkeypatch.setattr(riverclients, "demo_dir", lambda: tmp_path / "build")
    run = demo(fresh_pg_schema)
    assert run.exit_code == 0, run.output
    assert "stand-in River clients: building River's clients failed" in run.stderr
    assert "go: no network" in run.stderr  # go build's last lines
    assert json.loads(run.stdout).get("completed", 0) > 0


def test_headless_demo_works_jobs_on_rivers_statements(fresh_pg_schema: str, no_go: None) -> None:
    run = demo(fresh_pg_schema)
    assert run.exit_code == 0, run.output
    counts = json.loads(run.stdout)
    assert counts.get("completed", 0) > 0 and set(counts) <= set(STATES)
    assert f"stand-in River clients: {riverclients.MISSING}" in run.stderr
    assert "stand-in clients running River's SQL" in run.stderr
    with raw_pg(fresh_pg_schema) as c:
        comment = c.execute("SELECT obj_description(%s::regnamespace)", [fresh_pg_schema])
        assert comment.fetchone() == (OWNED,)
        versions = c.execute("SELECT array_agg(version ORDER BY version) FROM river_migration")
        assert versions.fetchone() == (list(range(1, 9)),)
        # the clients settled what they fetched, and the leader resigned
        running = c.execute("SELECT count(*) FROM river_job WHERE state = 'running'")
        assert running.fetchone() == (0,)
        assert c.execute("SELECT count(*) FROM river_leader").fetchone() == (0,)
        queues = c.execute("SELECT array_agg(name ORDER BY name) FROM river_queue")
        assert queues.fetchone() == (sorted(standin.QUEUES),)
        failed = c.execute(
            "SELECT count(*) FROM river_job WHERE errors IS NOT NULL"
            " AND attempted_by[1] LIKE 'qctl-demo-stand-in-%'"
        )
        assert failed.fetchone()[0] > 0  # type: ignore[index]
        unmarked = c.execute("SELECT count(*) FROM river_job WHERE NOT metadata ? 'qctl_demo'")
        assert unmarked.fetchone() == (0,)
    args = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    listed = CliRunner().invoke(app, [*args, "jobs", "list", "-o", "json", "--limit", "5"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 5
    errors = CliRunner().invoke(app, [*args, "jobs", "errors", "-o", "json"])
    assert errors.exit_code == 0 and json.loads(errors.stdout)
    again = demo(fresh_pg_schema)  # its own schema: no question asked
    assert again.exit_code == 0, again.output


def test_both_stand_in_clients_are_seen_at_work(fresh_pg_schema: str) -> None:
    """River records a client only in the jobs it runs (``attempted_by``): the stand-in
    clients work each job a while, so that the clients read (``clients list``, the
    Clients tab) shows both at work, as the docs say, beside the leader."""
    with raw_pg(fresh_pg_schema) as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
        standin.install(c, fresh_pg_schema)
    work = standin.Workload(PG_DSN, fresh_pg_schema, speed=2, lead=True, seed=3)
    db = Database(PG_DSN, fresh_pg_schema)
    work.start()
    try:
        wanted = {"qctl-demo-stand-in-0", "qctl-demo-stand-in-1"}
        seen: set[str] = set()
        for _ in range(100):
            seen |= {c.client for c in reads.clients(db) if c.running and c.client}
            if seen >= wanted:
                break
            time.sleep(0.1)
        assert seen >= wanted
        assert any(c.leader for c in reads.clients(db))
    finally:
        work.stop()
        db.close()
    assert not work.errors


def _catalog(schema: str) -> dict[str, Any]:
    """What River's code depends on in a schema: columns with types, defaults and
    nullability; constraints; indexes; functions; enum labels in order; persistence."""
    with psycopg.connect(PG_DSN, autocommit=True) as c:

        def rows(query: str) -> list[tuple[Any, ...]]:
            return sorted(c.execute(query, [schema]).fetchall())

        return {
            "columns": rows(
                "SELECT table_name, column_name, data_type, udt_name, column_default,"
                " is_nullable, character_maximum_length FROM information_schema.columns"
                " WHERE table_schema = %s"
            ),
            "constraints": rows(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM"
                " pg_constraint WHERE connamespace = %s::regnamespace"
            ),
            "indexes": rows(
                "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %s"
            ),
            "functions": rows(
                "SELECT proname, pg_get_function_arguments(oid) FROM pg_proc"
                " WHERE pronamespace = %s::regnamespace"
            ),
            "enum": rows(
                "SELECT array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e"
                " JOIN pg_type t ON t.oid = e.enumtypid"
                " WHERE t.typnamespace = %s::regnamespace"
            ),
            "tables": rows(
                "SELECT relname, relpersistence FROM pg_class WHERE relkind = 'r'"
                " AND relnamespace = %s::regnamespace"
            ),
        }


@pytest.fixture
def two_schemas() -> Iterator[tuple[str, str]]:
    names = (f"qt_river_migrated_{uuid.uuid4().hex[:8]}", f"qt_river_demo_{uuid.uuid4().hex[:8]}")
    with psycopg.connect(PG_DSN, autocommit=True) as c:
        for name in names:
            c.execute(f'CREATE SCHEMA "{name}"')
    yield names
    with psycopg.connect(PG_DSN, autocommit=True) as c:
        for name in names:
            c.execute(f'DROP SCHEMA "{name}" CASCADE')


def test_the_demos_schema_is_the_one_rivers_migrator_makes(two_schemas: tuple[str, str]) -> None:
    migrated, written = two_schemas
    h = Harness("riverd", pgx_dsn(migrated))
    try:
        h.call("migrate")
    finally:
        h.close()
    with psycopg.connect(PG_DSN, autocommit=True) as c:
        standin.install(c, written)

    def renamed(catalog: dict[str, Any], schema: str) -> str:
        return json.dumps(catalog, default=str, sort_keys=True).replace(f"{schema}.", "S.")

    a, b = _catalog(migrated), _catalog(written)
    for key in a:
        assert renamed(a[key], migrated) == renamed(b[key], written), key


def test_a_rivers_schema_is_confirmed_and_its_rows_left_alone(fresh_pg_schema: str) -> None:
    with psycopg.connect(PG_DSN, autocommit=True) as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
    h = Harness("riverd", pgx_dsn(fresh_pg_schema))
    try:
        h.call("migrate")
        h.call("queues_create", queues=["default"])
        fleet = h.call("insert", queue="emails", n=3)["ids"]

        def snapshot() -> tuple[Any, ...]:
            with raw_pg(fresh_pg_schema) as c:
                jobs = c.execute(
                    "SELECT id, state, attempt, errors FROM river_job WHERE id = ANY(%s)"
                    " ORDER BY id",
                    [fleet],
                ).fetchall()
                queues = c.execute("SELECT * FROM river_queue ORDER BY name").fetchall()
                leader = c.execute("SELECT * FROM river_leader").fetchall()
            return jobs, queues, leader

        before = snapshot()
        refused = demo(fresh_pg_schema)
        assert refused.exit_code == 4 and "--yes" in refused.output
        reset = demo(fresh_pg_schema, "--reset", "--yes")
        assert reset.exit_code == 2 and "only a schema the demo created" in reset.output
        assert snapshot() == before
        run = demo(fresh_pg_schema, "--yes")
        assert run.exit_code == 0, run.output
        assert json.loads(run.stdout).get("completed", 0) > 0
        assert "stand-in River clients: the schema is not the demo's own" in run.stderr
        assert snapshot() == before
    finally:
        h.close()


def test_the_demo_needs_postgresql() -> None:
    refused = CliRunner().invoke(
        app, ["--dsn", "sqlite:////tmp/x.db", "demo", "--system", "river", "--no-tui"]
    )
    assert refused.exit_code == 2 and "needs --dsn postgresql" in refused.output


def test_a_later_run_works_every_job_of_its_own_schema(fresh_pg_schema: str) -> None:
    """On the schema it created the demo's clients work every job, whoever inserted it:
    what an earlier run left available and an operator's job alike."""
    assert demo(fresh_pg_schema).exit_code == 0
    operator = standin.StandIn(PG_DSN, fresh_pg_schema, {})
    try:
        job = operator.insert("operator.job", {}, queue="default")
    finally:
        operator.close()
    with raw_pg(fresh_pg_schema) as c:
        left = [r[0] for r in c.execute("SELECT id FROM river_job WHERE state = 'available'")]
    run = demo(fresh_pg_schema)
    assert run.exit_code == 0, run.output
    with raw_pg(fresh_pg_schema) as c:
        worked = c.execute("SELECT attempt FROM river_job WHERE id = %s", [job]).fetchone()
        assert worked is not None and worked[0] >= 1
        still = c.execute(
            "SELECT count(*) FROM river_job WHERE id = ANY(%s) AND attempt = 0", [left]
        )
        assert still.fetchone() == (0,)
