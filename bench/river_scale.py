"""River at scale: qctl's reads of a River database (line main, version 8) with millions
of jobs, as ``qctl jobs list|show|errors``, ``queues list|throughput``, ``clients``,
``metrics``, ``vacuum --dry-run`` and the dashboard's refreshes run them.

    .venv/bin/python bench/river_scale.py [--pg DSN] [--json PATH] [--quick]
        [--jobs N] [--live-share F] [--db NAME | --db NAME --drop-db] [--backend sqlite]

The schema is River's as its migrator makes it (``qctl/systems/river/schema_v0.51.2.sql``,
tested equal to rivermigrate's catalog), in schema ``river`` of a scratch database; then
filled with SQL: N jobs in id order, ``--live-share`` of them not finalized (a tenth
running on one of 8 clients, a tenth scheduled, a twentieth retryable with an error, the
rest available), the others finalized one a millisecond up to now (94% completed, 5%
discarded with an error, 1% cancelled; the last minute holds about 60,000), over 20
queues and 50 kinds, and a queue with 10 available jobs and nothing finalized; 20
river_queue rows and a leader. Figures: median of 7 after a warm-up, milliseconds, and
for each read the relations any of its statements scans sequentially (EXPLAIN of the
statements it ran). Then ``qctl db tune``'s index and the listings by queue again. Each
figure says whether it is a refresh read or a first page (the 50 ms target's) or a
command.

``--backend sqlite``: the same layout in a SQLite file River's migrator made (riversqlite,
through the Go harness ``riverd``), kept as ``bench/out/river_scale_<N>.sqlite3`` and
reused while the stamp beside it names the layout (``fill_sqlite``), read the same way;
for each read the ``SCAN river_job`` steps of its statements' plans (``EXPLAIN QUERY
PLAN``) and the virtual machine instructions it ran, which tell a walk of the ids that
stops at a page from a scan of the table.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import (  # noqa: E402
    Plans,
    Recorder,
    SqlitePlans,
    base_args,
    drop_database,
    kept_args,
    loaded_database,
    measure_read,
    measure_sqlite_read,
    sqlite_loaded,
)

from qctl.systems.river import actions, metrics, reads, tune  # noqa: E402
from qctl.systems.river.database import Database  # noqa: E402
from qctl.systems.river.standin import install  # noqa: E402

MINUTE = timedelta(minutes=1)
LAYOUT = "qctl bench river layout v1: {n:,} jobs, {share:.2%} live"
"""What ``fill`` loads: a kept ``--db`` stamped with it is reused."""


def fill(dsn: str, n: int, live_share: float) -> None:
    import psycopg

    live = int(n * live_share)
    done = n - live
    error = '{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "boom %s", "trace": ""}'
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS river CASCADE")
        conn.execute("CREATE SCHEMA river")
        install(conn, "river")
        conn.execute("SET search_path = river")
        conn.execute(
            "INSERT INTO river_queue (name, updated_at) SELECT 'q' || g, now()"
            " FROM generate_series(0, 19) g"
        )
        conn.execute(
            "INSERT INTO river_leader (leader_id, elected_at, expires_at)"
            " VALUES ('client-0', now(), now() + interval '1 hour')"
        )
        # finalized, one a millisecond up to now, in id order
        conn.execute(
            "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
            " created_at, finalized_at, scheduled_at, priority, args, errors, kind, queue)"
            " SELECT s.state::river_job_state, 1, 1, t.at - interval '1 second',"
            " ARRAY['client-' || (g %% 8)], t.at - interval '1 second', t.at,"
            " t.at - interval '1 second', 1, '{\"n\": 1}',"
            " CASE WHEN s.state = 'discarded' THEN ARRAY[format(%s, g %% 97)::jsonb] END,"
            " 'k' || (g %% 50), 'q' || (g %% 20)"
            " FROM generate_series(1, %s) g,"
            " LATERAL (SELECT now() - make_interval(secs => (%s - g) * 0.001) AS at) t,"
            " LATERAL (SELECT CASE WHEN g %% 100 < 5 THEN 'discarded'"
            "  WHEN g %% 100 = 5 THEN 'cancelled' ELSE 'completed' END AS state) s",
            [error, done, done],
        )
        conn.execute(
            "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
            " scheduled_at, args, errors, kind, queue)"
            " SELECT s.state::river_job_state, CASE WHEN s.state IN ('running', 'retryable')"
            "  THEN 1 ELSE 0 END, 25,"
            " CASE WHEN s.state IN ('running', 'retryable') THEN now() END,"
            " CASE WHEN s.state IN ('running', 'retryable') THEN ARRAY['client-' || (g %% 8)] END,"
            " CASE WHEN s.state IN ('scheduled', 'retryable') THEN now() + interval '1 hour'"
            "  ELSE now() END, '{}',"
            " CASE WHEN s.state = 'retryable' THEN ARRAY[format(%s, g %% 97)::jsonb] END,"
            " 'k' || (g %% 50), 'q' || (g %% 20)"
            " FROM generate_series(1, %s) g,"
            " LATERAL (SELECT CASE WHEN g %% 10 = 0 THEN 'running' WHEN g %% 10 = 1"
            "  THEN 'scheduled' WHEN g %% 20 = 2 THEN 'retryable' ELSE 'available' END AS state) s",
            [error, live],
        )
        conn.execute(
            "INSERT INTO river_job (kind, queue, args, max_attempts)"
            " SELECT 'rare', 'q-rare', '{}', 25 FROM generate_series(1, 10)"
        )
        conn.execute("VACUUM ANALYZE")


def fill_sqlite(path: str, n: int, live_share: float) -> None:
    """``fill``'s layout in a SQLite file River's migrator made (riversqlite, through the
    Go harness ``riverd``): River's indexes dropped, the jobs inserted by a recursive
    CTE in one transaction, the indexes made again from River's own definitions. The JSON
    columns hold JSONB as River writes it (``qctl_kit.sqlite.jsonb``: this SQLite has no
    ``jsonb()``); instants are River's UTC text."""
    import sqlite3

    from qctl_kit.sqlite import jsonb
    from tests.go.harness import Harness

    harness = Harness("riverd", f"sqlite://{path}")
    try:
        harness.call("migrate")
    finally:
        harness.close()
    live = int(n * live_share)
    done = n - live
    error = '{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "boom %s", "trace": ""}'
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -262144")
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'river_job'"
        " AND sql IS NOT NULL"
    ).fetchall()
    conn.execute("BEGIN")
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")
    conn.execute("CREATE TEMP TABLE blob (k integer PRIMARY KEY, client blob, error blob)")
    conn.executemany(
        "INSERT INTO blob VALUES (?, ?, ?)",
        [
            (k, jsonb.from_json(f'["client-{k % 8}"]'), jsonb.from_json(f"[{error % k}]"))
            for k in range(97)
        ],
    )
    conn.executemany(
        "INSERT INTO river_queue (name, created_at, metadata, updated_at)"
        " VALUES (?, strftime('%Y-%m-%d %H:%M:%f', 'now'), ?,"
        " strftime('%Y-%m-%d %H:%M:%f', 'now'))",
        [(f"q{g}", jsonb.from_json("{}")) for g in range(20)],
    )
    conn.execute(
        "INSERT INTO river_leader (leader_id, elected_at, expires_at) VALUES ('client-0',"
        " strftime('%Y-%m-%d %H:%M:%f', 'now'), strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour'))"
    )
    constants = {
        "one": jsonb.from_json('{"n": 1}'),
        "empty": jsonb.from_json("{}"),
        "none": jsonb.from_json("[]"),
    }
    # finalized, one a millisecond up to now, in id order
    conn.execute(
        "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
        " created_at, finalized_at, scheduled_at, priority, args, errors, kind, queue,"
        " metadata, tags)"
        " WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < :done),"
        " t AS (SELECT i, julianday('now') - (:done - i) / 86400000.0 AS at,"
        "  CASE WHEN i % 100 < 5 THEN 'discarded' WHEN i % 100 = 5 THEN 'cancelled'"
        "  ELSE 'completed' END AS state FROM g)"
        " SELECT state, 1, 1, strftime('%Y-%m-%d %H:%M:%f', at - 1 / 86400.0),"
        " (SELECT client FROM blob WHERE k = i % 8),"
        " strftime('%Y-%m-%d %H:%M:%f', at - 1 / 86400.0), strftime('%Y-%m-%d %H:%M:%f', at),"
        " strftime('%Y-%m-%d %H:%M:%f', at - 1 / 86400.0), 1, :one,"
        " CASE WHEN state = 'discarded' THEN (SELECT error FROM blob WHERE k = i % 97) END,"
        " 'k' || (i % 50), 'q' || (i % 20), :empty, :none FROM t",
        {"done": done, **constants},
    )
    conn.execute(
        "INSERT INTO river_job (state, attempt, max_attempts, attempted_at, attempted_by,"
        " created_at, scheduled_at, args, errors, kind, queue, metadata, tags)"
        " WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < :live),"
        " t AS (SELECT i, CASE WHEN i % 10 = 0 THEN 'running' WHEN i % 10 = 1 THEN 'scheduled'"
        "  WHEN i % 20 = 2 THEN 'retryable' ELSE 'available' END AS state FROM g)"
        " SELECT state, CASE WHEN state IN ('running', 'retryable') THEN 1 ELSE 0 END, 25,"
        " CASE WHEN state IN ('running', 'retryable')"
        "  THEN strftime('%Y-%m-%d %H:%M:%f', 'now') END,"
        " CASE WHEN state IN ('running', 'retryable')"
        "  THEN (SELECT client FROM blob WHERE k = i % 8) END,"
        " strftime('%Y-%m-%d %H:%M:%f', 'now'),"
        " CASE WHEN state IN ('scheduled', 'retryable')"
        "  THEN strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour')"
        "  ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END, :empty,"
        " CASE WHEN state = 'retryable' THEN (SELECT error FROM blob WHERE k = i % 97) END,"
        " 'k' || (i % 50), 'q' || (i % 20), :empty, :none FROM t",
        {"live": live, **constants},
    )
    conn.execute(
        "INSERT INTO river_job (kind, queue, args, max_attempts, created_at, scheduled_at,"
        " metadata, tags)"
        " WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 10)"
        " SELECT 'rare', 'q-rare', :empty, 25, strftime('%Y-%m-%d %H:%M:%f', 'now'),"
        " strftime('%Y-%m-%d %H:%M:%f', 'now'), :empty, :none FROM g",
        constants,
    )
    for _, sql in indexes:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.close()


