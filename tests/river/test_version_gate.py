"""qctl's gate on River's migrations (``river_migration``): a schema River's migrator
made at v0.51.2 is read and written; a version or line qctl does not know is read but
never written (exit 5, both named); a required version missing is refused; qctl never
migrates River's schema."""

from __future__ import annotations

import json

from tests.conftest import raw_pg
from tests.go.harness import Harness
from tests.river.conftest import Run, data


def test_river_migrations_supported(river: Harness, qctl: Run) -> None:
    status = data(qctl("db", "status", "-o", "json"))
    assert status["system"] == "river" and status["supported"] is True
    assert status["migrations"] == [f"main {v}" for v in range(1, 9)]


def test_an_unknown_line_is_read_but_never_written(
    river: Harness, qctl: Run, pg_schema: str
) -> None:
    [id_] = river.call("insert", queue="gated")["ids"]
    with raw_pg(pg_schema) as c:
        c.execute("INSERT INTO river_migration (line, version) VALUES ('workflow', 1), ('main', 9)")
    try:
        assert [j["id"] for j in data(qctl("jobs", "list", "--queue", "gated", "-o", "json"))] == [
            id_
        ]
        for args in (
            ["jobs", "cancel", str(id_), "--yes"],
            ["jobs", "cancel", str(id_), "--dry-run"],
            ["vacuum", "all", "--older-than", "1s", "--yes"],
            ["vacuum", "all", "--older-than", "1s", "--dry-run"],
            ["db", "tune", "--yes"],
        ):
            refused = qctl(*args)
            assert refused.exit_code == 5, refused.output
            assert "main 9, workflow 1" in refused.stderr and "never writes" in refused.stderr
        status = qctl("db", "status", "-o", "json")
        assert status.exit_code == 5
        assert json.loads(status.stdout)["unknown_migrations"] == ["main 9", "workflow 1"]
    finally:
        with raw_pg(pg_schema) as c:
            c.execute("DELETE FROM river_migration WHERE (line, version) <> ('main', 8)"
                      " AND (line <> 'main' OR version > 8)")  # fmt: skip
    assert river.call("get", id=id_)["job"]["state"] == "available"


def test_a_missing_version_is_refused(river: Harness, qctl: Run, pg_schema: str) -> None:
    with raw_pg(pg_schema) as c:
        c.execute("DELETE FROM river_migration WHERE line = 'main' AND version = 6")
    try:
        refused = qctl("jobs", "list")
        assert refused.exit_code == 5 and "versions not applied: main 6" in refused.stderr
    finally:
        with raw_pg(pg_schema) as c:
            c.execute("INSERT INTO river_migration (line, version) VALUES ('main', 6)")


def test_never_migrated(river: Harness, qctl: Run) -> None:
    for flags in ([], ["--dry-run"]):
        refused = qctl("db", "migrate", *flags)
        assert refused.exit_code == 2 and "never migrates a River database" in refused.stderr
