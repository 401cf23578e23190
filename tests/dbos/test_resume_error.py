"""DBOS's resume leaves ERROR workflows as they are (``resume_workflows`` re-enqueues
anything but SUCCESS and ERROR): qctl passes them over under a reason that says so and
names the verbs that do run one again, and refuses ``--state ERROR`` saying the same."""

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
        why = f"ERROR: {RESUME_ERROR}"
        one = run(app, ["--dsn", url, "workflows", "resume", ids[0], "--yes"])
        assert one.exit_code == 3, one.output
        assert one.stderr.splitlines() == [f"qctl: error: nothing to resume: skipped 1 (1 {why})"]
        refused = run(app, ["--dsn", url, "workflows", "resume", "--state", "ERROR", "--dry-run"])
        assert refused.exit_code == 2 and RESUME_ERROR in refused.stderr, refused.output
        both = run(app, ["--dsn", url, "workflows", "resume", *ids, "--yes", "-o", "json"])
        assert both.exit_code == 0, both.output
        result = json.loads(both.stdout)
        assert (result["done"], result["skipped"]) == (1, {why: 2})
    helped = CliRunner().invoke(app, ["--system", "dbos", "workflows", "resume", "--help"])
    assert "DBOS cannot resume ERROR" in helped.stdout and "`rewind`" in helped.stdout
    assert "`fork`" in helped.stdout
