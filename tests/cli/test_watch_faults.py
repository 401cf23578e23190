"""Fault test: ``qctl watch`` in a subprocess on PostgreSQL. Its LISTEN connection
terminated, it says so in one stderr line (libpq's message spans three) and goes on;
SIGTERM (a supervisor's stop) and Ctrl-C end it quietly with 0.

In a database of its own, as ``test_maintain_faults`` (whose fixture it uses), so
terminating qctl's backends there touches no other test."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import psycopg

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from tests.cli.test_maintain_faults import QCTL
from tests.conftest import PG_DSN


def _start(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    err = tmp_path / "stderr"
    proc = subprocess.Popen([str(QCTL), *args], stdout=subprocess.DEVNULL, stderr=err.open("w"))
    return proc, err


def _until(what: str, check: object, proc: subprocess.Popen[bytes], err: Path) -> None:
    deadline = time.monotonic() + 30
    while not check():  # type: ignore[operator]
        assert proc.poll() is None, err.read_text()
        assert time.monotonic() < deadline, f"{what}: {err.read_text()}"
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes], sig: signal.Signals) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(15)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_watch_reconnect_is_one_line_and_sigterm_ends_it_quietly(
    fresh_pg_database: str,
    tmp_path: Path,
) -> None:
    store = PostgresStore(fresh_pg_database, Config(application_name="qctl-fault-test"))
    store.migrate()
    store.close()
    database = fresh_pg_database.rsplit("/", 1)[1]
    proc, err = _start(["--dsn", fresh_pg_database, "watch"], tmp_path)

    def listening() -> bool:
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            return bool(
                conn.execute(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = %s"
                    " AND application_name = 'qctl' AND query LIKE 'LISTEN%%'",
                    (database,),
                ).fetchall()
            )

    _until("the LISTEN connection", listening, proc, err)
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND application_name = 'qctl'",
            (database,),
        )
    _until("the loss reported", lambda: "connection lost" in err.read_text(), proc, err)
    _until("listening again", listening, proc, err)
    code = _stop(proc, signal.SIGTERM)
    lines = err.read_text().splitlines()
    lost = [i for i, line in enumerate(lines) if "connection lost" in line]
    assert len(lost) == 1, lines
    # the driver's whole message on the one line (its wording is libpq's, which varies
    # with the server and the build), nothing after it but the end's line.
    assert lines[lost[0] + 1 :] == [], lines  # SIGTERM ends it as Ctrl-C does
    assert code == 0


def test_polling_watch_ends_quietly_on_sigterm_and_ctrl_c(
    fresh_pg_database: str,
    tmp_path: Path,
) -> None:
    """dispatch's watch polls (its notification names no job): SIGTERM (a supervisor's
    stop) and Ctrl-C end it with exit 0 and no error line, as they end azync's."""
    schema = Path(__file__).parents[2] / "qctl" / "systems" / "dispatch" / "schema_6f7dda7.sql"
    with psycopg.connect(fresh_pg_database, autocommit=True) as conn:
        conn.execute(schema.read_text())  # type: ignore[arg-type]
    for sig in [signal.SIGTERM, signal.SIGINT]:
        proc, err = _start(
            ["--dsn", fresh_pg_database, "--system", "dispatch", "watch", "--refresh", "0.2"],
            tmp_path,
        )
        _until("watching", lambda: "watching" in err.read_text(), proc, err)  # noqa: B023
        code = _stop(proc, sig)
        lines = err.read_text().splitlines()
        assert code == 0, lines
        assert len(lines) == 1, lines  # "watching", and no error
        assert not any("Traceback" in line for line in lines)
