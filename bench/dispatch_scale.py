"""dispatch at scale: qctl's refresh reads and first pages on a dispatch database with
N jobs (default 10,000,000), each timed and EXPLAINed (no sequential scan of a table of
more than a few thousand rows).

    .venv/bin/python bench/dispatch_scale.py [--pg DSN] [--json PATH] [--quick] [--jobs N]
        [--db NAME | --db NAME --drop-db]

The schema is dispatch's own at main 6f7dda7 (``qctl/systems/dispatch/schema_6f7dda7.sql``,
compared with dispatch v0.1.0's migrator by the tests), filled with SQL: N jobs in 5
queues and 20 names (98.64% completed, 1% failed, 0.1% pending, 0.05% retrying, 0.01%
running, 0.2% cancelled), ids TypeIDs of their creation instant as dispatch's are
(UUIDv7s), one DLQ entry per failed job, N/100 workflow runs, 20 cron entries, 10
workers. Figures: the median of 7 runs after a warm-up, in milliseconds, and the tables of
more than 10,000 rows any statement of the read scans sequentially (EXPLAIN). Each figure
says whether it is a refresh read or a first page (the 50 ms target's) or a command.
``--db`` keeps the loaded database for the next run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import psycopg

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
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

from qctl.systems.dispatch import reads  # noqa: E402
from qctl.systems.dispatch.database import Database  # noqa: E402

SCHEMA = os.path.join(ROOT, "qctl", "systems", "dispatch", "schema_6f7dda7.sql")

FILL = [
    """INSERT INTO dispatch_jobs (id, name, queue, payload, state, priority, max_retries,
        retry_count, last_error, scope_app_id, scope_org_id, worker_id, run_at, started_at,
        completed_at, heartbeat_at, timeout, created_at, updated_at)
    SELECT {typeid}, 'job.' || (g %% 20), 'q' || (g %% 5),
        convert_to('{"n":' || g || '}', 'UTF8'), s.state, 0, 3,
        CASE WHEN s.state IN ('failed', 'retrying') THEN 1 ELSE 0 END,
        CASE WHEN s.state IN ('failed', 'retrying') THEN 'boom' ELSE '' END, '', '',
        'wkr_00000000000000000000000000', t, t,
        CASE WHEN s.state IN ('completed', 'failed', 'cancelled') THEN t END,
        CASE WHEN s.state = 'running' THEN now() END, 300000000000, t, t
    FROM generate_series(1, %(n)s) g,
        LATERAL (SELECT now() - make_interval(secs => (%(n)s - g) * 0.01) AS t) w,
        LATERAL (SELECT CASE
            WHEN g %% 10000 < 100 THEN 'failed' WHEN g %% 10000 < 110 THEN 'pending'
            WHEN g %% 10000 < 115 THEN 'retrying' WHEN g %% 10000 < 116 THEN 'running'
            WHEN g %% 10000 < 136 THEN 'cancelled' ELSE 'completed' END AS state) s""",
    """INSERT INTO dispatch_dlq (id, job_id, job_name, queue, payload, error, retry_count,
        max_retries, failed_at, created_at)
    SELECT 'dlq_' || substr(id, 5), id, name, queue, payload, 'boom', 1, 3, completed_at,
        completed_at
    FROM dispatch_jobs WHERE state = 'failed'""",
    """INSERT INTO dispatch_workflow_runs (id, name, state, started_at, created_at, updated_at)
    SELECT 'wfrun_' || lpad(to_hex(g), 26, '0'), 'flow.' || (g %% 10),
        CASE WHEN g %% 100 = 0 THEN 'failed' WHEN g %% 100 = 1 THEN 'running'
        ELSE 'completed' END, now(), now(), now()
    FROM generate_series(1, %(n)s / 100) g""",
    """INSERT INTO dispatch_cron_entries (id, name, schedule, job_name, next_run_at)
    SELECT 'cron_' || lpad(to_hex(g), 26, '0'), 'cron-' || g, '@every 1h', 'job.' || g,
        now() + interval '1 hour' FROM generate_series(1, 20) g""",
    """INSERT INTO dispatch_jobs (id, name, payload)
    VALUES ('job_01jbench00000000000000000', 'job.one', '\\x')""",
    """INSERT INTO dispatch_workers (id, hostname, queues)
    SELECT 'wkr_' || lpad(to_hex(g), 26, '0'), 'host-' || g, '{q0,q1}'
    FROM generate_series(1, 10) g""",
]


def typeid_sql(prefix: str, at: str, n: str) -> str:
    """SQL of a TypeID as dispatch makes them (id/id.go): its first ten base32 digits
    are the millisecond ``at`` (a UUIDv7's 48 bits, ``reads.typeid_floor``), the other
    sixteen ``n`` in hex (unique, standing in for the random bits)."""
    ms = f"floor(extract(epoch FROM {at}) * 1000)::bigint"
    digits = " || ".join(
        f"substr('0123456789abcdefghjkmnpqrstvwxyz', "
        f"(({ms} >> {45 - 5 * i}) & {7 if i == 0 else 31})::int + 1, 1)"
        for i in range(10)
    )
    return f"'{prefix}_' || {digits} || lpad(to_hex({n}), 16, '0')"


LAYOUT = "qctl bench dispatch layout v1: {n:,} jobs"
"""What ``load`` loads: a kept ``--db`` stamped with it is reused (``load_or_reuse``)."""


def load(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('dispatch_jobs')").fetchone() != (None,):
            sys.exit("the --db database holds another or an interrupted load: --drop-db it first")
        with open(SCHEMA) as f:
            conn.execute(f.read())
        for statement in FILL:
            conn.execute(statement.replace("{typeid}", typeid_sql("job", "t", "g")), {"n": n})
        conn.execute("VACUUM ANALYZE")


COMMANDS = ("queues list", "stats", "queues throughput")
"""Reads that are commands an operator runs (each counts every state), not a refresh
read or a first page."""


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--jobs", type=int, default=10_000_000)
    kept_args(ap, "the loaded dispatch schema")
    args = ap.parse_args()
    if args.drop_db:
        drop_database(args.pg, args.db)
        return
    n = 200_000 if args.quick else args.jobs
    rec = Recorder(args.json, "dispatch-scale", "dispatch")
    layout = LAYOUT.format(n=n)
    with loaded_database(
        rec, args.pg, args.db, "qctl_bench_dispatch", "dispatch_jobs", layout,
        lambda dsn: load(dsn, n),
    ) as dsn:  # fmt: skip
        db = Database(dsn)
        plans = Plans(dsn)
        deep = db.all("SELECT id FROM dispatch_jobs ORDER BY id DESC OFFSET 50000 LIMIT 1")
        reads_: dict[str, Callable[[], Any]] = {
            "Queues tab": lambda: reads.queue_depths(db),
            "queues list (command: every state, a scan)": lambda: reads.queue_stats(db),
            "Jobs tab, first page": lambda: reads.list_jobs(db, limit=50),
            "jobs list --state failed": lambda: reads.list_jobs(db, states=["failed"], limit=50),
            "jobs list --state pending --queue q1": lambda: reads.list_jobs(
                db, states=["pending"], queues=["q1"], limit=50
            ),
            "jobs list, a page 50,000 deep (keyset)": lambda: reads.list_jobs(
                db, limit=50, cursor=reads.Cursor(deep[0]["id"])
            ),
            "job detail (show by prefix)": lambda: reads.dlq_of_job(
                db, reads.get_job(db, reads.resolve_job(db, "01jbench"))
            ),
            "DLQ tab, first page": lambda: reads.list_dlq(db, limit=50),
            "Cron tab": lambda: reads.list_cron(db),
            "Workers tab": lambda: reads.list_workers(db),
            "Workflows tab, first page": lambda: reads.list_runs(db, limit=50),
            "stats (command)": lambda: reads.stats(db),
            "queues throughput --last 10m (command)": lambda: reads.throughput(
                db, timedelta(minutes=10), timedelta(minutes=1)
            ),
            "queues throughput --last 1h (command)": lambda: reads.throughput(
                db, timedelta(hours=1), timedelta(minutes=1)
            ),
        }
        for label, fn in reads_.items():
            refresh = not label.startswith(COMMANDS)
            measure_read(rec, plans, label, fn, jobs=n, refresh=refresh)
        db.close()


if __name__ == "__main__":
    main()
