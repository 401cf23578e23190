"""``qctl demo --system dispatch``: stand-in workers running dispatch's worker SQL on a
schema created from dispatch's migrations, which qctl then reads and operates."""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.systems.dispatch import reads
from qctl.systems.dispatch.cli.demo import OWNED
from qctl.systems.dispatch.reads import STATES
from tests.conftest import PG_DSN, raw_pg


def test_headless_demo_leaves_a_fleets_rows(fresh_pg_schema: str) -> None:
    run = CliRunner().invoke(
        app,
        ["--dsn", PG_DSN, "--schema", fresh_pg_schema, "demo", "--system", "dispatch",
         "--no-tui", "--duration", "3s", "--speed", "5", "--seed", "7"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    counts = json.loads(run.stdout)
    assert counts.get("completed", 0) > 0 and set(counts) <= set(STATES)
    assert "stand-in workers" in run.stderr
    with raw_pg(fresh_pg_schema) as c:
        versions = c.execute("SELECT count(*) FROM grove_migrations").fetchone()
        running = c.execute("SELECT count(*) FROM dispatch_jobs WHERE state = 'running'")
        assert versions == (7,) and running.fetchone() == (0,)  # the workers settled all
    args = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    status = CliRunner().invoke(app, [*args, "db", "status", "-o", "json"])
    assert status.exit_code == 0 and json.loads(status.stdout)["supported"] is True
    listed = CliRunner().invoke(app, [*args, "jobs", "list", "-o", "json", "--limit", "5"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 5


def test_the_demo_needs_postgresql() -> None:
    refused = CliRunner().invoke(
        app, ["--dsn", "sqlite:////tmp/x.db", "demo", "--system", "dispatch", "--no-tui"]
    )
    assert refused.exit_code == 2 and "needs --dsn postgresql" in refused.output


def test_the_workload_reaches_every_screen(fresh_pg_schema: str) -> None:
    """While the demo runs, each screen of dispatch's dashboard has rows: queues, jobs,
    the DLQ, cron entries that fired, registered workers with a leader, workflow runs
    finished both ways. Stopped, its workers leave the cluster."""
    import time
    from importlib.resources import files

    from qctl.systems.dispatch.database import Database
    from qctl.systems.dispatch.demo import CRONS, Workload
    from qctl.systems.dispatch.tui import DISPATCH

    with raw_pg(fresh_pg_schema) as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
        c.execute(files("qctl.systems.dispatch").joinpath("schema_6f7dda7.sql").read_text())
    db = Database(PG_DSN, fresh_pg_schema)
    workload = Workload(db, speed=5, seed=3)
    workload.start()
    try:
        end = time.monotonic() + 30
        shown: dict[str, int] = {}
        while time.monotonic() < end:
            runs = reads.list_runs(db)
            cron = reads.list_cron(db)
            shown = {
                "queues": len(reads.queue_depths(db)),
                "jobs": len(reads.list_jobs(db)),
                "dlq": len(reads.list_dlq(db)),
                "cron": sum(1 for e in cron if e.last_run_at is not None),
                "workers": sum(1 for w in reads.list_workers(db) if w.is_leader),
                "workflows": len({r.state for r in runs} & {"completed", "failed"}),
            }
            if all(shown.values()) and shown["workflows"] == 2:
                break
            time.sleep(0.2)
        assert set(shown) == {t.name for t in DISPATCH.tabs}
        assert all(shown.values()) and shown["workflows"] == 2, shown
        assert {e.name for e in reads.list_cron(db)} == {name for name, *_ in CRONS}
        assert len(reads.list_workers(db)) == 2
    finally:
        workload.stop()
    assert reads.list_workers(db) == []
    db.close()


def demo(schema: str, *extra: str) -> Result:
    return CliRunner().invoke(
        app,
        ["--dsn", PG_DSN, "--schema", schema, "demo", "--system", "dispatch", "--no-tui",
         "--duration", "1s", "--speed", "5", *extra],
    )  # fmt: skip


def test_reset_drops_only_a_schema_the_demo_created(fresh_pg_schema: str) -> None:
    with raw_pg(fresh_pg_schema) as c:
        c.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
        c.execute(f'CREATE TABLE "{fresh_pg_schema}".kept (id int)')
        c.execute(f'INSERT INTO "{fresh_pg_schema}".kept VALUES (1)')
    for extra in (("--reset", "--yes"), ("--yes",)):
        refused = demo(fresh_pg_schema, *extra)
        assert refused.exit_code == 2, refused.output
        with raw_pg(fresh_pg_schema) as c:
            tables = c.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", (fresh_pg_schema,)
            )
            assert tables.fetchall() == [("kept",)]
    assert "only a schema the demo created" in demo(fresh_pg_schema, "--reset").output
    with raw_pg(fresh_pg_schema) as c:
        c.execute(f'DROP SCHEMA "{fresh_pg_schema}" CASCADE')
    first = demo(fresh_pg_schema)
    assert first.exit_code == 0, first.output
    with raw_pg(fresh_pg_schema) as c:
        comment = c.execute(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = %s",
            (fresh_pg_schema,),
        )
        assert comment.fetchone() == (OWNED,)
        c.execute(f'CREATE TABLE "{fresh_pg_schema}".stale (id int)')
    again = demo(fresh_pg_schema, "--reset")  # its own schema: dropped, no question asked
    assert again.exit_code == 0, again.output
    with raw_pg(fresh_pg_schema) as c:
        stale = c.execute("SELECT to_regclass(%s)", (f'"{fresh_pg_schema}".stale',))
        assert stale.fetchone() == (None,)
