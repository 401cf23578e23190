"""A hopper schema at a version qctl does not write to: every write refuses with exit 5
naming both versions and writes nothing; reads go on (with a note for a newer
version); ``db status`` reports it and exits 5."""

from __future__ import annotations

import json

from typer.testing import CliRunner, Result

from qctl.cli.main import app
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.conftest import Run, data, install, snapshot
from tests.hopper.worker import Worker

WRITES = (
    ("jobs", "cancel", "{job}", "--yes"),
    ("jobs", "cancel", "{job}", "--dry-run"),
    ("jobs", "retry", "{job}", "--yes"),
    ("jobs", "retry", "--queue", "gate-q", "--yes"),
    ("queues", "pause", "gate-q", "--yes"),
    ("queues", "resume", "gate-q", "--yes"),
    ("queues", "limit", "gate-q", "--global", "2", "--yes"),
    ("vacuum", "all", "--older-than", "1s", "--yes"),
    ("vacuum", "history", "--older-than", "1s", "--dry-run"),
)


def test_a_newer_version_is_read_but_never_written(
    hopper: Worker, qctl: Run, pg_schema: str
) -> None:
    job = hopper.insert("g", queue="gate-q")
    with raw_pg(pg_schema) as c:
        c.execute("INSERT INTO hopper_schema (version) VALUES (9)")
    before = snapshot(pg_schema)
    for args in WRITES:
        refused = qctl(*(a.format(job=job) for a in args))
        assert refused.exit_code == 5, (args, refused.output)
        assert "hopper schema at version 9" in refused.output, args
        assert "version 8 only" in refused.output, args
    assert snapshot(pg_schema) == before
    listed = qctl("jobs", "list", "-o", "json")
    assert [j["id"] for j in data(listed)] == [str(job)]
    assert "newer than qctl knows" in listed.stderr
    status = qctl("db", "status", "-o", "json")
    assert status.exit_code == 5
    report = json.loads(status.stdout)
    assert report["schema_version"] == 9 and report["unknown_versions"] == [9]
    assert report["writable"] is False and report["writes_at_version"] == 8


def test_an_older_version_is_not_written(fresh_pg_schema: str) -> None:
    """A database at hopper schema version 5 (an older hopper): its batches lack what
    version 8's finalize writes, so qctl writes nothing there; it reads what exists."""
    install(fresh_pg_schema, upto=5)
    worker = Worker(fresh_pg_schema)
    try:
        job = worker.insert("old", queue="old-q")
    finally:
        worker.close()

    def qctl(*args: str) -> Result:
        return CliRunner().invoke(app, ["--dsn", PG_DSN, "--schema", fresh_pg_schema, *args])

    refused = qctl("jobs", "cancel", str(job), "--yes")
    assert refused.exit_code == 5
    assert "version 5, not 8" in refused.output
    listed = qctl("jobs", "list", "-o", "json")
    assert listed.exit_code == 0 and str(job) in listed.stdout


def test_a_migration_after_connecting_is_seen_by_the_write(fresh_pg_schema: str) -> None:
    """The dashboard stays connected while hopper upgrades: each write's transaction reads
    the version again, so nothing is written to a schema migrated since."""
    import pytest

    from qctl.systems.hopper import actions
    from qctl.systems.hopper.database import Database, UnsupportedSchema

    install(fresh_pg_schema)
    db = Database(PG_DSN, fresh_pg_schema)
    try:
        assert db.state.writable
        with raw_pg(fresh_pg_schema) as c:
            c.execute("INSERT INTO hopper_schema (version) VALUES (9)")
        with pytest.raises(UnsupportedSchema, match="version 9"):
            actions.PAUSE.write(db, ["late-q"])
    finally:
        db.close()
    with raw_pg(fresh_pg_schema) as c:
        assert c.execute("SELECT count(*) FROM hopper_queues").fetchone() == (0,)
