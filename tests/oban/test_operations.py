"""The rest of qctl on Oban, in both flavours: vacuum with the pruner's semantics and a
dry run, OpenMetrics, Oban's notifications through watch and the dashboard's change
feed."""

from __future__ import annotations

import base64
import gzip
import json
import threading
from typing import Any

import psycopg

from qctl.core.changes import RESET
from qctl.systems.oban.database import Database
from tests.conftest import PG_DSN
from tests.oban import ddl
from tests.oban.conftest import Run, data

OLD = "timezone('UTC', now()) - interval '2 days'"


def test_vacuum_prunes_as_the_pruner(
    oban: psycopg.Connection[Any], qctl: Run, flavour: str
) -> None:
    oban.execute("DELETE FROM oban_jobs")
    old = {
        state: ddl.insert(oban, "pruned", 1, state=state)[0]
        for state in ("completed", "cancelled", "discarded", "retryable")
    }
    # Each pruner reads its own instant of a completed job.
    stamp = "completed_at" if flavour == "oban-py" else "attempted_at"
    oban.execute(
        f"UPDATE oban_jobs SET {stamp} = {OLD}, cancelled_at = {OLD}, discarded_at = {OLD},"
        f" scheduled_at = {OLD}"
    )
    [fresh] = ddl.insert(oban, "pruned", 1, state="completed")
    oban.execute(
        f"UPDATE oban_jobs SET completed_at = now(), attempted_at = now() WHERE id = {fresh}"
    )
    plan = data(qctl("vacuum", "all", "--older-than", "1d", "--dry-run", "-o", "json"))
    assert plan["tables"] == [{"table": "oban_jobs", "would_remove": 3}]
    assert oban.execute("SELECT count(*) FROM oban_jobs").fetchone() == (5,)
    done = data(qctl("vacuum", "all", "--older-than", "1d", "--yes", "-o", "json"))
    assert done["tables"] == [{"table": "oban_jobs", "removed": 3}]
    left = {r[0] for r in oban.execute("SELECT id FROM oban_jobs").fetchall()}
    assert left == {old["retryable"], fresh}
    assert qctl("vacuum", "all", "--older-than", "0s", "--yes").exit_code == 2


def test_metrics(oban: psycopg.Connection[Any], qctl: Run) -> None:
    ddl.insert(oban, "measured", 2)
    ddl.insert(oban, "measured", 1, state="discarded")
    [done] = ddl.insert(oban, "measured", 1, state="completed")
    oban.execute(f"UPDATE oban_jobs SET completed_at = timezone('UTC', now()) WHERE id = {done}")
    text = qctl("metrics").stdout
    assert 'qctl_oban_finished_last_minute{queue="measured",state="completed"} 1.0' in text
    assert 'qctl_oban_jobs{queue="measured",state="available"} 2.0' in text
    assert 'qctl_oban_failed_jobs{queue="measured"} 1.0' in text
    assert text.rstrip().endswith("# EOF")


def test_the_change_feed_hears_oban(oban: psycopg.Connection[Any], pg_schema: str) -> None:
    db = Database(PG_DSN, pg_schema)
    feed = db.changes()
    assert feed is not None
    try:
        assert feed.get(timeout=10) == RESET
        oban.execute('SELECT pg_notify(%s, \'{"queue": "fed"}\')', (f"{pg_schema}.oban_insert",))
        hint = feed.get(timeout=10)
        assert hint is not None and (hint.kind, hint.queue) == ("jobs", "fed")
        oban.execute(
            'SELECT pg_notify(%s, \'{"action": "pause", "queue": "fed"}\')',
            (f"{pg_schema}.oban_signal",),
        )
        hint = feed.get(timeout=10)
        assert hint is not None and (hint.kind, hint.queue) == ("queues", "fed")
    finally:
        feed.close()
        db.close()


def packed(value: Any) -> str:
    """A payload as oban-py's notifier sends it (``_notifier.py`` encode_payload): compact
    JSON, gzip, base64."""
    return base64.b64encode(
        gzip.compress(json.dumps(value, separators=(",", ":")).encode())
    ).decode()


BOMB = base64.b64encode(gzip.compress(b" " * 4_000_000)).decode()
"""Fits one NOTIFY, opens to megabytes."""


def test_compressed_signals_name_their_queue(pg_schema: str, oban: psycopg.Connection[Any]) -> None:
    db = Database(PG_DSN, pg_schema)
    try:
        signal = db.channel("signal")
        hint = db.hint(signal, packed({"action": "pause", "queue": "fed", "ident": "any"}))
        assert (hint.kind, hint.queue) == ("queues", "fed")
        assert db.hint(signal, packed({"action": "scale", "queue": "*"})).queue == ""
        for odd in (BOMB, packed([1, 2]), "bm90IGd6aXA=", "not base64 !", ""):
            assert (db.hint(signal, odd).queue, db.hint(signal, odd).bulk) == ("", True)
    finally:
        db.close()


def test_watch_prints_oban_notifications(pg_schema: str, oban: psycopg.Connection[Any]) -> None:
    from qctl.systems.oban.cli.watch import decoded

    sent = packed({"action": "pkill", "job_id": 7})
    assert json.loads(decoded(sent)) == {"action": "pkill", "job_id": 7}  # oban-py's own
    assert decoded("not base64 !") == "not base64 !"
    assert decoded(BOMB) == BOMB  # shown as sent, never opened past a bound
    db = Database(PG_DSN, pg_schema)
    try:
        seen: list[tuple[str, str]] = []
        stream = db.notifications([db.channel("signal")], timeout=5)

        def send() -> None:
            oban.execute("SELECT pg_notify(%s, %s)", (db.channel("signal"), sent))

        for name, payload in stream:
            if not name:
                threading.Thread(target=send).start()
                continue
            seen.append((name, payload))
            break
        assert seen == [(f"{pg_schema}.oban_signal", sent)]
    finally:
        db.close()


def test_tune_adds_the_queue_index(oban: psycopg.Connection[Any], qctl: Run) -> None:
    plan = data(qctl("db", "tune", "--dry-run", "-o", "json"))
    assert "qctl_oban_jobs_queue_id" in json.dumps(plan)
    assert data(qctl("db", "status", "-o", "json"))["console_indexes"] == []
    assert qctl("--read-only", "db", "tune").exit_code == 4
    data(qctl("db", "tune", "-o", "json"))
    assert data(qctl("db", "status", "-o", "json"))["console_indexes"] == [
        "qctl_oban_jobs_queue_id"
    ]
    [id_] = ddl.insert(oban, "tuned")
    assert [j["id"] for j in data(qctl("jobs", "list", "--queue", "tuned", "-o", "json"))] == [id_]
    oban.execute("DROP INDEX qctl_oban_jobs_queue_id")
