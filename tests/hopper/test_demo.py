"""``qctl demo --system hopper``: stand-in workers running hopper's SQL on a schema the
demo creates from hopper's migrations, or on one it shares with a fleet, where it
touches only what it made."""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.systems.hopper.cli.demo import OWNED
from qctl.systems.hopper.reads import STATES
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.conftest import install, snapshot
from tests.hopper.worker import Worker


def demo(schema: str, *extra: str) -> Result:
    return CliRunner().invoke(
        app,
        ["--dsn", PG_DSN, "--schema", schema, "demo", "--system", "hopper", "--no-tui",
         "--duration", "3s", "--speed", "5", "--seed", "7", *extra],
    )  # fmt: skip


def test_headless_demo_leaves_a_fleets_rows(fresh_pg_schema: str) -> None:
    run = demo(fresh_pg_schema)
    assert run.exit_code == 0, run.output
    counts = json.loads(run.stdout)
    assert counts.get("completed", 0) > 0 and set(counts) <= set(STATES)
    assert "stand-in workers" in run.stderr
    with raw_pg(fresh_pg_schema) as c:
        comment = c.execute("SELECT obj_description(%s::regnamespace)", [fresh_pg_schema])
        assert comment.fetchone() == (OWNED,)
        assert c.execute("SELECT array_agg(version) FROM hopper_schema").fetchone() == (
            list(range(1, 9)),
        )
        # the workers finished what they claimed, then left: no lease, no leader
        running = c.execute("SELECT count(*) FROM hopper_jobs WHERE state = 'running'")
        assert running.fetchone() == (0,)
        for table in ("hopper_clients", "hopper_leader"):
            assert c.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)
        workflows = c.execute("SELECT count(*) FROM hopper_batches WHERE edges IS NOT NULL")
        assert workflows.fetchone()[0] > 0  # type: ignore[index]
        unmarked = c.execute(
            "SELECT count(*) FROM (SELECT metadata FROM hopper_jobs UNION ALL"
            " SELECT metadata FROM hopper_job_history) j WHERE NOT metadata ? 'qctl_demo'"
        )
        assert unmarked.fetchone() == (0,)
    args = ["--dsn", PG_DSN, "--schema", fresh_pg_schema]
    listed = CliRunner().invoke(app, [*args, "jobs", "list", "-o", "json", "--limit", "5"])
    assert listed.exit_code == 0 and len(json.loads(listed.stdout)) == 5
    again = demo(fresh_pg_schema)  # its own schema: no question asked
    assert again.exit_code == 0, again.output


def test_a_fleets_schema_is_confirmed_and_its_rows_left_alone(fresh_pg_schema: str) -> None:
    install(fresh_pg_schema)
    fleet = Worker(fresh_pg_schema)
    try:
        client = fleet.register("fleet-host", ttl=3600)
        assert fleet.lead(client, ttl=3600)
        for queue in ("default", "emails", "reports"):
            fleet.insert("fleet.job", {"q": queue}, queue=queue)
        before = snapshot(fresh_pg_schema)
        refused = demo(fresh_pg_schema)
        assert refused.exit_code == 4 and "--yes" in refused.output  # refused
        assert snapshot(fresh_pg_schema) == before
        reset = demo(fresh_pg_schema, "--reset", "--yes")
        assert reset.exit_code == 2 and "only a schema the demo created" in reset.output
        assert snapshot(fresh_pg_schema) == before

        run = demo(fresh_pg_schema, "--yes")
        assert run.exit_code == 0, run.output
        assert json.loads(run.stdout).get("completed", 0) > 0
        after = snapshot(fresh_pg_schema)
        for table in ("hopper_clients", "hopper_queues"):
            assert after[table] == before[table]
        fleets = {r[0] for r in before["hopper_jobs"]}
        assert [r for r in after["hopper_jobs"] if r[0] in fleets] == before["hopper_jobs"]
        with raw_pg(fresh_pg_schema) as c:
            assert c.execute("SELECT client_id FROM hopper_leader").fetchone() == (client,)
    finally:
        fleet.close()


def test_the_demo_needs_postgresql() -> None:
    refused = CliRunner().invoke(
        app, ["--dsn", "sqlite:////tmp/x.db", "demo", "--system", "hopper", "--no-tui"]
    )
    assert refused.exit_code == 2 and "needs --dsn postgresql" in refused.output


def test_a_later_run_works_every_job_of_its_own_schema(fresh_pg_schema: str) -> None:
    """On the schema it created the demo's workers claim every job, whoever inserted it:
    what an earlier run left and an operator's job alike."""
    assert demo(fresh_pg_schema).exit_code == 0
    operator = Worker(fresh_pg_schema)
    try:
        job = operator.insert("operator.job", {}, queue="default")
    finally:
        operator.close()
    with raw_pg(fresh_pg_schema) as c:
        left = [r[0] for r in c.execute("SELECT id FROM hopper_jobs WHERE state = 'available'")]
    run = demo(fresh_pg_schema)
    assert run.exit_code == 0, run.output
    with raw_pg(fresh_pg_schema) as c:
        worked = c.execute(
            "SELECT attempt FROM hopper_jobs WHERE id = %(id)s"
            " UNION ALL SELECT attempt FROM hopper_job_history WHERE id = %(id)s",
            {"id": job},
        ).fetchone()
        assert worked is not None and worked[0] >= 1
        still = c.execute(
            "SELECT count(*) FROM hopper_jobs WHERE id = ANY(%s) AND attempt = 0", [left]
        )
        assert still.fetchone() == (0,)
