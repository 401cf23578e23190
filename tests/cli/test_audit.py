"""The audit trail (``qctl.core.audit``): a write of the command line and the same write
of the dashboard each append one entry with the same fields; read-only refusals and dry
runs append none; the log is private, never holds a password, and a log that cannot be
written warns once and never stops the write; ``qctl audit`` lists it."""

from __future__ import annotations

import asyncio
import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qctl.cli.context import CliContext
from qctl.core import audit
from qctl.tui.app import QctlTop
from qctl_store.types import JobState, Source
from tests.cli.conftest import Run, make_dead
from tests.cli.test_hygiene import imports
from tests.conftest import PG_DSN
from tests.tui.helpers import SIZE, until
from tests.tui.test_app import confirm, open_jobs

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "qctl" / "audit.jsonl"


def entries(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def retry_in_dashboard(st: Any, kind: str, db_args: list[str], answer: str) -> list[str]:
    """Retry the dead job of ``kind`` in ``qctl top`` (``R``), answering ``answer``; the
    notices it showed."""
    c = CliContext.resolve(dsn=db_args[1], schema=db_args[3] if len(db_args) > 2 else None)
    c.system()
    app = QctlTop(st, live=False, location="test", audit_where=c.audit_where())
    notices: list[str] = []
    shown = app.notify
    app.notify = lambda text, **kw: (notices.append(str(text)), shown(text, **kw))[1]  # type: ignore[method-assign]

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await open_jobs(pilot, app, kind, JobState.DEAD)
            await confirm(pilot, app, "R", answer)
            await until(pilot, lambda: app.actions_done or answer == "n")

    asyncio.run(drive())
    return notices


def test_a_cli_write_and_the_same_dashboard_write_append_alike(
    run: Run, st: Any, kind: str, db_args: list[str], log: Path
) -> None:
    [by_cli] = make_dead(st, kind)
    result = run("jobs", "retry", str(by_cli), "--yes", "--reason", "ticket 42")
    assert result.exit_code == 0, result.output
    [by_top] = make_dead(st, kind)
    retry_in_dashboard(st, kind, db_args, "y")
    assert st.get_job(Source.QUEUE, by_top).state == JobState.PENDING
    cli, top = entries(log)
    assert list(cli) == list(top)
    assert cli["front"] == "cli" and top["front"] == "dashboard"
    assert cli["verb"] == top["verb"] == "jobs retry"
    assert cli["ids"] == [str(by_cli)] and top["ids"] == [str(by_top)]
    assert cli["ids_count"] == top["ids_count"] == 1
    assert cli["done"] == top["done"] == 1
    assert cli["exit_status"] == top["exit_status"] == 0
    assert cli["error"] is top["error"] is None
    assert cli["reason"] == "ticket 42" and top["reason"] is None
    assert top["selection"]["asked"].startswith("Retry 1 azync job (1 dead: ")
    where = ("system", "context", "dsn", "schema", "db_role")
    assert [cli[k] for k in where] == [top[k] for k in where]
    assert cli["system"] == "azync"
    assert cli["user"] == top["user"] == audit.os_user()
    assert cli["time"] < top["time"] and cli["time"].endswith("Z")


def test_declined_and_refused_are_recorded_read_only_and_dry_runs_are_not(
    run: Run, st: Any, kind: str, db_args: list[str], log: Path
) -> None:
    [job] = make_dead(st, kind)
    assert run("--read-only", "jobs", "retry", str(job), "--yes").exit_code == 4
    assert run("jobs", "retry", "--kind", kind, "--dry-run").exit_code == 0
    assert entries(log) == []
    assert run("jobs", "retry", "--kind", kind).exit_code == 4  # no terminal, no --yes
    retry_in_dashboard(st, kind, db_args, "n")
    cli, top = entries(log)
    assert st.get_job(Source.QUEUE, job).state == JobState.DEAD
    assert cli["exit_status"] == top["exit_status"] == 4
    assert cli["done"] == top["done"] == 0
    assert cli["selection"] == {"--kind": kind}
    assert "pass --yes" in cli["error"] and top["error"] == "declined; nothing was changed"


def test_a_usage_error_writes_no_entry(run: Run, st: Any, kind: str, log: Path) -> None:
    """A command refused as bad input (exit 2) changed nothing: the trail stays as it
    was, whether the command refused before or after its read-only check."""
    [job] = make_dead(st, kind)
    assert run("jobs", "retry", str(job), "--yes").exit_code == 0
    before = entries(log)
    assert len(before) == 1
    for bad in (
        ["jobs", "retry", "zzz", "--yes"],
        ["jobs", "retry", "--kind", kind, "--older-than", "nonsense", "--yes"],
        ["demo", "--system", "hopper", "--no-tui"],  # refused by hopper's demo
        ["demo", "--system", "nosuch"],
    ):
        result = run(*bad)
        assert result.exit_code == 2, (bad, result.output)
    assert entries(log) == before


def test_log_is_private_and_holds_no_password(
    st: Any, kind: str, module_db: tuple[str, str, Path], db_args: list[str], log: Path
) -> None:
    """The log is 0600 in a 0700 directory on both backends; on PostgreSQL a DSN's password
    is replaced by ``***`` (a SQLite path holds none)."""
    from typer.testing import CliRunner

    from qctl.cli.main import app

    backend, schema, _ = module_db
    [job] = make_dead(st, kind)
    args = db_args
    if backend == "postgres":
        args = [
            "--dsn",
            PG_DSN.replace("://postgres@", "://postgres:s3cr3t-pw@"),
            "--schema",
            schema,
        ]
        assert args[1] != PG_DSN
    result = CliRunner().invoke(app, [*args, "jobs", "retry", str(job), "--yes"])
    assert result.exit_code == 0, result.output
    [entry] = entries(log)
    if backend == "postgres":
        assert "s3cr3t-pw" not in log.read_text()
        assert entry["dsn"] == PG_DSN.replace("://postgres@", "://postgres:***@")
        assert entry["db_role"] == "postgres" and entry["schema"] == schema
    else:
        assert entry["dsn"] == db_args[1] and entry["db_role"] is None
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


def test_an_unwritable_log_warns_once_and_the_write_happens(
    run: Run, st: Any, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")  # a file where the directory should be: even root cannot
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    monkeypatch.setattr(audit, "_warned", set())
    first, second = make_dead(st, kind, 2)
    one = run("jobs", "retry", str(first), "--yes")
    two = run("jobs", "retry", str(second), "--yes")
    assert one.exit_code == two.exit_code == 0, (one.output, two.output)
    assert st.get_job(Source.QUEUE, first).state == JobState.PENDING
    assert st.get_job(Source.QUEUE, second).state == JobState.PENDING
    [warning] = [line for line in one.stderr.splitlines() if "warning" in line]
    assert warning.startswith("qctl: warning: audit log ") and "unrecorded" in warning
    assert "warning" not in two.stderr


def test_an_unwritable_log_warns_in_the_dashboard_and_the_write_happens(
    st: Any, kind: str, db_args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    monkeypatch.setattr(audit, "_warned", set())
    [job] = make_dead(st, kind)
    notices = retry_in_dashboard(st, kind, db_args, "y")
    assert st.get_job(Source.QUEUE, job).state == JobState.PENDING
    assert [n for n in notices if n.startswith("audit log ") and "unrecorded" in n], notices


def test_a_dashboard_entry_is_dated_when_its_action_started(
    st: Any, kind: str, db_args: list[str], log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the command line's: the time the action was asked for, not its end."""
    stamps = iter(f"2026-01-01T00:00:0{n}.000000Z" for n in range(10))
    monkeypatch.setattr(audit, "now", lambda: next(stamps))
    make_dead(st, kind)
    retry_in_dashboard(st, kind, db_args, "y")
    [entry] = entries(log)
    assert entry["time"] == "2026-01-01T00:00:00.000000Z"


def test_reason_from_the_environment_and_a_bulk_walk_counts(
    run: Run, st: Any, kind: str, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QCTL_REASON", "nightly cleanup")
    make_dead(st, kind, 3)
    assert run("jobs", "retry", "--kind", kind, "--yes").exit_code == 0
    [entry] = entries(log)
    assert entry["reason"] == "nightly cleanup"
    assert entry["done"] == 3 and entry["selection"] == {"--kind": kind}


def test_a_vacuum_records_the_rows_it_removed(run: Run, st: Any, kind: str, log: Path) -> None:
    make_dead(st, kind, 3)
    args = ["vacuum", "dead", "--older-than", "0", "--kind", kind, "--source", "queue"]
    result = run(*args, "--yes", "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["total"] == 3
    [entry] = entries(log)
    assert (entry["verb"], entry["done"], entry["exit_status"]) == ("vacuum dead", 3, 0)


def test_qctl_audit_lists_newest_first_filtered_and_sanitised(log: Path, run: Run) -> None:
    where = audit.where("azync", "prod", "postgresql://ops:***@db/app", "azync", "ops")
    for verb, reason, time in [
        ("jobs retry", "old", "2026-01-01T00:00:00.000000Z"),
        ("dags cancel", "evil \x1b[31mred", "2026-01-02T00:00:00.000000Z"),
        ("jobs delete", "new", "2026-01-03T00:00:00.000000Z"),
    ]:
        audit.append(audit.Entry("cli", verb, where, reason=reason, time=time), print)
    assert "\x1b" not in log.read_text()  # the file is ASCII, every control escaped
    listed = json.loads(run("audit", "-o", "json").stdout)
    assert [e["reason"] for e in listed] == ["new", "evil \x1b[31mred", "old"]
    jobs = json.loads(run("audit", "--verb", "jobs", "-o", "json").stdout)
    assert [e["verb"] for e in jobs] == ["jobs delete", "jobs retry"]
    since = json.loads(run("audit", "--since", "2026-01-02", "-o", "json").stdout)
    assert [e["verb"] for e in since] == ["jobs delete", "dags cancel"]
    table = run("audit")
    assert table.exit_code == 0 and "\x1b" not in table.stdout
    assert "evil \\x1b[31mred" in table.stdout or "evil ^[" in table.stdout
    bad = run("audit", "--since", "yesterday-ish")
    assert bad.exit_code == 2 and bad.stderr.startswith("qctl: error: --since")


def test_since_takes_a_duration_as_that_long_ago(log: Path, run: Run) -> None:
    where = audit.where("azync", "prod", "postgresql://ops@db/app", "azync", "ops")
    hour_ago = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    for verb, time in [("jobs retry", "2026-01-01T00:00:00.000000Z"), ("jobs delete", hour_ago)]:
        audit.append(audit.Entry("cli", verb, where, time=time), print)
    for since in ("1d", "-1d", "90m"):
        listed = json.loads(run("audit", "--since", since, "-o", "json").stdout)
        assert [e["verb"] for e in listed] == ["jobs delete"], since
    assert json.loads(run("audit", "--since", "30m", "-o", "json").stdout) == []


def test_qctl_audit_is_a_plain_command(tmp_path: Path) -> None:
    """No textual, pool, DBOS or database driver: it reads one file."""
    assert imports(["audit"], tmp_path) in (
        {"code": 0, "heavy": []},
        {"code": 0, "heavy": ["qctl_store"]},  # its errors, as every command's options
    )


def test_a_demo_names_its_own_database(tmp_path: Path) -> None:
    """A demo's dashboard records the demo's database, not the context's (the DBOS demo
    writes to its own file beside qctl's demo database)."""
    c = CliContext.resolve(dsn=PG_DSN, schema="elsewhere")
    demo = tmp_path / "dbos-demo.sqlite"
    where = c.audit_where(f"sqlite:///{demo}", "dbos", "")
    assert (where["system"], where["dsn"], where["schema"]) == ("dbos", f"sqlite:///{demo}", None)
    assert where["db_role"] is None
    pg = c.audit_where("postgresql://ops:secret@db/app", "hopper", "hop")
    assert (pg["system"], pg["schema"], pg["db_role"]) == ("hopper", "hop", "ops")
    assert "secret" not in json.dumps(pg)


def test_the_demos_entry_names_the_database_it_ran_on(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``qctl demo`` under a context (QCTL_DSN) runs on its own database: its entry names
    that one, not the context's."""
    from typer.testing import CliRunner

    from qctl.cli.main import app

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("QCTL_DSN", f"sqlite:///{tmp_path / 'operated.db'}")
    result = CliRunner().invoke(app, ["demo", "--no-tui", "--duration", "1s", "--seed", "1"])
    assert result.exit_code == 0, result.output
    [entry] = entries(log)
    demo = tmp_path / "data" / "qctl" / "demo.db"
    assert (entry["verb"], entry["system"], entry["dsn"]) == ("demo", "azync", f"sqlite:///{demo}")


def test_a_demo_retargets_the_pending_entry() -> None:
    """The entry ``qctl demo`` began on the context's schema names the demo's schema."""
    c = CliContext.resolve(dsn=PG_DSN, schema="operated")
    audit.begin("demo", c.audit_where(), {})
    where = c.demo_where(PG_DSN, "river", "river_demo")
    entry = audit._pending.get()
    audit._pending.set(None)
    assert entry is not None and entry.where is where and where["schema"] == "river_demo"