COMMANDS = ("queues list", "queues throughput", "vacuum", "jobs errors")
"""Cases that are commands an operator runs, not a refresh read or a first page."""


def cases(db: Database, cursor: int, job_id: int) -> list[tuple[str, Callable[[], Any]]]:
    """The reads timed, each with its name; ``cursor`` a job id 100,000 from the newest,
    ``job_id`` one of the oldest."""
    return [
        ("jobs list: first page", lambda: reads.list_jobs(db, limit=50)),
        ("jobs list --queue q3", lambda: reads.list_jobs(db, queues=["q3"], limit=50)),
        ("jobs list --queue q-rare (none finalized)",
         lambda: reads.list_jobs(db, queues=["q-rare"], limit=50)),
        ("jobs list --state discarded", lambda: reads.list_jobs(db, ["discarded"], limit=50)),
        ("jobs list --state cancelled", lambda: reads.list_jobs(db, ["cancelled"], limit=50)),
        ("jobs list --state available --kind k7",
         lambda: reads.list_jobs(db, ["available"], kinds=["k7"], limit=50)),
        ("jobs list --state running", lambda: reads.list_jobs(db, ["running"], limit=50)),
        ("jobs list --state retryable --queue q3",
         lambda: reads.list_jobs(db, ["retryable"], queues=["q3"], limit=50)),
        ("jobs list: a page 100,000 deep",
         lambda: reads.list_jobs(db, limit=50, after=(None, cursor))),
        ("jobs show", lambda: reads.get_job(db, job_id)),
        ("top Queues tab (live depths)", lambda: reads.list_queues(db, live=True)),
        ("queues list (every state counted)", lambda: reads.list_queues(db)),
        ("clients list", lambda: reads.clients(db)),
        ("clients leader", lambda: reads.leaders(db)),
        ("metrics (every family)", lambda: list(metrics.collect(db))),
        ("jobs errors (newest 10,000 failures grouped)", lambda: reads.error_groups(db)),
        ("queues throughput --last 15m (minutes)",
         lambda: reads.throughput(db, timedelta(minutes=15), MINUTE)),
        ("queues throughput --last 1h (minutes)",
         lambda: reads.throughput(db, timedelta(hours=1), MINUTE)),
        ("queues throughput --last 15m --queue q3",
         lambda: reads.throughput(db, timedelta(minutes=15), MINUTE, ["q3"])),
        ("vacuum all --older-than 1h --dry-run (counts)",
         lambda: actions.vacuum(db, timedelta(hours=1), dry_run=True)),
    ]  # fmt: skip


