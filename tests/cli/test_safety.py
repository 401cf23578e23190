"""Bad input, faults and secrets on the command line, on both backends where it applies:
one line and exit 2 for bad input with nothing written, no password ever printed,
database text escaped in tables and CSV (JSON exact), connections that time out,
read-only that never writes a file, and files that are private and never created by
mistake."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl_store.sqlite.migrate import migrations
from qctl_store.types import JobFilter, Source
from tests.cli.conftest import Run, make_dead, out_json
from tests.conformance.test_mixed_deployment import delete_job_row, suspended_saga
from tests.conftest import PG_DSN, require_pg

OSC52 = "\x1b]52;c;ZXZpbA==\x07"  # would write "evil" to the operator's clipboard
CLEAR = "\x1bc\x1b[2J"


def qctl(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def one_line_error(result: Result, code: int) -> str:
    """The failure's only stderr line, after checking the exit code."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("qctl: error: "), result.stderr
    return lines[0]


def subprocess_qctl(
    *args: str | bytes, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """qctl in its own process (argv bytes, stream order, real connect timeouts)."""
    return subprocess.run(
        [sys.executable, "-m", "qctl", *args],
        capture_output=True,
        text=True,
        errors="replace",
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def count_jobs(st: Any, kind: str) -> int:
    return st.list_jobs(Source.QUEUE, JobFilter(kind=kind))[1]  # type: ignore[no-any-return]


# --- database text on a terminal ------------------------------------------------------


def test_tables_and_csv_escape_database_text_json_is_exact(run: Run, st: Any, kind: str) -> None:
    error = f"boom{OSC52}{CLEAR}\u202egnp"
    [id] = make_dead(st, kind, error=error)
    for fmt in ("table", "csv"):
        listed = run("jobs", "list", "--kind", kind, "--state", "dead", "-o", fmt)
        assert listed.exit_code == 0, listed.stderr
        assert "\x1b" not in listed.stdout and "\u202e" not in listed.stdout
        assert "boom\\x1b]52;c;ZXZpbA==\\x07\\x1bc\\x1b[2J\\u202egnp" in listed.stdout
    shown = run("jobs", "show", str(id))
    assert shown.exit_code == 0 and "\x1b" not in shown.stdout and "\\x1b]52" in shown.stdout
    [row] = list(
        csv.DictReader(io.StringIO(run("jobs", "list", "--kind", kind, "-o", "csv").stdout))
    )
    assert row["last_error"].startswith("boom\\x1b]52")
    [record] = out_json(run("jobs", "list", "--kind", kind, "--state", "dead", "-o", "json"))
    assert record["last_error"] == error, "JSON carries the exact text"


# --- producers write what a Go worker expects -------------------------------------------


def test_jobs_enqueue_writes_the_go_producer_budget(run: Run, st: Any, kind: str) -> None:
    plain = out_json(run("jobs", "enqueue", kind, "-o", "json"))
    pinned = out_json(run("jobs", "enqueue", kind, "--max-attempts", "3", "-o", "json"))
    job = st.find_job(uuid.UUID(plain["id"]))
    assert (job.max_attempts, job.max_attempts_explicit) == (25, False)
    job = st.find_job(uuid.UUID(pinned["id"]))
    assert (job.max_attempts, job.max_attempts_explicit) == (3, True)


# --- bad input: one line, exit 2, nothing written ---------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--payload", "[" * 100_000 + "]" * 100_000], "--payload: invalid JSON"),
        (["--delay", "1000000d"], "out of range"),
        (["--at", "10000-01-01T00:00:00Z"], "--at"),
        (["--max-attempts", "99999999999999999999"], "out of range"),
        (["--payload", '{"a":1e999}'], "payload is not JSON"),
    ],
    ids=["deep-json", "duration", "instant", "integer", "json-infinity"],
)
def test_bad_enqueue_input_is_one_line_and_writes_nothing(
    run: Run, st: Any, kind: str, args: list[str], says: str
) -> None:
    line = one_line_error(run("jobs", "enqueue", kind, *args), 2)
    assert says in line
    assert count_jobs(st, kind) == 0


