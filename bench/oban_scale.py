"""Oban at scale: qctl's refresh reads and first pages on an oban-py database with N jobs
(default 10,000,000), each timed and EXPLAINed (no sequential scan of a table of more
than 10,000 rows).

    .venv/bin/python bench/oban_scale.py [--pg DSN] [--json PATH] [--quick] [--jobs N]
        [--db NAME | --db NAME --drop-db]

The schema is oban-py 0.7.0's own install (``oban.schema.install``, run by the tests'
oban-py partner in its Python 3.12 environment: ``tests/oban/schemas.py``) in the
database's ``public`` schema, then filled with SQL: N jobs over 5 queues and 20 workers,
inserted one every 10 ms up to now (per 10,000: 9,700 completed, 100 discarded with 3
failed attempts, 50 retryable with 1, 100 available, 40 scheduled, 5 executing, 5
cancelled), and a producer per queue on one node, the leader. Figures: the median of 7
runs after a warm-up, in milliseconds, and the tables of more than 10,000 rows any
statement of the read scans sequentially (EXPLAIN). Each figure says whether it is a
refresh read or a first page (the 50 ms target's) or a command. Then ``qctl db tune``'s
index and the reads it serves again. ``--db`` keeps the loaded
database for the next run; its load is stamped on ``oban_leaders`` (a comment on
``oban_jobs`` would read as an Elixir Oban migration version).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
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

from qctl.systems.oban import reads, tune  # noqa: E402
from qctl.systems.oban.database import Database  # noqa: E402
from tests.oban.schemas import install_obanpy  # noqa: E402

# Per 10,000 jobs (g % 10000): the state each band of the layout holds.
STATE = """CASE
    WHEN g %% 10000 < 100 THEN 'discarded' WHEN g %% 10000 < 150 THEN 'retryable'
    WHEN g %% 10000 < 250 THEN 'available' WHEN g %% 10000 < 290 THEN 'scheduled'
    WHEN g %% 10000 < 295 THEN 'executing' WHEN g %% 10000 < 300 THEN 'cancelled'
    ELSE 'completed' END"""

FILL = [
    f"""INSERT INTO oban_jobs (state, queue, worker, attempt, max_attempts, args, errors,
        attempted_by, inserted_at, scheduled_at, attempted_at, completed_at, cancelled_at,
        discarded_at)
    SELECT s.state::oban_job_state, 'q' || (g %% 5), 'app.workers.W' || (g %% 20),
        CASE s.state WHEN 'discarded' THEN 3 WHEN 'available' THEN 0
            WHEN 'scheduled' THEN 0 ELSE 1 END,
        3, jsonb_build_object('n', g),
        CASE s.state
            WHEN 'discarded' THEN (SELECT jsonb_agg(jsonb_build_object(
                'attempt', a, 'at', t, 'error', 'RuntimeError: boom')) FROM generate_series(1, 3) a)
            WHEN 'retryable' THEN jsonb_build_array(jsonb_build_object(
                'attempt', 1, 'at', t, 'error', 'RuntimeError: boom'))
            ELSE '[]'::jsonb END,
        CASE WHEN s.state IN ('available', 'scheduled') THEN ARRAY[]::text[]
            ELSE ARRAY['web.1', 'producer'] END,
        t, CASE s.state WHEN 'scheduled' THEN now() + interval '1 hour'
            WHEN 'retryable' THEN now() + interval '10 minutes' ELSE t END,
        CASE WHEN s.state IN ('available', 'scheduled') THEN NULL ELSE t END,
        CASE s.state WHEN 'completed' THEN t END,
        CASE s.state WHEN 'cancelled' THEN t END,
        CASE s.state WHEN 'discarded' THEN t END
    FROM generate_series(1, %(n)s) g,
        LATERAL (SELECT timezone('UTC', now()) - make_interval(secs => (%(n)s - g) * 0.01)
                 AS t) w,
        LATERAL (SELECT {STATE} AS state) s""",
    """INSERT INTO oban_producers (uuid, name, node, queue, meta)
    SELECT gen_random_uuid(), 'Oban', 'web.1', 'q' || q,
        jsonb_build_object('local_limit', 10, 'paused', false)
    FROM generate_series(0, 4) q""",
    """INSERT INTO oban_leaders (name, node, elected_at, expires_at)
    VALUES ('Oban', 'web.1', timezone('UTC', now()),
            timezone('UTC', now()) + interval '1 day')""",
]

LAYOUT = "qctl bench oban layout v1: {n:,} jobs"
"""What ``load`` loads: a kept ``--db`` stamped with it is reused (``load_or_reuse``)."""


def load(dsn: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('oban_jobs')").fetchone() != (None,):
            sys.exit("the --db database holds another or an interrupted load: --drop-db it first")
    install_obanpy(dsn, "public")
    with psycopg.connect(dsn, autocommit=True) as conn:
        for statement in FILL:
            conn.execute(statement, {"n": n})  # type: ignore[arg-type]
        conn.execute("VACUUM ANALYZE")


COMMANDS = ("queues list", "queues throughput", "jobs errors --state")
"""Reads that are commands an operator runs (each counts or scans a whole state), not a
refresh read or a first page."""


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--jobs", type=int, default=10_000_000)
    kept_args(ap, "the loaded oban-py schema")
    args = ap.parse_args()
    if args.drop_db:
        drop_database(args.pg, args.db)
        return
    n = 200_000 if args.quick else args.jobs
    rec = Recorder(args.json, "oban-scale", "oban")
    layout = LAYOUT.format(n=n)
    with loaded_database(
        rec, args.pg, args.db, "qctl_bench_oban", "oban_leaders", layout,
        lambda dsn: load(dsn, n),
    ) as dsn:  # fmt: skip
        db = Database(dsn)
        # a kept database may hold the index of an earlier run's `qctl db tune`
        db.execute(f"DROP INDEX IF EXISTS {tune.QUEUE_ID}")
        plans = Plans(dsn)
        deep = db.all("SELECT id FROM oban_jobs ORDER BY id DESC OFFSET 100000 LIMIT 1")[0]["id"]
        some = db.all("SELECT id FROM oban_jobs WHERE state = 'discarded' LIMIT 1")[0]["id"]
        cases: dict[str, Callable[[], Any]] = {
            "Queues tab (live depths, producers)": lambda: reads.list_queues(
                db, live=True, cap=reads.DASHBOARD_CAP
            ),
            "Jobs tab, first page": lambda: reads.list_jobs(db, limit=200),
            "Nodes tab": lambda: reads.nodes(db),
            "jobs list, first page": lambda: reads.list_jobs(db, limit=50),
            "jobs list --state discarded": lambda: reads.list_jobs(
                db, states=["discarded"], limit=50
            ),
            "jobs list --state available --queue q1": lambda: reads.list_jobs(
                db, states=["available"], queues=["q1"], limit=50
            ),
            "jobs list --state executing (1 in 2,000)": lambda: reads.list_jobs(
                db, states=["executing"], limit=50
            ),
            "jobs list --queue q-none (no such job)": lambda: reads.list_jobs(
                db, queues=["q-none"], limit=50
            ),
            "jobs list --worker app.workers.W7": lambda: reads.list_jobs(
                db, workers=["app.workers.W7"], limit=50
            ),
            "jobs list, a page 100,000 deep (keyset)": lambda: reads.list_jobs(
                db, limit=50, after=int(deep)
            ),
            "jobs show": lambda: reads.get_job(db, int(some)),
            "jobs errors, first page": lambda: reads.failures(db, limit=50),
            "jobs errors --state retryable (command)": lambda: reads.failures(
                db, states=["retryable"], limit=50
            ),
            "queues list (command: every state)": lambda: reads.list_queues(db),
            "queues throughput --last 10m (command)": lambda: reads.throughput(db, 600),
            "queues throughput --last 1h (command)": lambda: reads.throughput(db, 3600),
        }

        def measure(label: str, tuned: bool) -> None:
            refresh = not label.startswith(COMMANDS) and "(command" not in label
            name = f"{label} (db tune)" if tuned else label
            measure_read(rec, plans, name, cases[label], jobs=n, refresh=refresh, tuned=tuned)

        for label in cases:
            measure(label, tuned=False)
        # qctl's opt-in index (`qctl db tune`), then the reads it serves again
        t0 = time.perf_counter()
        tune.tune(db)
        print(f"  db tune in {time.perf_counter() - t0:.1f} s")
        for label in ("jobs list --queue q-none (no such job)", "jobs list, first page"):
            measure(label, tuned=True)
        db.close()


if __name__ == "__main__":
    main()
