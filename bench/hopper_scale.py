"""hopper at scale: qctl's reads of a hopper database (schema version 8) with millions of
jobs across the live table and history, as ``qctl jobs list|show``, ``queues list``,
``clients list``, ``stats`` and the dashboard's refreshes run them.

    .venv/bin/python bench/hopper_scale.py [--pg DSN] [--json PATH] [--quick]
        [--jobs N] [--live-share F] [--db NAME | --db NAME --drop-db]

The schema is hopper's migrations 001..008 as ``qctl/systems/hopper/schema_5fd71c6.sql``
reproduces them (the module proxy refuses hopper), in a scratch database; then filled
with SQL: N jobs, ``--live-share`` of them live (a tenth of those running, the rest
available or scheduled), the others in history (95% completed, 5% discarded with an
error), finalized one a millisecond (the last minute holds about 60,000), each inserted
a second before it finalized, over 20 queues and 50 kinds, and a queue with 10 live jobs
and no history; ids hopper's UUIDv7s of their insertion time, in insertion order. Figures:
median of 7 after a warm-up, milliseconds, and for each read the relations any of its
statements scans sequentially (EXPLAIN of the statements it ran). Then ``qctl db tune``'s
index and the queue depths and the rare queue's listing again. ``--db`` keeps the loaded
database for the next run (which drops that index first, so its untuned figures are
untuned). Each figure says whether it is a refresh read or a first page (the 50 ms
target's) or a command.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import (  # noqa: E402
    Plans,
    Recorder,
    base_args,
    drop_database,
    kept_args,
    loaded_database,
    measure_read,
)

from qctl.systems.hopper import reads, tune, vacuum  # noqa: E402
from qctl.systems.hopper.database import Database  # noqa: E402
from qctl.systems.hopper.standin import install  # noqa: E402

MINUTE = timedelta(minutes=1)


LAYOUT = "qctl bench hopper layout v1: {n:,} jobs, {share:.2%} live"
"""What ``fill`` loads: a kept ``--db`` stamped with it is reused (``load_or_reuse``)."""


def fill(dsn: str, n: int, live_share: float) -> None:
    import psycopg

    live = int(n * live_share)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS hopper CASCADE")
        install(conn, "hopper")
        conn.execute("SET search_path = hopper")
        clients = [
            conn.execute(
                "INSERT INTO hopper_clients (hostname, expires_at) VALUES (%s, now() + interval"
                " '1 hour') RETURNING id",
                [f"host-{i}"],
            ).fetchone()[0]  # type: ignore[index]
            for i in range(8)
        ]
        conn.execute(
            "INSERT INTO hopper_leader VALUES ('default', %s, now(), now() + interval '1 hour')",
            [clients[0]],
        )
        conn.execute(
            "INSERT INTO hopper_queues (name) SELECT 'q' || g FROM generate_series(0, 19) g"
        )
        conn.execute(
            "INSERT INTO hopper_job_history (id, seq, kind, queue, state, priority, attempt,"
            " max_attempts, scheduled_at, attempted_at, attempted_by, args, metadata, errors,"
            " await, created_at, finalized_at, output)"
            " SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing"
            "  substring(int8send((extract(epoch FROM t.at - interval '1 second') * 1000)::bigint)"
            "  FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid,"
            " g, 'k' || (g %% 50), 'q' || (g %% 20),"
            " (CASE WHEN g / 20 %% 20 = 0 THEN 'discarded' ELSE 'completed' END)::hopper_job_state,"
            " 2, 1, 25, t.at - interval '1 second', t.at - interval '1 second', %s,"
            " '{\"n\": 1}', '{}',"
            ' CASE WHEN g %% 20 = 0 THEN \'[{"attempt": 1, "error": "boom"}]\'::jsonb'
            "  ELSE '[]' END, false, t.at - interval '1 second', t.at, '{\"ok\": true}'"
            " FROM generate_series(1, %s) g,"
            " LATERAL (SELECT now() - make_interval(secs => (%s - g) * 0.001) AS at) t",
            [clients[1], n - live, n - live],
        )
        conn.execute(
            "INSERT INTO hopper_jobs (kind, queue, state, attempt, attempted_at, attempted_by,"
            " scheduled_at, args)"
            " SELECT 'k' || (g %% 50), 'q' || (g %% 20),"
            " (CASE WHEN g %% 10 = 0 THEN 'running' WHEN g %% 10 = 1 THEN 'scheduled'"
            "  ELSE 'available' END)::hopper_job_state,"
            " CASE WHEN g %% 10 = 0 THEN 1 ELSE 0 END,"
            " CASE WHEN g %% 10 = 0 THEN now() END,"
            " CASE WHEN g %% 10 = 0 THEN %s END,"
            " CASE WHEN g %% 10 = 1 THEN now() + interval '1 hour' ELSE now() END, '{}'"
            " FROM generate_series(1, %s) g",
            [clients[2], live],
        )
        # a queue with a few live jobs and none finalized: its listing must not walk
        # history's partitions looking for one
        conn.execute(
            "INSERT INTO hopper_jobs (kind, queue)"
            " SELECT 'rare', 'q-rare' FROM generate_series(1, 10)"
        )
        conn.execute("VACUUM ANALYZE")


COMMANDS = ("queues throughput", "vacuum")
"""Cases that are commands an operator runs, not a refresh read or a first page."""


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--jobs", type=int, default=10_000_000)
    ap.add_argument("--live-share", type=float, default=0.01)
    kept_args(ap, "the loaded hopper schema")
    args = ap.parse_args()
    if args.drop_db:
        drop_database(args.pg, args.db)
        return
    n = 200_000 if args.quick else args.jobs
    rec = Recorder(args.json, "hopper-scale", "hopper")
    layout = LAYOUT.format(n=n, share=args.live_share)
    with loaded_database(
        rec, args.pg, args.db, "qctl_hopper_bench", "hopper.hopper_jobs", layout,
        lambda dsn: fill(dsn, n, args.live_share),
    ) as dsn:  # fmt: skip
        db = Database(dsn)
        # a kept database may hold the index of an earlier run's `qctl db tune`
        db.execute(f"DROP INDEX IF EXISTS {tune.QUEUE_STATE}")
        plans = Plans(dsn, search_path="hopper")
        history = db.one("SELECT id FROM hopper_job_history ORDER BY id LIMIT 1 OFFSET 1000")
        deep = db.one("SELECT id FROM hopper_job_history ORDER BY id DESC LIMIT 1 OFFSET 100000")
        assert history and deep
        job_id = uuid.UUID(str(history["id"]))
        prefix = str(job_id).replace("-", "")[:20]
        cursor = uuid.UUID(str(deep["id"]))
        cases: list[tuple[str, Callable[[], Any]]] = [
            ("jobs list: first page", lambda: reads.list_jobs(db, limit=50)),
            ("jobs list --queue q3", lambda: reads.list_jobs(db, queues=["q3"], limit=50)),
            ("jobs list --queue q-rare (none finalized)",
             lambda: reads.list_jobs(db, queues=["q-rare"], limit=50)),
            ("jobs list --state discarded", lambda: reads.list_jobs(db, ["discarded"], limit=50)),
            ("jobs list --state available --kind k7",
             lambda: reads.list_jobs(db, ["available"], ["k7"], limit=50)),
            ("jobs list: a page 100,000 deep", lambda: reads.list_jobs(db, limit=50, after=cursor)),
            ("jobs show (history job, edges)",
             lambda: (reads.get_job(db, job_id), reads.job_deps(db, job_id))),
            ("job id prefix (20 hex digits)", lambda: reads.resolve_job(db, prefix)),
            ("queues list / stats depths", lambda: reads.queue_depths(db)),
            ("queue rows", lambda: reads.list_queues(db)),
            ("clients list", lambda: reads.list_clients(db)),
            ("leader and live clients", lambda: reads.cluster(db)),
            ("workflows list", lambda: reads.list_batches(db, limit=50)),
            ("queues throughput --last 15m (minutes)",
             lambda: reads.throughput(db, timedelta(minutes=15), MINUTE)),
            ("queues throughput --last 1h (minutes)",
             lambda: reads.throughput(db, timedelta(hours=1), MINUTE)),
            ("queues throughput --last 15m --per-queue",
             lambda: reads.throughput(db, timedelta(minutes=15), MINUTE, per_queue=True)),
            ("queues throughput --last 15m --queue q3",
             lambda: reads.throughput(db, timedelta(minutes=15), MINUTE, ["q3"])),
            ("vacuum all --older-than 1h --dry-run (counts)",
             lambda: vacuum.vacuum(db, timedelta(hours=1), dry_run=True)),
        ]  # fmt: skip

        def measure(name: str, fn: Callable[[], Any], tuned: bool) -> None:
            label = f"{name} (db tune)" if tuned else name
            refresh = not name.startswith(COMMANDS)
            measure_read(rec, plans, label, fn, jobs=n, refresh=refresh, tuned=tuned)

        for name, fn in cases:
            measure(name, fn, tuned=False)
        # qctl's opt-in index (`qctl db tune`), then the reads it serves again
        t0 = time.perf_counter()
        tune.tune(db)
        print(f"  db tune in {time.perf_counter() - t0:.1f} s")
        served = ("queues list / stats depths", "jobs list --queue q-rare (none finalized)")
        for name, fn in [c for c in cases if c[0] in served]:
            measure(name, fn, tuned=True)
        db.close()


if __name__ == "__main__":
    main()