def test_too_long_kind_is_refused_before_the_insert(run: Run, st: Any) -> None:
    kind = "k" * 4000  # fits a column, not a change hint (PostgreSQL's NOTIFY payload)
    line = one_line_error(run("jobs", "enqueue", kind), 2)
    assert "kind is too long" in line
    assert count_jobs(st, kind) == 0


def test_nul_in_json_is_bad_input(run: Run, st: Any, kind: str) -> None:
    # PostgreSQL's jsonb cannot hold \u0000; SQLite stores it. Either way no traceback.
    result = run("jobs", "enqueue", kind, "--payload", '{"a":"x\\u0000y"}')
    if st.backend == "postgres":
        assert "\\u0000" in one_line_error(result, 2)
        assert count_jobs(st, kind) == 0
    else:
        assert result.exit_code == 0, result.stderr


def test_argv_that_is_not_utf8_is_a_usage_error() -> None:
    bad = subprocess_qctl("jobs", "list", "--kind", os.fsdecode(b"k\xff\xfe"))
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.splitlines() == ["qctl: error: argument 'k\ufffd\ufffd' is not valid UTF-8"]


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        ("postgresql://ops:pa/ss@w%rd@127.0.0.1:1/db", "percent-encode"),
        ("host=127.0.0.1 password=s3cret dbname", 'missing "=" after "dbname"'),
        ("postgresql://ops:s3cret@[::1/db", "IPv6"),
        ("postgresql://ops:s3cret@127.0.0.1:99999/db", 'invalid port number: "99999"'),
        ("postgresql://ops:s3cret@127.0.0.1:notaport/db", 'invalid port "notaport"'),
        ("host=127.0.0.1 port=5432,x5 password=s3cret", 'invalid port "x5"'),
        ("postgresql://ops:s3cret@127.0.0.1/db?sslmode=bogus", 'invalid sslmode value: "bogus"'),
        ("postgresql://ops:s3cret@127.0.0.1/db?connect_timeout=soon", "connect_timeout"),
    ],
)
def test_malformed_dsns_are_usage_errors_without_the_password(dsn: str, says: str) -> None:
    line = one_line_error(qctl("--dsn", dsn, "jobs", "list"), 2)
    assert "malformed PostgreSQL DSN" in line or "connect_timeout" in line
    assert says in line
    for secret in ("s3cret", "pa/ss", "w%rd", "ss@w"):
        assert secret not in line


# --- secrets -------------------------------------------------------------------------------


@pytest.mark.parametrize("password", ["p%2Fss", "p%40ss", "p%25ss", "p%2F%40%25x"])
def test_password_never_printed(password: str) -> None:
    dsn = f"postgresql://ops:{password}@127.0.0.1:1/db"
    line = one_line_error(qctl("--dsn", dsn, "jobs", "list"), 6)
    assert "ops:***@127.0.0.1:1/db" in line and password not in line
    debug = subprocess_qctl("--dsn", dsn, "jobs", "list", env={"QCTL_DEBUG": "1"})
    assert debug.returncode == 6 and "Traceback" in debug.stderr
    assert password not in debug.stderr and "ops:***@" in debug.stderr


# --- connections --------------------------------------------------------------------------


@contextlib.contextmanager
def silent_server() -> Iterator[int]:
    """A TCP server that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                accepted.append(server.accept()[0])

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()
        for conn in accepted:
            conn.close()


def test_a_server_that_never_answers_times_out() -> None:
    """A server that accepts and never answers: one line and exit 6, with qctl's default
    connect timeout and with the DSN's own (their values: test_dsn.py)."""
    with silent_server() as port:
        for query in ["", "?connect_timeout=1"]:
            result = subprocess_qctl(
                "--dsn", f"postgresql://u@127.0.0.1:{port}/db{query}", "jobs", "list"
            )
            assert result.returncode == 6, result.stderr
            assert len(result.stderr.splitlines()) == 1, result.stderr
            assert "is unavailable: connection timeout expired" in result.stderr


def test_top_on_an_unreachable_database_prints_one_line() -> None:
    with silent_server() as port:
        dsn = f"postgresql://u:s3cret@127.0.0.1:{port}/db"
        result = subprocess_qctl("--system", "azync", "--dsn", dsn, "top")
    assert result.returncode == 6
    assert result.stderr.splitlines() == [
        f"qctl: error: PostgreSQL at postgresql://u:***@127.0.0.1:{port}/db is unavailable: "
        "connection timeout expired"
    ], "no pool warnings, no thread that could not be stopped"


