"""The audit trail kept in the database (``qctl.core.audit_table``), on SQLite and on
PostgreSQL (a database of its own per test: the table lives in qctl's own schema, not
the system's): created only by ``qctl audit init`` (not by a dry run, not in read-only
mode), then, with ``audit = "database"`` in effect, every write of every operator goes
there instead of each one's local file, and ``qctl audit list`` shows them all; where the
database cannot take an entry (no table yet, a read-only session) it goes to the local
file, said once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.core import audit
from qctl.core.audit_table import AuditTable
from qctl_store import open_store
from tests.conftest import PG_DSN, require_pg

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def _warns_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test a process of its own: what the trail warns once, it warns again."""
    monkeypatch.setattr(audit, "_warned", set())


@pytest.fixture
def database(azync_database: str) -> str:
    """A migrated azync database of its own, on each backend (the audit table is per
    database)."""
    return azync_database


def qctl(dsn: str, home: Path, *args: str, keep: str = "database") -> Result:
    """``qctl`` as the operator whose state directory is ``home`` (a machine of its own)."""
    env = {"XDG_STATE_HOME": str(home), "QCTL_AUDIT": keep}
    return CliRunner().invoke(app, ["--dsn", dsn, *args], env=env)


def local(home: Path) -> list[dict[str, Any]]:
    path = home / "qctl" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def table_exists(dsn: str) -> bool:
    if dsn.startswith("sqlite"):
        import sqlite3

        with sqlite3.connect(dsn.removeprefix("sqlite://")) as conn:
            found = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'qctl_audit'")
            return bool(found.fetchone()[0])
    with psycopg.connect(dsn) as conn:
        row = conn.execute("SELECT to_regclass('qctl.qctl_audit') IS NOT NULL").fetchone()
        return bool(row and row[0])


def test_only_audit_init_creates_the_table(database: str, tmp_path: Path) -> None:
    ana = tmp_path / "ana"
    dry = qctl(database, ana, "audit", "init", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout)["dry_run"] is True and not table_exists(database)
    refused = qctl(database, ana, "--read-only", "audit", "init")
    assert refused.exit_code == 4 and not table_exists(database)
    # without the table, a write goes to the local file, and says so once
    enq = qctl(database, ana, "jobs", "enqueue", "team.k", "-o", "json")
    assert enq.exit_code == 0, enq.output
    assert "no qctl" in enq.stderr and "audit init" in enq.stderr and "local file" in enq.stderr
    assert [e["verb"] for e in local(ana)] == ["jobs enqueue"]
    listed = qctl(database, ana, "audit", "list", "-o", "json")
    assert [e["verb"] for e in json.loads(listed.stdout)] == ["jobs enqueue"]
    assert "audit init" in listed.stderr  # read from the local file instead, said so
    made = qctl(database, ana, "audit", "init")
    assert made.exit_code == 0, made.output
    assert made.stdout.startswith("created the audit table") and table_exists(database)
    again = qctl(database, ana, "audit", "init", "-o", "json")
    assert json.loads(again.stdout)["created"] is False


def test_every_operator_sees_one_trail(database: str, tmp_path: Path) -> None:
    ana, bo = tmp_path / "ana", tmp_path / "bo"
    assert qctl(database, ana, "audit", "init", keep="file").exit_code == 0
    assert [e["verb"] for e in local(ana)] == ["audit init"]  # the file: the default
    assert qctl(database, ana, "jobs", "enqueue", "team.a", "--reason", "INC-1").exit_code == 0
    assert qctl(database, bo, "jobs", "enqueue", "team.b").exit_code == 0
    assert qctl(database, bo, "jobs", "pause", "--kind", "team.a", "--yes").exit_code == 0
    assert [e["verb"] for e in local(ana)] == ["audit init"] and local(bo) == []
    for home in (ana, bo):  # either operator, from either machine
        listed = json.loads(qctl(database, home, "audit", "list", "-o", "json").stdout)
        assert [e["verb"] for e in listed] == ["jobs pause", "jobs enqueue", "jobs enqueue"]
    [pause, by_bo, by_ana] = listed
    assert by_bo["selection"] == {"kind": "team.b"} and by_bo["user"] == by_ana["user"]
    assert by_ana["reason"] == "INC-1" and by_ana["selection"] == {"kind": "team.a"}
    assert pause["done"] == 1 and pause["exit_status"] == 0
    jobs = json.loads(qctl(database, bo, "audit", "--verb", "jobs pause", "-o", "json").stdout)
    assert [e["verb"] for e in jobs] == ["jobs pause"]
    since = json.loads(qctl(database, bo, "audit", "--since", "+1h", "-o", "json").stdout)
    assert since == []
    assert json.loads(qctl(database, bo, "audit", "-n", "1", "-o", "json").stdout) == [pause]
    mine = json.loads(qctl(database, ana, "audit", "list", "--local", "-o", "json").stdout)
    assert [e["verb"] for e in mine] == ["audit init"]


