"""Fault tests on PostgreSQL: a lock another session holds, on the job table or on rows,
turns a command into one line and exit 7 within its ``--lock-timeout``, and the server
has no statement of qctl left waiting afterwards; the limits come from flags, the
environment, a context, or the DSN and ``PGOPTIONS``, which ``--schema`` and
``--read-only`` keep."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from typer.testing import CliRunner

from qctl.cli.context import CliContext
from qctl.cli.main import app
from qctl.core.verbs import BATCH
from qctl.systems.azync.cli import database
from qctl_store.types import DequeueParams, JobFilter, JobState, Source
from tests.cli.conftest import Run, enqueue, make_dead
from tests.conftest import PG_DSN


def lock_line(limit: str, pid: int) -> re.Pattern[str]:
    """The one line of a statement the lock timeout ``limit`` ended behind the session
    ``pid``: named by the session watch (its user, application, state and query)."""
    return re.compile(
        rf"qctl: error: timed out after {re.escape(limit)} waiting for a lock held by pid"
        rf" {pid} \(user postgres, .*\) \(lock_timeout\); raise it with --lock-timeout"
    )


@pytest.fixture(scope="module")
def backend() -> str:
    """PostgreSQL only: SQLite has no session timeouts (its busy timeout is its own)."""
    return "postgres"


@pytest.fixture
def holder() -> Iterator[psycopg.Connection[Any]]:
    """Another session, as an operator's stuck transaction or a migration would be."""
    with psycopg.connect(PG_DSN, application_name="qctl-test-holder") as conn:
        yield conn
        conn.rollback()


def blocked_by(pid: int) -> list[tuple[int, str]]:
    """(pid, query) of qctl's backends waiting on a table or row lock the session ``pid``
    holds (not for its transaction to end, as another test's CREATE INDEX CONCURRENTLY
    anywhere in the database does)."""
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, query FROM pg_stat_activity WHERE application_name = 'qctl'"
            " AND wait_event IN ('relation', 'tuple', 'transactionid')"
            " AND %s = ANY (pg_blocking_pids(pid))",
            (pid,),
        ).fetchall()
    return [(int(p), str(q)) for p, q in rows]


def qctl_behind(
    holder: psycopg.Connection[Any], *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run qctl in its own process while ``holder`` keeps its locks; the result and how
    long it took from the moment its statement was seen waiting on the holder."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qctl", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        deadline = time.monotonic() + 30
        while not blocked_by(holder.info.backend_pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "qctl never waited on the lock"
            time.sleep(0.02)
        seen = time.monotonic()
        stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - seen
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert not blocked_by(holder.info.backend_pid), "a statement of qctl is still waiting"
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr), took


def test_jobs_list_behind_an_access_exclusive_lock_times_out(
    db_args: list[str], pg_schema: str, holder: psycopg.Connection[Any]
) -> None:
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    result, took = qctl_behind(holder, *db_args, "--lock-timeout", "1s", "jobs", "list")
    assert (result.returncode, result.stdout) == (7, "")
    [line] = result.stderr.splitlines()
    assert lock_line("1s", holder.info.backend_pid).fullmatch(line), line
    assert "application 'qctl-test-holder'" in line and "LOCK TABLE" in line
    print(f"jobs list: lock_timeout 1s, timed out {took:.2f}s after its wait was seen")


def test_the_default_lock_timeout_applies(
    db_args: list[str], pg_schema: str, holder: psycopg.Connection[Any]
) -> None:
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    result, took = qctl_behind(holder, *db_args, "queues", "list")
    assert result.returncode == 7
    [line] = result.stderr.splitlines()
    assert lock_line("5s", holder.info.backend_pid).fullmatch(line), line
    print(f"queues list: default lock_timeout 5s, timed out {took:.2f}s after its wait was seen")


@pytest.mark.parametrize(
    ("verb", "state"),
    [
        (["jobs", "retry", "--kind", "{kind}", "--yes"], JobState.DEAD),
        (["jobs", "pause", "--kind", "{kind}", "--yes"], JobState.PENDING),
        (
            ["vacuum", "completed", "--older-than", "1ms", "-s", "queue", "--yes"],
            JobState.SUCCEEDED,
        ),
        (["nuke", "-s", "queue", "--yes"], JobState.DEAD),
    ],
    ids=["retry", "pause", "vacuum-completed", "nuke"],
)
def test_a_writing_verb_behind_row_locks_times_out_and_writes_nothing(
    db_args: list[str],
    pg_schema: str,
    st: Any,
    kind: str,
    holder: psycopg.Connection[Any],
    verb: list[str],
    state: JobState,
) -> None:
    ids = make_dead(st, kind, 3) if state == JobState.DEAD else enqueue(st, kind, 3)
    if state == JobState.SUCCEEDED:
        for job in st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=3)):
            st.ack(job.id, job.lease_token)
        time.sleep(0.01)  # older than the vacuum's retention
    holder.execute(
        f'SELECT id FROM "{pg_schema}".azync_jobs WHERE kind = %s FOR UPDATE', (kind,)
    ).fetchall()
    args = [a.replace("{kind}", kind) for a in verb]
    result, took = qctl_behind(holder, *db_args, *args, env={"QCTL_LOCK_TIMEOUT": "1500ms"})
    assert result.returncode == 7, result.stderr
    assert lock_line("1.5s", holder.info.backend_pid).fullmatch(result.stderr.splitlines()[-1])
    print(f"{' '.join(args)}: lock_timeout 1.5s, timed out {took:.2f}s after its wait was seen")
    holder.rollback()
    jobs, total = st.list_jobs(Source.QUEUE, JobFilter(kind=kind))
    assert total == 3 and {j.state for j in jobs} == {state}
    assert {j.id for j in jobs} == set(ids)


