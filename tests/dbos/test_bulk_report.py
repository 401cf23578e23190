"""A bulk DBOS verb that stops part-way (here: a workflow row another session holds,
past ``--lock-timeout``) reports the engine's result of what it committed, in the output
format asked for, then fails with the cause's line and exit code."""

from __future__ import annotations

import json

import psycopg
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.dbos.database import Database
from tests.conftest import require_pg
from tests.dbos.fixtures import App, pg_database, wait_for


def test_a_bulk_rewind_stopped_part_way_reports_what_it_committed() -> None:
    require_pg()
    with pg_database() as url:
        dbos = App(url)
        try:
            ids = [dbos.enqueue("checkout", f"order-{n}", 1) for n in range(3)]
            db = Database(url)
            try:
                wait_for(
                    lambda: all(
                        (
                            r := db.one(
                                "SELECT status FROM {t}workflow_status WHERE workflow_uuid = %s",
                                [i],
                            )
                        )
                        and r["status"] == "SUCCESS"
                        for i in ids
                    )
                )
            finally:
                db.close()
        finally:
            dbos.stop()
        with psycopg.connect(url) as other:
            other.execute(
                "SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = %s FOR UPDATE",
                (ids[1],),
            ).fetchall()
            root = ["--dsn", url, "--lock-timeout", "700ms"]
            verb = ["workflows", "rewind", *ids, "--yes", "-o", "json"]
            result = CliRunner().invoke(app, [*root, *verb])
            other.rollback()
            statuses = [
                other.execute(
                    "SELECT status FROM dbos.workflow_status WHERE workflow_uuid = %s", (i,)
                ).fetchone()
                for i in ids
            ]
    assert result.exit_code == 7, result.output
    report = json.loads(result.stdout)
    assert (report["verb"], report["system"], report["selected"]) == ("workflows rewind", "dbos", 3)
    assert report["ids"] == [ids[0]] and report["done"] == 1 and report["batches"] == 1
    assert report["stopped_part_way"] is True and report["skipped"] == {}
    assert "qctl: stopped part-way: rewound 1 dbos workflow in 1 committed batch(es)" in (
        result.stderr
    )
    assert statuses[1:] == [("SUCCESS",), ("SUCCESS",)]
    assert statuses[0] != ("SUCCESS",)  # rewound: enqueued again
    assert "lock_timeout" in result.stderr