def test_a_read_only_session_falls_back_to_the_local_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database that takes no write from this session (a standby, a read-only role)
    cannot keep the entry: the local file does, and the operator is told once."""
    require_pg()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    read_only = f"{PG_DSN}?options=-c%20default_transaction_read_only%3Don"
    table = AuditTable(lambda: psycopg.connect(read_only, autocommit=True), True, "standby")
    monkeypatch.setattr(table, "_exists", lambda conn: True)
    audit.keep_in(lambda: table)
    said: list[str] = []
    try:
        for verb in ("jobs retry", "jobs delete"):
            audit.append(audit.Entry("cli", verb, {"system": "azync"}), said.append)
    finally:
        audit.keep_in(None)
    assert [e["verb"] for e in local(tmp_path)] == ["jobs retry", "jobs delete"]
    [warning] = said
    assert warning.startswith("audit table qctl.qctl_audit of standby: ")
    assert warning.endswith(f"this write is recorded in the local file {tmp_path}/qctl/audit.jsonl")


def test_a_context_keeps_its_trail_in_the_database(database: str, tmp_path: Path) -> None:
    """``context add --audit database``: the context's writes go to its database's table;
    the same database through another context (the default: the file) does not."""
    config = tmp_path / "config"
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(config)}

    def run(*args: str) -> Result:
        return CliRunner().invoke(app, list(args), env=env)

    bad = run("context", "add", "team", "--dsn", database, "--audit", "cloud")
    assert bad.exit_code == 2 and "--audit" in bad.stderr
    assert run("context", "add", "team", "--dsn", database, "--audit", "database").exit_code == 0
    assert run("context", "add", "solo", "--dsn", database).exit_code == 0
    listed = json.loads(run("context", "list", "-o", "json").stdout)
    assert {c["name"]: c["audit"] for c in listed} == {"team": "database", "solo": "file"}
    assert run("--context", "team", "audit", "init").exit_code == 0
    assert run("--context", "team", "jobs", "enqueue", "ctx.k").exit_code == 0
    assert run("--context", "solo", "jobs", "enqueue", "ctx.k").exit_code == 0
    in_table = json.loads(run("--context", "team", "audit", "-o", "json").stdout)
    # the table's creation is its first entry (it exists by the time its write ends)
    assert [(e["verb"], e["context"]) for e in in_table] == [
        ("jobs enqueue", "team"),
        ("audit init", "team"),
    ]
    assert [(e["verb"], e["context"]) for e in local(tmp_path / "state")] == [
        ("jobs enqueue", "solo")
    ]


def test_the_dashboard_keeps_its_actions_in_the_same_table(tmp_path: Path) -> None:
    """``qctl top``'s action goes where the context keeps the trail, as the command
    line's write does (the root command sets it for both)."""
    from qctl.cli.context import CliContext
    from tests.cli.conftest import make_dead
    from tests.cli.test_audit import retry_in_dashboard

    dsn = f"sqlite:///{tmp_path / 'top.db'}"
    st = open_store(dsn)
    st.migrate()
    home = tmp_path / "state"
    assert qctl(dsn, home, "audit", "init").exit_code == 0
    c = CliContext.resolve(dsn=dsn, environ={"QCTL_AUDIT": "database"})
    make_dead(st, "top.kind")
    audit.keep_in(c.audit_table)
    try:
        retry_in_dashboard(st, "top.kind", ["--dsn", dsn], "y")
    finally:
        audit.keep_in(None)
        st.close()
    listed = json.loads(qctl(dsn, home, "audit", "list", "-o", "json").stdout)
    assert [(e["front"], e["verb"], e["done"]) for e in listed[:1]] == [
        ("dashboard", "jobs retry", 1)
    ]
    assert [e["verb"] for e in local(home)] == []


def test_a_hostile_row_of_another_operator_is_shown_escaped_or_left_out(tmp_path: Path) -> None:
    """The table is shared: a row someone wrote by hand (control characters, an entry
    that is not a JSON object, text that is not JSON) never crashes the listing, and a
    table shows its text escaped."""
    import sqlite3

    path = tmp_path / "shared.db"
    dsn = f"sqlite:///{path}"
    open_store(dsn).migrate()
    home = tmp_path / "state"
    assert qctl(dsn, home, "audit", "init", keep="file").exit_code == 0
    hostile = {"time": "2026-01-01T00:00:00.000000Z", "verb": "jobs \x1b[2Jretry", "done": 1}
    with sqlite3.connect(path) as conn:
        for entry in (json.dumps(hostile), '"a string"', "{not json", "[1, 2]"):
            conn.execute(
                "INSERT INTO qctl_audit (time, verb, entry) VALUES (?, ?, ?)",
                ["2026-01-01T00:00:00.000000Z", "jobs retry", entry],
            )
    shown = qctl(dsn, home, "audit", "list")
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.stdout and "jobs \\x1b[2Jretry" in shown.stdout
    listed = json.loads(qctl(dsn, home, "audit", "list", "-o", "json").stdout)
    assert [e["verb"] for e in listed] == ["jobs \x1b[2Jretry"]  # JSON stays exact