def test_a_bulk_delete_passes_over_rows_another_session_holds(
    db_args: list[str],
    pg_schema: str,
    st: Any,
    kind: str,
    holder: psycopg.Connection[Any],
) -> None:
    """A bulk delete picks its rows with SKIP LOCKED (a row a worker is leasing is not
    its to delete), so it waits for no lock: it leaves the rows another session holds."""
    ids = make_dead(st, kind, 3)
    holder.execute(
        f'SELECT id FROM "{pg_schema}".azync_jobs WHERE kind = %s FOR UPDATE', (kind,)
    ).fetchall()
    verb = ["jobs", "delete", "--state", "dead", "--kind", kind, "--yes"]
    result = subprocess.run(
        [sys.executable, "-m", "qctl", *db_args, *verb],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "QCTL_LOCK_TIMEOUT": "30s"},
    )
    assert result.returncode == 3, result.stderr
    assert result.stderr == "qctl: error: nothing deleted; skipped 3 (3 held by another session)\n"
    holder.rollback()
    jobs, total = st.list_jobs(Source.QUEUE, JobFilter(kind=kind))
    assert total == 3 and {j.id for j in jobs} == set(ids)


def test_a_statement_timeout_has_its_own_line(
    db_args: list[str], pg_schema: str, holder: psycopg.Connection[Any]
) -> None:
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    result, _ = qctl_behind(
        holder, *db_args, "--lock-timeout", "0", "--statement-timeout", "1s", "jobs", "list"
    )
    assert result.returncode == 7
    assert result.stderr.splitlines() == [
        "qctl: error: timed out after 1s running one statement (statement_timeout); "
        "raise it with --statement-timeout"
    ]


def test_a_dsn_statement_timeout_is_a_timeout_not_unavailable(
    pg_schema: str, holder: psycopg.Connection[Any]
) -> None:
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    dsn = f"{PG_DSN}?options=-c%20statement_timeout%3D700"
    result, _ = qctl_behind(
        holder, "--dsn", dsn, "--schema", pg_schema, "--lock-timeout", "0", "jobs", "list"
    )
    assert result.returncode == 7
    assert result.stderr.splitlines() == [
        "qctl: error: timed out running one statement (statement_timeout); "
        "raise it with --statement-timeout"
    ]


# --- where the limits come from -------------------------------------------------------------


def session(c: CliContext, *names: str) -> dict[str, str]:
    with database.store(c).read() as cur:  # type: ignore[attr-defined]
        return {n: cur.execute(f"SHOW {n}").fetchone()[n] for n in names}


SETTINGS = ("statement_timeout", "lock_timeout", "work_mem", "search_path")


