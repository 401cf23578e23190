"""DBOS at scale: qctl's reads of a DBOS system database with a million workflows, beside
DBOS's own ``dbos workflow list`` on the same database, and ``vacuum workflows``.

    .venv/bin/python bench/dbos_scale.py [--pg DSN] [--json PATH] [--quick]
        [--workflows N] [--steps-per N] [--backend postgres,sqlite]
        [--hour-completions N] [--db-prefix NAME]

The system database is created by DBOS itself (``dbos migrate``), then filled with SQL:
N workflows (most SUCCESS; 1% ERROR; 0.2% PENDING or ENQUEUED), ``--steps-per`` steps
each, one output row each; one workflow finishes a second, or with
``--hour-completions N`` the last N finish evenly over the last hour. Figures (median
of 7 after a warm-up, milliseconds): the first page of ``workflows list`` newest first,
a filtered page (status and name), a page 100,000 deep (keyset), counts by status
(partial indexes; SUCCESS estimated on PostgreSQL), the dashboard's overview on its
first load (the hour read whole) and on each refresh after it (the minutes it keeps,
the last ones re-read), and the same first page through
``DBOSClient.list_workflows`` (in-process, as ``dbos workflow list`` runs it) and both
command lines end to end. Then ``vacuum workflows`` of half the workflows in 500-row
batches, with its slowest transaction.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import Plans, Recorder, base_args, median, scratch_database, timed  # noqa: E402

from qctl.systems.dbos import actions, reads  # noqa: E402
from qctl.systems.dbos.database import Database  # noqa: E402

BIN = os.path.dirname(sys.executable)
T0 = 1_700_000_000_000
"""created_at of workflow 1 (epoch ms); workflow g is created g seconds later."""


def fill_postgres(url: str, n: int, steps: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO dbos.workflow_status (workflow_uuid, status, name, queue_name,"
            " executor_id, application_version, created_at, updated_at, completed_at,"
            " priority, recovery_attempts, serialization)"
            " SELECT 'wf-' || lpad(g::text, 8, '0'),"
            " CASE WHEN g %% 100 = 0 THEN 'ERROR' WHEN g %% 1000 = 1 THEN 'PENDING'"
            "  WHEN g %% 1000 = 2 THEN 'ENQUEUED' ELSE 'SUCCESS' END,"
            " 'wf_' || (g %% 20), 'q' || (g %% 5), 'exec-1', 'v1',"
            " %s + g * 1000, %s + g * 1000 + 500,"
            " CASE WHEN g %% 1000 IN (1, 2) THEN NULL ELSE %s + g * 1000 + 500 END, 0, 1,"
            " 'py_pickle' FROM generate_series(1, %s) g",
            (T0, T0, T0, n),
        )
        conn.execute(
            "INSERT INTO dbos.operation_outputs (workflow_uuid, function_id, function_name,"
            " output, started_at_epoch_ms, completed_at_epoch_ms, serialization,"
            " retention_timestamp)"
            " SELECT 'wf-' || lpad(g::text, 8, '0'), f, 'step_' || f, 'gARLAS4=',"
            " %s + g * 1000, %s + g * 1000 + 10, 'py_pickle', %s + g * 1000"
            " FROM generate_series(1, %s) g, generate_series(1, %s) f",
            (T0, T0, T0, n, steps),
        )
        conn.execute(
            "INSERT INTO dbos.workflow_output (workflow_uuid, output, retention_timestamp)"
            " SELECT 'wf-' || lpad(g::text, 8, '0'), 'gARLAS4=', %s + g * 1000"
            " FROM generate_series(1, %s) g",
            (T0, n),
        )
        conn.execute("VACUUM ANALYZE")


def fill_sqlite(path: str, n: int, steps: int) -> None:
    conn = sqlite3.connect(path)
    series = "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < ?)"
    wid = "'wf-' || substr('00000000' || g, -8)"
    conn.execute(
        f"{series} INSERT INTO workflow_status (workflow_uuid, status, name, queue_name,"
        " executor_id, application_version, created_at, updated_at, completed_at, priority,"
        f" recovery_attempts, serialization) SELECT {wid},"
        " CASE WHEN g % 100 = 0 THEN 'ERROR' WHEN g % 1000 = 1 THEN 'PENDING'"
        "  WHEN g % 1000 = 2 THEN 'ENQUEUED' ELSE 'SUCCESS' END,"
        " 'wf_' || (g % 20), 'q' || (g % 5), 'exec-1', 'v1', ? + g * 1000, ? + g * 1000 + 500,"
        " CASE WHEN g % 1000 IN (1, 2) THEN NULL ELSE ? + g * 1000 + 500 END, 0, 1, 'py_pickle'"
        " FROM s",
        (n, T0, T0, T0),
    )
    conn.execute(
        f"{series}, f(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM f WHERE i < ?)"
        " INSERT INTO operation_outputs (workflow_uuid, function_id, function_name, output,"
        " started_at_epoch_ms, completed_at_epoch_ms, serialization, retention_timestamp)"
        f" SELECT {wid}, i, 'step_' || i, 'gARLAS4=', ? + g * 1000, ? + g * 1000 + 10,"
        " 'py_pickle', ? + g * 1000 FROM s, f",
        (n, steps, T0, T0, T0),
    )
    conn.execute(
        f"{series} INSERT INTO workflow_output (workflow_uuid, output, retention_timestamp)"
        f" SELECT {wid}, 'gARLAS4=', ? + g * 1000 FROM s",
        (n, T0),
    )
    conn.commit()
    conn.execute("ANALYZE")
    conn.close()


def crowd_last_hour(execute: Any, table: str, n: int, hour: int) -> None:
    """The last ``hour`` workflows finish evenly over the hour before workflow n's
    instant (the benchmark's now), created 500 ms before. Every SET reads the old row."""
    now, first = T0 + n * 1000, T0 + (n - hour) * 1000
    at = f"{now} - ({now} - created_at) / 1000 * 3600000 / {hour}"
    execute(
        f"UPDATE {table} SET created_at = {at} - 500, updated_at = {at},"
        f" completed_at = CASE WHEN completed_at IS NULL THEN NULL ELSE {at} END"
        f" WHERE created_at > {first}"
    )


def cli_ms(args: list[str], repeat: int = 3) -> float:
    def once() -> None:
        subprocess.run(args, check=True, capture_output=True, timeout=300)

    return median(timed(once, repeat))


def measure(rec: Recorder, backend: str, url: str, n: int, hour: int) -> None:
    db = Database(url)
    note = f"{n:,} workflows, {hour:,} finished in the last hour"
    plans = Plans(url if backend == "postgres" else None, "workflow_status")

    def add(metric: str, fn: Any, extra_note: str = "", explain: bool = True) -> None:
        # The warm-up call is the one EXPLAINed (qctl's reads on PostgreSQL): its
        # statements re-planned on a connection of their own, any sequential scan of
        # workflow_status named. DBOSClient runs on SQLAlchemy's driver, not seen here.
        planned = plans.seq_scans(fn) if explain else []
        if not explain:
            fn()
        full = extra_note or note
        if plans.conn is not None and explain:
            full += f"; EXPLAIN: {len(planned)} seq scan plans"
            for text in planned:
                print(f"    seq scan planned: {text}", flush=True)
        runs = timed(fn, 7)
        rec.add(backend, metric, median(runs), "ms", full, seq_scan_plans=len(planned),
                runs=[round(t, 3) for t in runs])  # fmt: skip

    add("list first page (50)", lambda: reads.list_workflows(db, reads.WorkflowFilter(), 50))
    flt = reads.WorkflowFilter(status=("ERROR",), name=("wf_0",))
    add("list filtered page (ERROR, name)", lambda: reads.list_workflows(db, flt, 50))
    deep = db.all(
        "SELECT created_at, workflow_uuid FROM {t}workflow_status"
        " ORDER BY created_at DESC, workflow_uuid DESC LIMIT 1 OFFSET 100000"
    )
    if deep:
        cursor = reads.Cursor(int(deep[0]["created_at"]), str(deep[0]["workflow_uuid"]))
        add(
            "list page 100,000 deep (keyset)",
            lambda: reads.list_workflows(db, reads.WorkflowFilter(), 50, cursor),
        )
    counts = reads.status_counts(db)
    add(
        "counts by status",
        lambda: reads.status_counts(db),
        extra_note=note
        + (f"; {', '.join(counts.estimated)} estimated" if counts.estimated else ""),
    )
    now = T0 + n * 1000
    add("dashboard first load (overview)", lambda: reads.overview(db, now))
    kept = reads.FinishedWindow()
    reads.overview(db, now, kept)
    add("dashboard refresh (overview)", lambda: reads.overview(db, now, kept))
    add("queue stats", lambda: reads.queue_stats(db))

    from dbos import DBOSClient

    client = DBOSClient(system_database_url=db.client_url)
    try:
        add(
            "DBOSClient.list_workflows first page (50)",
            lambda: client.list_workflows(limit=50, sort_desc=True, load_input=False,
                                          load_output=False),
            explain=False,
        )  # fmt: skip
        add(
            "DBOSClient.list_workflows page 100,000 deep (offset)",
            lambda: client.list_workflows(limit=50, offset=100_000, sort_desc=True,
                                          load_input=False, load_output=False),
            explain=False,
        )  # fmt: skip
    finally:
        client.destroy()
    rec.add(
        backend,
        "CLI: qctl workflows list -n 50 -o json",
        cli_ms([f"{BIN}/qctl", "--dsn", url, "workflows", "list", "-n", "50", "-o", "json"]),
        "ms",
        note + "; process start included",
    )
    rec.add(
        backend,
        "CLI: dbos workflow list -l 50 -d",
        cli_ms([f"{BIN}/dbos", "workflow", "list", "-s", db.client_url, "-l", "50", "-d"]),
        "ms",
        note + "; process start included",
    )

    half = n // 2
    started = time.monotonic()
    result = actions.vacuum_workflows(db, 1, batch=500, now_ms=T0 + half * 1000 + 600)
    took = time.monotonic() - started
    rec.add(backend, "vacuum workflows (deleted)", result.count, "workflows", note)
    rec.add(
        backend, "vacuum workflows (total)", took, "s", f"{result.batches} batches of at most 500"
    )
    rec.add(
        backend,
        "vacuum workflows (slowest transaction)",
        result.max_batch_seconds * 1000,
        "ms",
        "500 workflows with their steps and outputs",
    )
    db.close()


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--workflows", type=int, default=1_000_000)
    ap.add_argument("--steps-per", type=int, default=5)
    ap.add_argument("--backend", default="postgres,sqlite")
    ap.add_argument(
        "--hour-completions", type=int, default=0, help="finished in the last hour (0: 3,600)"
    )
    ap.add_argument("--db-prefix", default="qctl_bench_dbos", help="scratch database name")
    args = ap.parse_args()
    n = 20_000 if args.quick else args.workflows
    rec = Recorder(args.json, "dbos", "qctl")
    size = f"{n:,} workflows, {n * args.steps_per:,} steps"
    hour = min(n, args.hour_completions) if args.hour_completions else min(n, 3600)
    backends = args.backend.split(",")
    if "postgres" in backends:
        with scratch_database(args.pg, args.db_prefix) as url:
            subprocess.run(
                [f"{BIN}/dbos", "migrate", "--sys-db-url", url], check=True, capture_output=True
            )
            t = time.monotonic()
            fill_postgres(url, n, args.steps_per)
            if args.hour_completions:
                import psycopg

                with psycopg.connect(url, autocommit=True) as conn:
                    crowd_last_hour(conn.execute, "dbos.workflow_status", n, hour)
                    conn.execute("VACUUM ANALYZE dbos.workflow_status")
            rec.add("postgres", "generate with SQL", time.monotonic() - t, "s", size)
            measure(rec, "postgres", url, n, hour)
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "dbos.sqlite")
            url = f"sqlite:///{path}"
            subprocess.run(
                [f"{BIN}/dbos", "migrate", "--sys-db-url", url], check=True, capture_output=True
            )
            t = time.monotonic()
            fill_sqlite(path, n, args.steps_per)
            if args.hour_completions:
                with sqlite3.connect(path) as conn:
                    crowd_last_hour(conn.execute, "workflow_status", n, hour)
                    conn.execute("ANALYZE")
            rec.add("sqlite", "generate with SQL", time.monotonic() - t, "s", size)
            measure(rec, "sqlite", url, n, hour)


if __name__ == "__main__":
    main()
