"""River's change feed: the dashboard is pushed by River's own notices, which its Go
client sends on its schema-prefixed topics (riverpgxv5 prefixes the schema): an insert
on ``<schema>.river_insert``, and qctl's own control notices on ``<schema>.river_control``
(a pause)."""

from __future__ import annotations

from qctl.core.changes import RESET
from qctl.systems.river.database import Database
from tests.conftest import PG_DSN
from tests.go.harness import Harness
from tests.river.conftest import Run


def test_an_insert_by_rivers_client_and_a_pause_by_qctl_are_hinted(
    river: Harness, qctl: Run, pg_schema: str
) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        sub = db.changes()
        assert sub is not None and db.partial  # completions notify nothing: polled
        assert sub.get(timeout=10) == RESET
        river.call("queues_create", queues=["hinted"])
        river.call("insert", queue="hinted", n=1)
        hint = sub.get(timeout=10)
        assert hint is not None and hint.kind == "jobs", hint
        assert qctl("queues", "pause", "hinted", "--yes").exit_code == 0
        hint = sub.get(timeout=10)
        assert hint is not None and hint.kind == "queues", hint
        sub.close()
    finally:
        db.close()