def test_the_dsn_options_survive_schema_and_read_only(pg_schema: str) -> None:
    from qctl_store import Config
    from qctl_store.postgres import PostgresStore

    dsn = f"{PG_DSN}?options=-c%20statement_timeout%3D4321%20-c%20work_mem%3D1234kB"
    store = PostgresStore(dsn, Config(schema=pg_schema, read_only=True, pooled=False))
    try:
        with store.read() as cur:
            settings = {
                name: cur.execute(f"SHOW {name}").fetchone()[name]  # type: ignore[index]
                for name in (
                    "statement_timeout",
                    "work_mem",
                    "search_path",
                    "default_transaction_read_only",
                )
            }
    finally:
        store.close()
    assert settings == {
        "statement_timeout": "4321ms",
        "work_mem": "1234kB",
        "search_path": pg_schema,
        "default_transaction_read_only": "on",
    }


# --- schemas and files ----------------------------------------------------------------------


def schema_exists(name: str) -> bool:
    with psycopg.connect(PG_DSN) as conn:
        row = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,)).fetchone()
    return row is not None


def test_upper_case_schema_is_refused_before_anything_is_created() -> None:
    require_pg()
    name = f"Rel_Mixed_{uuid.uuid4().hex[:6]}"
    line = one_line_error(qctl("--dsn", PG_DSN, "--schema", name, "db", "migrate"), 2)
    assert "upper-case" in line and name.lower() in line
    assert not schema_exists(name) and not schema_exists(name.lower())


def test_a_missing_schema_is_named_and_only_migrate_creates_it() -> None:
    require_pg()
    name = f"qt_missing_{uuid.uuid4().hex[:8]}"
    try:
        for args in (["jobs", "list"], ["queues", "list"], ["jobs", "enqueue", "k"]):
            line = one_line_error(qctl("--dsn", PG_DSN, "--schema", name, *args), 5)
            assert f'schema "{name}" does not exist' in line, line
        assert not schema_exists(name)
        assert qctl("--dsn", PG_DSN, "--schema", name, "db", "migrate").exit_code == 0
        assert schema_exists(name)
    finally:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_a_mistyped_schema_is_named_with_the_schemas_that_hold_the_tables(
    fresh_pg_schema: str,
) -> None:
    """A typo of an existing schema is not taken for a new one: the schemas holding
    azync's tables come first (the closest as "did you mean"), `db migrate` last."""
    pg_schema = fresh_pg_schema
    assert qctl("--dsn", PG_DSN, "--schema", pg_schema, "db", "migrate").exit_code == 0
    typo = pg_schema[:-1]
    line = one_line_error(
        qctl("--dsn", PG_DSN, "--schema", typo, "--system", "azync", "jobs", "list"), 5
    )
    assert line.startswith(
        f'qctl: error: schema "{typo}" does not exist; did you mean "{pg_schema}"?'
    )
    assert line.endswith("; if it is a new one, `qctl db migrate` creates it"), line
    assert not schema_exists(typo)


def test_a_mistyped_schema_of_another_system_is_named_with_its_schemas() -> None:
    from tests.dbos.fixtures import migrate, pg_database

    with pg_database() as url:
        migrate(url)
        line = one_line_error(
            qctl("--dsn", url, "--schema", "dbso", "--system", "dbos", "workflows", "list"), 5
        )
    assert line == (
        'qctl: error: schema "dbso" does not exist; did you mean "dbos"?'
        ' DBOS\'s tables are in "dbos"'
    )


