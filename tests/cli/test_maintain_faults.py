"""Fault test: ``qctl maintain`` in a subprocess on PostgreSQL keeps working while its
backends are terminated (``pg_terminate_backend``) every few seconds for a minute: due
jobs get promoted and expired leases reaped throughout, each lost connection is one
line on stderr, and SIGTERM ends it with exit 0.

It runs in its own database so that terminating "every backend of qctl" there touches
no other test; the test's own store uses another application name and is spared."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import psycopg

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from qctl_store.types import DequeueParams, EnqueueParams, JobState, Source
from tests.conftest import PG_DSN

QCTL = Path(sys.executable).parent / "qctl"
RUN_FOR = 60.0
KILL_EVERY = 3.0


def _killer(dsn: str, stop: threading.Event, kills: list[int]) -> None:
    """Every few seconds, terminate every backend the maintainer holds."""
    database = dsn.rsplit("/", 1)[1]
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        while not stop.wait(KILL_EVERY):
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND application_name = 'qctl'",
                (database,),
            ).fetchall()
            kills.append(sum(1 for (ok,) in rows if ok))


def test_maintain_survives_terminated_backends(fresh_pg_database: str, tmp_path: Path) -> None:
    store = PostgresStore(fresh_pg_database, Config(application_name="qctl-fault-test"))
    store.migrate()
    kind = f"k_{uuid.uuid4().hex[:8]}"
    err = (tmp_path / "stderr").open("w")
    proc = subprocess.Popen(
        [str(QCTL), "--dsn", fresh_pg_database, "maintain", "--interval", "500ms", "-o", "jsonl"],
        stdout=subprocess.DEVNULL,
        stderr=err,
        env={**os.environ, "QCTL_READ_ONLY": ""},
    )
    stop = threading.Event()
    kills: list[int] = []
    killer = threading.Thread(target=_killer, args=(fresh_pg_database, stop, kills), daemon=True)
    killer.start()
    delayed: list[tuple[float, uuid.UUID]] = []
    leased: list[tuple[float, uuid.UUID]] = []
    try:
        end = time.monotonic() + RUN_FOR
        while time.monotonic() < end:
            p = EnqueueParams(kind=kind, delay=timedelta(milliseconds=500))
            store.enqueue(p)
            delayed.append((time.monotonic(), p.id))
            crash = EnqueueParams(kind=f"{kind}_crash{len(leased)}")  # leased once
            store.enqueue(crash)
            store.dequeue_batch(
                Source.QUEUE,
                DequeueParams(kind=crash.kind, limit=1, lease=timedelta(milliseconds=500)),
            )
            leased.append((time.monotonic(), crash.id))
            time.sleep(2.0)
            assert proc.poll() is None, (tmp_path / "stderr").read_text()
        time.sleep(8.0)  # the last arrivals: a back-off and a pass
        assert proc.poll() is None, (tmp_path / "stderr").read_text()
    finally:
        stop.set()
        killer.join(10)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(15)
        finally:
            if proc.poll() is None:
                proc.kill()
        err.close()
    stderr = (tmp_path / "stderr").read_text()
    assert code == 0, stderr
    assert sum(1 for k in kills if k) >= 10, kills  # it was really cut off, many times
    lost = [line for line in stderr.splitlines() if "connection lost" in line]
    assert lost, stderr
    assert "Traceback" not in stderr
    # Every due job was promoted and every expired lease reaped, across the outages.
    promoted = [store.find_job(i).state for _, i in delayed]
    assert JobState.SCHEDULED not in promoted, promoted
    reaped = [store.find_job(i) for _, i in leased]
    assert all((j.state, j.reap_count) == (JobState.PENDING, 1) for j in reaped), [
        (j.state, j.reap_count) for j in reaped
    ]
    store.close()