def test_pgoptions_survive_schema_and_read_only(
    pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c work_mem=1234kB -c lock_timeout=3s")
    c = CliContext.resolve(dsn=PG_DSN, schema=pg_schema, read_only=True, system="azync")
    try:
        shown = session(c, *SETTINGS, "default_transaction_read_only")
    finally:
        c.close()
    assert shown == {
        "statement_timeout": "10s",  # qctl's default: PGOPTIONS sets none
        "lock_timeout": "3s",  # PGOPTIONS' own, not qctl's default
        "work_mem": "1234kB",
        "search_path": pg_schema,
        "default_transaction_read_only": "on",
    }


def test_flags_win_over_the_environment_and_the_dsn(
    pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=3s")
    monkeypatch.setenv("QCTL_STATEMENT_TIMEOUT", "20s")
    dsn = f"{PG_DSN}?options=-c%20statement_timeout%3D4321"
    c = CliContext.resolve(dsn=dsn, schema=pg_schema, lock_timeout="250ms", system="azync")
    try:
        shown = session(c, "statement_timeout", "lock_timeout")
    finally:
        c.close()
    assert shown == {"statement_timeout": "20s", "lock_timeout": "250ms"}


def test_a_context_sets_its_limits(pg_schema: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[contexts.slow]\ndsn = "{PG_DSN}"\nschema = "{pg_schema}"\n'
        'statement_timeout = "1m"\nlock_timeout = "0"\n'
    )
    c = CliContext.resolve(context="slow", system="azync", environ={}, config_file=config)
    try:
        shown = session(c, "statement_timeout", "lock_timeout")
    finally:
        c.close()
    assert shown == {"statement_timeout": "1min", "lock_timeout": "0"}


def test_context_add_stores_the_limits_a_session_then_has(
    pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    add = ["context", "add", "slow", "--dsn", PG_DSN, "--schema", pg_schema, "--system", "azync"]
    result = CliRunner().invoke(app, [*add, "--statement-timeout", "1m", "--lock-timeout", "0"])
    assert result.exit_code == 0, result.output
    assert "statement_timeout 1m, lock_timeout 0" in result.stdout
    listed = CliRunner().invoke(app, ["context", "list", "-o", "json"]).stdout
    assert '"statement_timeout": "1m"' in listed and '"lock_timeout": "0"' in listed
    c = CliContext.resolve(context="slow", environ={}, config_file=tmp_path / "qctl/config.toml")
    try:
        shown = session(c, "statement_timeout", "lock_timeout")
    finally:
        c.close()
    assert shown == {"statement_timeout": "1min", "lock_timeout": "0"}

    result = CliRunner().invoke(app, [*add, "--replace", "--lock-timeout", "soon"])
    assert result.exit_code == 2
    assert result.stderr.startswith("qctl: error: --lock-timeout: invalid duration 'soon'")
    assert result.stderr.count("\n") == 1
    assert "1m" in (tmp_path / "qctl/config.toml").read_text(), "left as it was"


def test_a_bad_timeout_is_a_usage_error(run: Run) -> None:
    result = run("--lock-timeout", "soon", "jobs", "list")
    assert result.exit_code == 2
    assert "--lock-timeout: invalid duration 'soon'" in result.stderr


def test_dbos_reads_time_out_behind_a_lock() -> None:
    from tests.dbos.fixtures import migrate, pg_database

    with pg_database() as url:
        migrate(url)
        with psycopg.connect(url) as other:
            other.execute("LOCK TABLE dbos.workflow_status IN ACCESS EXCLUSIVE MODE")
            result = CliRunner().invoke(
                app, ["--dsn", url, "--lock-timeout", "700ms", "workflows", "list"]
            )
            pid = other.info.backend_pid
            other.rollback()
    assert result.exit_code == 7, result.output
    [line] = result.stderr.splitlines()
    assert lock_line("0.7s", pid).fullmatch(line), line


def test_a_killed_qctl_leaves_no_waiting_statement_past_its_lock_timeout(
    db_args: list[str], pg_schema: str, st: Any, kind: str, holder: psycopg.Connection[Any]
) -> None:
    make_dead(st, kind, 3)
    holder.execute(
        f'SELECT id FROM "{pg_schema}".azync_jobs WHERE kind = %s FOR UPDATE', (kind,)
    ).fetchall()
    verb = ["jobs", "retry", "--kind", kind, "--yes"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qctl", *db_args, "--lock-timeout", "2s", *verb],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not blocked_by(holder.info.backend_pid):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    killed = time.monotonic()
    # Without its lock timeout the orphaned statement would wait as long as the holder's
    # transaction; the limit here only keeps a failure from hanging the run.
    while blocked_by(holder.info.backend_pid):
        assert time.monotonic() - killed < 60, "the server kept qctl's statement"
        time.sleep(0.05)
    print(f"killed qctl: its statement left the server {time.monotonic() - killed:.2f}s later")


def test_the_dashboards_fast_start_takes_the_timeouts() -> None:
    from qctl.cli.launch import top_line

    line = ["--lock-timeout", "2s", "top", "--statement-timeout=30s"]
    assert top_line(line) == ({"lock_timeout": "2s", "statement_timeout": "30s"}, 2.0)


def test_dbos_writes_time_out_behind_a_row_lock() -> None:
    from dbos import DBOSClient

    from tests.dbos.fixtures import migrate, pg_database

    with pg_database() as url:
        migrate(url)
        client = DBOSClient(system_database_url=url)
        try:
            handle = client.enqueue({"workflow_name": "work", "queue_name": "q"}, 1)
            wf = handle.get_workflow_id()
        finally:
            client.destroy()
        with psycopg.connect(url) as other:
            other.execute(
                "SELECT 1 FROM dbos.workflow_status WHERE workflow_uuid = %s FOR UPDATE", (wf,)
            ).fetchall()
            start = time.monotonic()
            result = CliRunner().invoke(
                app, ["--dsn", url, "--lock-timeout", "700ms", "workflows", "cancel", wf, "--yes"]
            )
            took = time.monotonic() - start
            other.rollback()
            status = other.execute(
                "SELECT status FROM dbos.workflow_status WHERE workflow_uuid = %s", (wf,)
            ).fetchone()
    assert result.exit_code == 7, (result.stdout, result.stderr)
    [why] = result.stderr.splitlines()  # nothing was committed: the error alone
    # DBOSClient's own connection, which qctl does not watch: the holder is not named.
    assert why == (
        "qctl: error: timed out after 0.7s waiting for a lock held by another session "
        "(lock_timeout); raise it with --lock-timeout"
    )
    assert status == ("ENQUEUED",)
    print(f"DBOS workflows cancel: lock_timeout 0.7s, exited after {took:.2f}s in all")


# --- interrupted, on a terminal, and a server that stops answering ----------------------


def start_behind(
    holder: psycopg.Connection[Any], *args: str, **popen: Any
) -> subprocess.Popen[str]:
    """qctl started in its own process, returned once its statement waits on ``holder``."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "qctl", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )
    deadline = time.monotonic() + 30
    while not blocked_by(holder.info.backend_pid):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"qctl never waited on the lock: {proc.communicate()}")
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize(
    ("sig", "code", "line"),
    [
        (signal.SIGTERM, 143, ["qctl: error: terminated (SIGTERM)"]),
        (signal.SIGINT, 130, []),
    ],
    ids=["SIGTERM", "SIGINT"],
)
def test_an_interrupted_qctl_cancels_its_waiting_statement(
    db_args: list[str],
    pg_schema: str,
    holder: psycopg.Connection[Any],
    sig: signal.Signals,
    code: int,
    line: list[str],
) -> None:
    """Ctrl-C or SIGTERM while a statement waits on another session's lock: the statement
    leaves the server at once (cancelled), not at the lock timeout, a minute later."""
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    proc = start_behind(holder, *db_args, "--lock-timeout", "60s", "jobs", "list")
    proc.send_signal(sig)
    sent = time.monotonic()
    _, stderr = proc.communicate(timeout=30)
    gone = time.monotonic() - sent
    assert blocked_by(holder.info.backend_pid) == []
    assert (proc.returncode, stderr.splitlines()) == (code, line)
    print(f"{sig.name}: qctl and its statement gone {gone:.2f}s later (lock_timeout 60s)")


def test_maintain_stops_on_sigterm_while_blocked(
    db_args: list[str], pg_schema: str, st: Any, kind: str, holder: psycopg.Connection[Any]
) -> None:
    """``maintain`` behind another session's lock stops on SIGTERM at once (exit 0, as
    after Ctrl-C), its waiting statement cancelled; it used to wait out the lock."""
    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    proc = start_behind(holder, *db_args, "--lock-timeout", "60s", "maintain", "--interval", "1s")
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=30)
    assert blocked_by(holder.info.backend_pid) == []
    assert proc.returncode == 0, stderr
    assert stderr.splitlines()[-1] == "maintain: stopped"


def test_on_a_terminal_qctl_says_who_holds_the_lock(
    db_args: list[str], pg_schema: str, holder: psycopg.Connection[Any], tmp_path: Path
) -> None:
    """After a second behind a lock, a line names the session holding it; once the
    holder lets go, the read completes."""
    import pexpect

    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    child = pexpect.spawn(
        sys.executable,
        ["-m", "qctl", *db_args, "--lock-timeout", "0", "jobs", "list"],
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path)},
        encoding="utf-8",
        timeout=30,
    )
    pid = holder.info.backend_pid
    child.expect(
        rf"qctl: waiting for a lock held by pid {pid} \(user postgres, "
        r"application 'qctl-test-holder', from 127\.0\.0\.1, idle in transaction for \d+s: "
        r"LOCK TABLE [^\r\n]*\)\r\n"
    )
    holder.rollback()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


def test_a_server_that_stops_answering_times_out(
    pg_schema: str, holder: psycopg.Connection[Any]
) -> None:
    """The server goes silent while qctl's statement runs (here: its answer never comes
    through): qctl gives the connection up statement_timeout + 5 s after it began, with
    one timeout line and exit 7, instead of waiting as long as the silence lasts."""
    from urllib.parse import urlsplit

    from tests.tui.test_reconnect_pg import Proxy

    holder.execute(f'LOCK TABLE "{pg_schema}".azync_jobs IN ACCESS EXCLUSIVE MODE')
    url = urlsplit(PG_DSN)
    proxy = Proxy(url.hostname or "127.0.0.1", url.port or 5432)
    try:
        dsn = url._replace(netloc=f"{url.username}@127.0.0.1:{proxy.port}").geturl()
        args = ["--dsn", dsn, "--schema", pg_schema, "--statement-timeout", "1s"]
        proc = start_behind(holder, *args, "--lock-timeout", "0", "jobs", "list")
        proxy.frozen.set()  # the statement timeout's error never reaches qctl
        start = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - start
    finally:
        proxy.close()
    assert proc.returncode == 7
    assert stderr.splitlines() == [
        "qctl: error: timed out: the server did not answer for 6s (paused or unreachable); "
        "raise it with --statement-timeout"
    ]
    print(f"a silent server: qctl gave up {took:.2f}s after the silence began")


# --- bulk work stopped part way ---------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_bulk_retry_stopped_part_way_says_what_it_did_and_how_to_finish(
    db_args: list[str],
    pg_schema: str,
    st: Any,
    kind: str,
    holder: psycopg.Connection[Any],
    fmt: str,
) -> None:
    """The dead jobs of the last batch (the highest ids: the engine plans in id order,
    1,000 a batch) are locked by another session: the batch before them commits, the one
    that reaches them times out. qctl says how many were retried in how many batches and
    that running again finishes (-o json: the result, stopped part-way, every id done);
    run again once the lock is gone, it does."""
    n = BATCH + 5
    make_dead(st, kind, n)
    holder.execute(
        f'SELECT id FROM "{pg_schema}".azync_jobs WHERE kind = %s'
        " ORDER BY id DESC LIMIT 5 FOR UPDATE",
        (kind,),
    ).fetchall()
    verb = [*db_args, "--lock-timeout", "1s", "jobs", "retry", "--all-dead", "--kind", kind]
    result, _ = qctl_behind(holder, *verb, "--yes", "--max", str(n), "-o", fmt)
    holder.rollback()
    retried = st.kind_depths(Source.QUEUE)[kind].pending
    assert retried == BATCH
    assert result.returncode == 7, result.stderr
    lines = result.stderr.splitlines()
    assert lock_line("1s", holder.info.backend_pid).fullmatch(lines[-1]), lines[-1]
    assert lines[-2] == (
        f"qctl: stopped part-way: retried {BATCH} azync jobs in 1 committed batch(es); "
        "they stay done, and running the command again finishes the rest"
    )
    if fmt == "json":
        record = json.loads(result.stdout)
        assert (record["done"], record["batches"], record["stopped_part_way"]) == (BATCH, 1, True)
        assert (record["selected"], len(record["ids"])) == (n, BATCH)
        assert lines[-1].startswith(f"qctl: error: {record['error']}")
    finish = subprocess.run(
        [sys.executable, "-m", "qctl", *verb, "--yes"], capture_output=True, text=True
    )
    assert finish.returncode == 0, finish.stderr
    assert st.kind_depths(Source.QUEUE)[kind].pending == n