def test_db_status_shows_channel_and_schema_and_ends_the_table_first() -> None:
    require_pg()
    name = f"qt_status_{uuid.uuid4().hex[:8]}"
    result = subprocess.run(
        f"{sys.executable} -m qctl --dsn {PG_DSN} --schema {name} db status 2>&1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 5, result.stdout  # not migrated, as on SQLite
    assert f"schema            {name}" in lines
    assert f"channel           azync_{name}" in lines
    assert lines[-1] == "11 migration(s) pending: run `qctl db migrate`", lines
    table = lines[:-1]  # "key   value" rows (an empty value: the key alone)
    assert all(re.fullmatch(r"\w+( {2,}\S.*)?", line) for line in table), "the table ends first"
    assert not schema_exists(name), "status creates nothing"


def test_sqlite_path_that_does_not_exist_is_created_only_by_migrate(tmp_path: Path) -> None:
    path = tmp_path / "typo.db"
    dsn = f"sqlite:///{path}"
    for args in (["jobs", "list"], ["--read-only", "jobs", "list"], ["db", "status"]):
        line = one_line_error(qctl("--dsn", dsn, *args), 5)
        assert f"SQLite database {path} does not exist" in line
    assert not path.exists()
    dry = qctl("--dsn", dsn, "db", "migrate", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    versions = [v for v, _ in migrations()]
    listed = ", ".join(map(str, versions))
    assert dry.stdout.startswith(
        f"dry run: would create {path} and apply {len(versions)} migration(s): {listed} "
    )
    planned = qctl("--dsn", dsn, "db", "migrate", "--dry-run", "-o", "json")
    assert out_json(planned) == {
        "dry_run": True,
        "pending_versions": versions,
        "applied_version": 0,
        "rebuild_indexes": [],
    }
    assert not path.exists(), "a dry run creates nothing"
    assert qctl("--dsn", dsn, "db", "migrate").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert qctl("--dsn", dsn, "jobs", "list").exit_code == 0


def test_sqlite_read_only_never_converts_the_file(tmp_path: Path) -> None:
    path = tmp_path / "rollback.db"
    assert qctl("--dsn", f"sqlite:///{path}", "db", "migrate").exit_code == 0
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")
    before = path.read_bytes()
    listed = qctl("--dsn", f"sqlite:///{path}", "--read-only", "jobs", "list", "-o", "json")
    assert listed.exit_code == 0, listed.stderr
    assert path.read_bytes() == before, "not converted to WAL, not written"
    assert not Path(f"{path}-wal").exists()


def test_embedded_default_is_private(tmp_path: Path) -> None:
    data = tmp_path / "xdg"
    env = {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    assert qctl("jobs", "enqueue", "private", env=env).exit_code == 0  # the first write
    directory = data / "qctl"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = list(directory.iterdir())
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [
        (f.name, oct(f.stat().st_mode)) for f in files
    ]


# --- read-only and the config file ------------------------------------------------------------


@pytest.mark.parametrize("value", ["1", "true", "YES", "on", " On "])
def test_read_only_env_values_that_turn_it_on(
    db_args: list[str], st: Any, kind: str, value: str
) -> None:
    result = qctl(*db_args, "jobs", "enqueue", kind, env={"QCTL_READ_ONLY": value})
    assert "read-only" in one_line_error(result, 4)
    assert count_jobs(st, kind) == 0


@pytest.mark.parametrize("value", ["", "0", "false", "No", "OFF"])
def test_read_only_env_values_that_leave_it_off(tmp_path: Path, value: str) -> None:
    dsn = f"sqlite:///{tmp_path / 'rw.db'}"
    assert qctl("--dsn", dsn, "db", "migrate").exit_code == 0
    result = qctl("--dsn", dsn, "jobs", "enqueue", "k", env={"QCTL_READ_ONLY": value})
    assert result.exit_code == 0, result.stderr


def test_unrecognised_read_only_value_is_a_usage_error(tmp_path: Path) -> None:
    dsn = f"sqlite:///{tmp_path / 'rw.db'}"
    line = one_line_error(qctl("--dsn", dsn, "jobs", "list", env={"QCTL_READ_ONLY": "maybe"}), 2)
    assert "QCTL_READ_ONLY='maybe' is not a boolean" in line


def config_file(tmp_path: Path, text: str) -> tuple[Path, dict[str, str]]:
    """A config file holding ``text``, and the environment that makes qctl read it."""
    config = tmp_path / "cfg" / "qctl" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    return config, {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }


def test_a_broken_config_file_does_not_stop_an_explicit_dsn(tmp_path: Path) -> None:
    config, env = config_file(tmp_path, "default_context = [unterminated\n")
    dsn = f"sqlite:///{tmp_path / 'x.db'}"
    assert qctl("--dsn", dsn, "db", "migrate", env=env).exit_code == 0
    assert qctl("--dsn", dsn, "jobs", "list", env=env).exit_code == 0
    line = one_line_error(qctl("jobs", "list", env=env), 2)
    assert f"cannot read {config}" in line
    line = one_line_error(qctl("--context", "prod", "jobs", "list", env=env), 2)
    assert f"cannot read {config}" in line, "a named context needs the file"
    line = one_line_error(qctl("--dsn", dsn, "--context", "prod", "jobs", "list", env=env), 2)
    assert "--dsn and --context each name a database" in line


@pytest.mark.parametrize("mode", [0o666, 0o664, 0o646])
def test_a_config_file_writable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    """World- and group-writable alike (before: only world-writable was refused)."""
    config, env = config_file(tmp_path, '[contexts.x]\ndsn = "sqlite:///x.db"\n')
    config.chmod(mode)
    line = one_line_error(qctl("--context", "x", "jobs", "list", env=env), 2)
    assert f"refusing {config}: it is writable by its group or others" in line
    config.chmod(0o644)
    assert "refusing" not in qctl("--context", "x", "jobs", "list", env=env).stderr


def test_a_config_file_in_a_directory_others_write_is_refused(tmp_path: Path) -> None:
    config, env = config_file(tmp_path, '[contexts.x]\ndsn = "sqlite:///x.db"\n')
    config.parent.chmod(0o777)
    line = one_line_error(qctl("--context", "x", "jobs", "list", env=env), 2)
    assert f"refusing {config}: its directory may be written by another user" in line
    config.parent.chmod(0o1777)  # sticky, as /tmp: no one else can swap the file
    assert "refusing" not in qctl("--context", "x", "jobs", "list", env=env).stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_config_file_of_another_user_is_refused(tmp_path: Path) -> None:
    config, env = config_file(tmp_path, '[contexts.x]\ndsn = "sqlite:///x.db"\n')
    os.chown(config, 65534, -1)
    line = one_line_error(qctl("--context", "x", "jobs", "list", env=env), 2)
    assert f"refusing {config}: it belongs to another user (uid 65534)" in line


# --- DAGs a Go deployment still runs ------------------------------------------------------


def test_vacuum_dead_keeps_a_suspended_sagas_task_and_retry_refuses_a_gap(
    run: Run, st: Any
) -> None:
    dag_id, dead = suspended_saga(st)
    for args in (
        ["vacuum", "dead", "--source", "dag", "--older-than", "0s"],
        ["vacuum", "all", "--older-than", "30d", "--source", "dag", "--dead", "0s"],
    ):
        result = run(*args, "--yes")
        assert result.exit_code == 0, (args, result.stderr)
        assert st.find_job(dead).state == "dead", f"{args}: the suspended saga keeps it"
    delete_job_row(st, dead)
    line = one_line_error(run("dags", "retry", str(dag_id), "--yes"), 3)
    assert "has no row for task(s) a" in line
    assert st.get_dag(dag_id).state == "suspended", "nothing was changed"


def test_every_dry_run_says_so_alike(tmp_path: Path) -> None:
    """``db migrate``, ``db tune`` and ``context delete`` word their dry runs as every
    other verb does: "dry run: would ...; nothing was changed", ``"dry_run": true``."""
    from qctl.cli.main import app

    dsn = ["--dsn", f"sqlite:///{tmp_path / 'w.db'}"]
    runner = CliRunner()
    assert runner.invoke(app, [*dsn, "db", "migrate"]).exit_code == 0
    added = runner.invoke(app, ["context", "add", "w", *dsn])
    assert added.exit_code == 0, added.output
    for args in (
        [*dsn, "db", "migrate", "--dry-run"],
        [*dsn, "db", "tune", "--dry-run"],
        ["context", "delete", "w", "--dry-run"],
    ):
        text = runner.invoke(app, args)
        assert text.exit_code == 0, text.output
        assert text.stdout.startswith("dry run: ") and text.stdout.endswith(
            "; nothing was changed\n"
        ), text.stdout
        record = runner.invoke(app, [*args, "-o", "json"])
        assert '"dry_run": true' in record.stdout
