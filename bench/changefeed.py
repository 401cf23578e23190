"""Change feed end to end: from a write in another process to the dashboard's refresh,
per system, on PostgreSQL.

    .venv/bin/python bench/changefeed.py [--n 40] [--gap 0.5] [--systems azync,hopper,...]

For each registered system, a fresh database made by the system's own software (its
test provider, ``tests/<system>/contract.py``) is opened as ``qctl top`` opens it
(``CliContext.handle(pooled=True)``) and followed by the dashboard's refresh driver
(``qctl.tui.live.LiveFeed`` over ``changes()``), polling only once an hour so that only a
hint refreshes. A writer in another process (``--writer``) makes ``n`` changes of the
kind the system's own software notifies, ``gap`` seconds apart, each the way that
software makes it (azync's store enqueues, hopper's stand-in inserts and notifies as
hopper's Go client does, dispatch's and River's Go clients enqueue through ``tests/go``'s
harnesses, dispatch's followed by the wake its v1.5.3 sends, DBOS's client sends a
message, oban-py (the tests' partner) in turn enqueues and pauses or resumes a queue,
notifying on its insert and signal channels), and prints the wall-clock time just before
each write. The latency of a change is from that time to the first refresh after it (an
upper bound: it includes the write itself). The target: p95 within 0.5 s.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

TARGET = 0.5


def write(name: str, dsn: str, schema: str, n: int, gap: float) -> None:
    """The writer process: ``n`` changes, one line (the time before it) per change."""
    import psycopg

    from tests.go.harness import Harness, pgx_dsn

    closing: list[Any] = []
    if name == "azync":
        from qctl_store import Config
        from qctl_store.postgres import PostgresStore
        from qctl_store.types import EnqueueParams

        store = PostgresStore(dsn, Config(schema=schema, pooled=False))
        closing.append(store)

        def change() -> None:
            store.enqueue(EnqueueParams(kind="bench.feed"))

    elif name == "hopper":
        from qctl.systems.hopper.standin import StandIn

        standin = StandIn(dsn, schema)

        def change() -> None:
            # As hopper's Go client inserts: the row, then NOTIFY on ChannelInsert with
            # the queue (driver/driver.go); its SQL producer hopper_insert sends none.
            standin.insert("bench.feed", queue="bench")
            standin.conn.execute("SELECT pg_notify('hopper_insert', 'bench')")

    elif name in ("dispatch", "river"):
        harness = Harness(f"{name}d", pgx_dsn(schema))
        closing.append(harness)
        waker = psycopg.connect(dsn, autocommit=True)
        closing.append(waker)

        def change() -> None:
            if name == "dispatch":
                harness.call("enqueue", name="bench.feed", queue="bench", payload={})
                # The harness's dispatch (v0.1.0) predates the wake: from v1.5.3 its
                # enqueue sends this (store/postgres/wake.go).
                waker.execute("SELECT pg_notify('dispatch_jobs_wake', '')")
            else:
                harness.call("insert", queue="bench", n=1)

    elif name == "oban":
        from tests.oban.harness import Partner

        partner = Partner(dsn, schema)
        closing.append(partner)
        turns = itertools.cycle(("insert", "pause", "insert", "resume"))

        def change() -> None:
            # oban-py's enqueue notifies <prefix>.oban_insert, its pause and resume
            # <prefix>.oban_signal (the Oban instance's insert and signal channels).
            op = next(turns)
            partner.call(op, queue="bench")

    elif name == "dbos":
        from dbos import DBOSClient

        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT workflow_uuid FROM dbos.workflow_status LIMIT 1").fetchone()
        assert row is not None
        client = DBOSClient(system_database_url=dsn)
        closing.append(type("Destroy", (), {"close": lambda self: client.destroy()})())

        def change() -> None:
            client.send(str(row[0]), "bench", "bench.feed")

    else:
        raise SystemExit(f"no writer for {name}")
    try:
        for _ in range(n):
            time.sleep(gap)
            print(f"{time.time():.6f}", flush=True)
            change()
    finally:
        for each in closing:
            each.close()


def measure(name: str, n: int, gap: float) -> list[float]:
    """Seconds from each write to the refresh that followed it."""
    import importlib

    from qctl import systems
    from qctl.cli.context import CliContext
    from qctl.tui.live import LIVE, LiveFeed

    provider = importlib.import_module(f"tests.{name}.contract")
    with provider.database() as t:
        c = CliContext.resolve(dsn=t.dsn, schema=t.schema, system=name)
        handle = c.handle(pooled=True)
        refreshed: list[float] = []
        modes: list[str] = []
        live = threading.Event()

        def on_mode(mode: str) -> None:
            modes.append(mode)
            if mode == LIVE:
                live.set()

        screens = systems.load(systems.get(name).screens)  # as QctlTop makes its feed
        feed = LiveFeed(
            screens.changes(handle),
            lambda: refreshed.append(time.time()),
            on_mode,
            poll_interval=3600,
        )
        feed.start()
        try:
            assert live.wait(10), f"{name}: the feed never went live ({modes})"
            time.sleep(1.0)  # the opening reset's refresh
            writer = subprocess.run(
                [sys.executable, __file__, "--writer", name, t.dsn, t.schema, str(n), str(gap)],
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            time.sleep(1.0)
        finally:
            feed.stop()
            c.close()
    wrote = [float(line) for line in writer.stdout.split()]
    return [min((r for r in refreshed if r >= w), default=float("inf")) - w for w in wrote]


def pct(values: list[float], p: float) -> float:
    return sorted(values)[max(0, round(p * len(values)) - 1)]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        name, dsn, schema, n, gap = sys.argv[2:7]
        write(name, dsn, schema, int(n), float(gap))
        return
    from qctl.systems import systems

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--gap", type=float, default=0.5)
    ap.add_argument("--systems", default=",".join(s.name for s in systems()))
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    for name in args.systems.split(","):
        lat = measure(name, args.n, args.gap)
        missed = sum(1 for v in lat if v == float("inf"))
        seen = [v for v in lat if v != float("inf")]
        verdict = "met" if not missed and pct(seen, 0.95) <= TARGET else "MISSED"
        print(
            f"{name:9} {len(seen)}/{len(lat)} changes refreshed:"
            f" p50 {pct(seen, 0.5) * 1000:6.1f} ms  p95 {pct(seen, 0.95) * 1000:6.1f} ms"
            f"  max {max(seen) * 1000:6.1f} ms  ({verdict})",
            flush=True,
        )


if __name__ == "__main__":
    main()
