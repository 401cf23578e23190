"""DBOS's resume leaves ERROR workflows as they are (``resume_workflows`` re-enqueues
anything but SUCCESS and ERROR): qctl says so, and names the verbs that do run one again,
instead of "skipped N in another status" for workflows in exactly the status asked for."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems.dbos.actions import RESUME_ERROR
from tests.conftest import require_pg
from tests.dbos.fixtures import migrate, pg_database


def test_resume_of_error_workflows_names_rewind_and_fork() -> None:
    from dbos import DBOSClient

    require_pg()
    with pg_database() as url:
        migrate(url)
        client = DBOSClient(system_database_url=url)
        try:
            ids = [
                client.enqueue({"workflow_name": "work", "queue_name": "q"}, n).get_workflow_id()
                for n in range(3)
            ]
        finally:
            client.destroy()
        import psycopg

        with psycopg.connect(url) as conn:
            conn.execute(
                "UPDATE dbos.workflow_status SET status = 'ERROR' WHERE workflow_uuid = ANY(%s)",
                (ids[:2],),
            )
        run = CliRunner().invoke
        one = run(app, ["--dsn", url, "workflows", "resume", ids[0], "--yes"])
        assert one.exit_code == 3, one.output
        assert one.stderr.splitlines() == [
            f"qctl: error: workflow {ids[0]} is ERROR; {RESUME_ERROR}"
        ]
        dry = run(app, ["--dsn", url, "workflows", "resume", "--state", "ERROR", "--dry-run"])
        assert dry.exit_code == 0, dry.output
        assert f"would resume 0 DBOS workflow(s); skipped 2 in ERROR: {RESUME_ERROR}" in dry.stdout
        both = run(app, ["--dsn", url, "workflows", "resume", *ids, "--yes", "-o", "json"])
        assert both.exit_code == 0, both.output
        assert json.loads(both.stdout)["count"] == 1
        said = run(app, ["--dsn", url, "workflows", "resume", *ids[:2], "--yes"])
        assert (
            said.stdout.strip() == f"resumed 0 DBOS workflow(s); skipped 2 in ERROR: {RESUME_ERROR}"
        )
    helped = CliRunner().invoke(app, ["--system", "dbos", "workflows", "resume", "--help"])
    assert "DBOS cannot resume ERROR" in helped.stdout and "`rewind`" in helped.stdout
    assert "`fork`" in helped.stdout
