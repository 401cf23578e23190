"""The dashboard's audit screen (``a``, ``:audit``) on SQLite and PostgreSQL: the trail
of this database, newest first by start, read as ``qctl audit list`` reads it; a trail
kept in the database shows another operator's writes; a hostile entry is shown escaped.
And ``o``/``O``, the sort by any column every pane's table has."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.main import app as cli
from qctl.core import audit
from qctl.core.audit_table import AuditTable
from qctl.tui.app import QctlTop
from qctl.tui.audit import AuditScreen
from qctl.tui.widgets import CommandPrompt, Table
from qctl_store import open_store
from tests.tui.helpers import SIZE, row_keys, screen_text, until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def database(azync_database: str) -> str:
    """A migrated azync database of its own, on each backend (the audit table is per
    database)."""
    return azync_database


def qctl(dsn: str, home: Path, *args: str) -> None:
    """``qctl`` as the operator whose state directory is ``home``, trail in the database."""
    env = {"XDG_STATE_HOME": str(home), "QCTL_AUDIT": "database", "USER": home.name}
    result = CliRunner().invoke(cli, ["--dsn", dsn, *args], env=env)
    assert result.exit_code == 0, result.output


def table_of(dsn: str) -> AuditTable:
    if dsn.startswith("sqlite"):
        path = dsn.removeprefix("sqlite://")
        return AuditTable(lambda: sqlite3.connect(path, isolation_level=None), False, path)
    return AuditTable(lambda: psycopg.connect(dsn, autocommit=True), True, dsn)


def plant(dsn: str, entry: dict[str, Any]) -> None:
    """A row written by hand, not by qctl: its entry anything JSON holds."""
    text = json.dumps(entry)
    if dsn.startswith("sqlite"):
        with sqlite3.connect(dsn.removeprefix("sqlite://")) as conn:
            conn.execute("INSERT INTO qctl_audit (time, verb, entry) VALUES ('0', 'x', ?)", [text])
        return
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO qctl.qctl_audit (time, verb, entry) VALUES ('epoch', 'x', %s::json)",
            [text],
        )


HOSTILE = {
    "time": "\x1b[31mnot a time",
    "user": "mallory\x1b]0;owned\x07",
    "verb": "jobs [bold]retry[/]",
    "system": ["a", {"b": 1}],
    "ids": "not a list",
    "selection": {"--kind": "\x1b[2Jk"},
    "done": {"x": 1},
    "skipped": None,
    "reason": "\r\nwhy\tnot" * 50,
    "exit_status": "zero",
}


async def test_audit_screen_shows_every_operators_writes(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ana, bo = tmp_path / "ana", tmp_path / "bo"
    qctl(database, ana, "audit", "init")
    qctl(database, bo, "jobs", "enqueue", "mail.send", "--reason", "bo's backfill")
    qctl(database, ana, "jobs", "enqueue", "mail.send", "--reason", "ana's retry")
    table = table_of(database)
    plant(database, HOSTILE)
    monkeypatch.setenv("XDG_STATE_HOME", str(ana))
    store = open_store(database)
    app = QctlTop(store, live=False, location="test", audit_table=table)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.refresh_count >= 1)
            await pilot.press("a")
            await until(pilot, lambda: len(row_keys(app, "#audit")) == 4)
            t = app.screen.query_one("#audit", Table)
            verbs = [str(t.get_row(k)[2]) for k in row_keys(app, "#audit")]
            # newest first by start; the hand-written row is the oldest
            assert verbs[:3] == ["jobs enqueue", "jobs enqueue", "audit init"], verbs
            text = screen_text(app)
            assert "bo (cli)" in text and "bo's backfill" in text and "ana's retry" in text
            assert "audit table" in text and "\x1b" not in text and "\x07" not in text
            assert "mallory" in text and "jobs [bold]retry[/]" in text
            await pilot.press("escape")
            await until(pilot, lambda: not isinstance(app.screen, AuditScreen))
            # and through the command line
            await pilot.press("colon")
            await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
            await pilot.press(*"aud", "tab", "enter")
            await until(pilot, lambda: isinstance(app.screen, AuditScreen))
            assert app.crash is None
    finally:
        store.close()


async def test_audit_screen_reads_this_databases_lines_of_the_local_file(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a table, the local file's entries of this database only (another
    database's lines stay out), as ``qctl audit list`` sorts them."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    here = {"system": "azync", "dsn": "here"}
    audit.append(audit.Entry("cli", "jobs retry", here, time="2026-01-02T00:00:02Z"), print)
    audit.append(audit.Entry("cli", "jobs delete", here, time="2026-01-02T00:00:01Z"), print)
    elsewhere = {"system": "azync", "dsn": "elsewhere"}
    audit.append(audit.Entry("cli", "jobs purge", elsewhere), print)
    store = open_store(database)
    app = QctlTop(store, live=False, location="test", audit_where=here)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("a")
            await until(pilot, lambda: len(row_keys(app, "#audit")) == 2)
            t = app.screen.query_one("#audit", Table)
            assert [str(t.get_row(k)[2]) for k in row_keys(app, "#audit")] == [
                "jobs retry",
                "jobs delete",
            ]
            assert "local file" in screen_text(app)
    finally:
        store.close()


async def test_o_sorts_the_rows_shown_by_any_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``o`` sorts by the next column (the header's arrow says which), ``O`` the other
    way, past the last column the rows come back in the order read; the cursor stays on
    its row."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    here = {"system": "azync", "dsn": "here"}
    for user, verb, at in [("cy", "b verb", "03"), ("al", "c verb", "01"), ("bo", "a verb", "02")]:
        entry = audit.Entry("cli", verb, here, user=user, time=f"2026-01-02T00:{at}:00Z")
        audit.append(entry, print)
    store = open_store(f"sqlite:///{tmp_path / 'x.db'}")
    app = QctlTop(store, live=False, location="test", audit_where=here)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("a")
            await until(pilot, lambda: len(row_keys(app, "#audit")) == 3)
            t = app.screen.query_one("#audit", Table)

            def column(i: int) -> list[str]:
                return [str(t.get_row(k)[i]) for k in row_keys(app, "#audit")]

            assert column(2) == ["b verb", "a verb", "c verb"]  # newest first
            await pilot.press("o")  # by when
            assert column(2) == ["c verb", "a verb", "b verb"]
            assert str(t.columns[t.sort_column or ""].label) == "when ▲"  # type: ignore[index]
            assert "audit trail, sorted by when ▲: this account's local file" in screen_text(app)
            await pilot.press("o")  # by who
            assert column(1) == ["al (cli)", "bo (cli)", "cy (cli)"]
            t.move_cursor(row=0)
            await pilot.press("O")  # who, the other way: the cursor stays on al
            assert column(1) == ["cy (cli)", "bo (cli)", "al (cli)"]
            assert str(t.get_row_at(t.cursor_row)[1]) == "al (cli)"
            await pilot.press("o")  # by verb
            assert column(2) == ["a verb", "b verb", "c verb"]
            for _ in range(len(t.columns) - 2):
                await pilot.press("o")
            assert t.sort_column is None
            assert column(2) == ["b verb", "a verb", "c verb"]
            assert all("▲" not in str(c.label) for c in t.columns.values())
    finally:
        store.close()


def test_audit_list_and_the_screen_read_one_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``qctl audit list`` reads through ``audit.listing`` too: the same entries."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    audit.append(audit.Entry("cli", "jobs retry", {"system": "azync", "dsn": "here"}), print)
    listed, said = audit.listing(None)
    out = CliRunner().invoke(cli, ["audit", "list", "-o", "json"])
    assert json.loads(out.stdout) == listed and said == ""


async def test_a_sorted_page_acts_on_the_row_under_the_cursor(store: Any) -> None:
    """On a page of jobs (``MarkedPages``), sorted by ``o``/``O``, the row an action
    takes is the one under the cursor, found by its key, not by its place in the page."""
    from qctl.systems.azync.tui import JobsPane
    from qctl_store.types import EnqueueParams, JobState, Source

    k = f"sort_{uuid.uuid4().hex[:8]}"
    for c in "bca":
        store.enqueue(EnqueueParams(kind=f"{k}_{c}"))
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.open_with(Source.QUEUE, k, JobState.PENDING)
        await until(pilot, lambda: len(row_keys(app, "#jobs-table")) == 3)
        t = app.screen.query_one("#jobs-table", Table)
        t.focus()
        kind_at = list(t.columns).index("kind")  # type: ignore[arg-type]
        while t.sort_column != "kind":
            await pilot.press("o")
        await pilot.press("O")  # by kind, the other way: c, b, a
        await until(pilot, lambda: [str(c)[-1] for c in t.get_column_at(kind_at)] == list("cba"))
        for row, kind in enumerate("cba"):
            t.move_cursor(row=row)
            job = pane.current_row()
            assert job is not None and job.kind == f"{k}_{kind}"
            assert str(job.id) == row_keys(app, "#jobs-table")[row]