def run(db: Database, measure: Callable[[str, Callable[[], Any], bool], None]) -> None:
    """Every case, then `qctl db tune`'s index and the listings by queue again."""
    # a kept database may hold the index of an earlier run's `qctl db tune`
    db.execute(f"DROP INDEX IF EXISTS {tune.QUEUE_ID}")
    deep = db.one("SELECT id FROM river_job ORDER BY id DESC LIMIT 1 OFFSET 100000")
    old = db.one("SELECT id FROM river_job ORDER BY id LIMIT 1 OFFSET 1000")
    assert deep and old
    timed = cases(db, int(deep["id"]), int(old["id"]))
    for name, fn in timed:
        measure(name, fn, False)
    # qctl's opt-in index (`qctl db tune`), then the reads it serves again
    t0 = time.perf_counter()
    tune.tune(db)
    print(f"  db tune in {time.perf_counter() - t0:.1f} s")
    for name, fn in [c for c in timed if c[0].startswith("jobs list --queue")]:
        measure(name, fn, True)


def label(name: str, tuned: bool) -> tuple[str, bool]:
    """The figure's name and whether it is a refresh read or first page (``COMMANDS``)."""
    return (f"{name} (db tune)" if tuned else name), not name.startswith(COMMANDS)


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--jobs", type=int, default=10_000_000)
    ap.add_argument("--live-share", type=float, default=0.01)
    ap.add_argument("--backend", choices=("postgres", "sqlite"), default="postgres")
    kept_args(ap, "the loaded River schema")
    args = ap.parse_args()
    if args.drop_db:
        drop_database(args.pg, args.db)
        return
    n = 200_000 if args.quick else args.jobs
    rec = Recorder(args.json, "river-scale", "river")
    layout = LAYOUT.format(n=n, share=args.live_share)
    if args.backend == "sqlite":
        path = sqlite_loaded(
            rec, f"river_scale_{n}.sqlite3", layout, lambda p: fill_sqlite(p, n, args.live_share)
        )
        lite = Database(f"sqlite:///{path}")
        plans = SqlitePlans(lite)

        def measure_lite(name: str, fn: Callable[[], Any], tuned: bool) -> None:
            shown, refresh = label(name, tuned)
            measure_sqlite_read(
                rec, plans, "river_job", shown, fn, jobs=n, refresh=refresh, tuned=tuned
            )

        run(lite, measure_lite)
        lite.close()
        return
    with loaded_database(
        rec, args.pg, args.db, "qctl_river_bench", "river.river_job", layout,
        lambda dsn: fill(dsn, n, args.live_share),
    ) as dsn:  # fmt: skip
        db = Database(dsn, "river")
        pg_plans = Plans(dsn, search_path="river")

        def measure(name: str, fn: Callable[[], Any], tuned: bool) -> None:
            shown, refresh = label(name, tuned)
            measure_read(rec, pg_plans, shown, fn, jobs=n, refresh=refresh, tuned=tuned)

        run(db, measure)
        db.close()


if __name__ == "__main__":
    main()
