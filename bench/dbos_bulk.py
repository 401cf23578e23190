"""A bulk DBOS verb through the verb engine: ``workflows cancel`` by filter of N ENQUEUED
workflows on PostgreSQL, as one process, its wall time and peak RSS (``/usr/bin/time
-v``), then every workflow checked CANCELLED; once with ``-o json`` (every id in the
record), once with a table.

    .venv/bin/python bench/dbos_bulk.py [--pg DSN] [--json PATH] [--quick] [--workflows N]

The system database is created by DBOS itself (``dbos migrate``), then filled with SQL:
N workflows ENQUEUED on queue ``q`` with one input row each (nothing runs them). The
cancel goes through ``DBOSClient.cancel_workflows``, 1,000 workflows a call.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import Recorder, base_args, scratch_database  # noqa: E402

BIN = os.path.dirname(sys.executable)
T0 = 1_700_000_000_000


def fill(url: str, n: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO dbos.workflow_status (workflow_uuid, status, name, queue_name,"
            " application_version, created_at, updated_at, priority, recovery_attempts,"
            " serialization)"
            " SELECT 'wf-' || lpad(g::text, 8, '0'), 'ENQUEUED', 'wf_' || (g %% 20), 'q',"
            " 'v1', %s + g, %s + g, 0, 0, 'py_pickle' FROM generate_series(1, %s) g",
            (T0, T0, n),
        )
        conn.execute(
            "INSERT INTO dbos.workflow_input (workflow_uuid, inputs)"
            " SELECT 'wf-' || lpad(g::text, 8, '0'), 'gARLAS4=' FROM generate_series(1, %s) g",
            (n,),
        )
        conn.execute("VACUUM ANALYZE")


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--workflows", type=int, default=150_000)
    ap.add_argument("--db-prefix", default="qctl_bench_dbos_bulk", help="scratch database name")
    args = ap.parse_args()
    n = 5_000 if args.quick else args.workflows
    rec = Recorder(args.json, "dbos-bulk", "qctl")
    with scratch_database(args.pg, args.db_prefix) as url:
        subprocess.run(
            [f"{BIN}/dbos", "migrate", "--sys-db-url", url], check=True, capture_output=True
        )
        for output in ("json", "table"):
            fill(url, n)
            seconds, rss, done = cancel(url, n, output)
            what = f"{n:,} ENQUEUED, -o {output}, {done}"
            rec.add("postgres", f"workflows cancel by filter (-o {output})", seconds, "s", what)
            rec.add("postgres", f"workflows cancel peak RSS (-o {output})", rss, "MB", what)


def cancel(url: str, n: int, output: str) -> tuple[float, float, str]:
    """The cancel of every workflow, its wall time, peak RSS and what it said it did;
    then every workflow checked CANCELLED and the table emptied for the next run."""
    import psycopg

    verb = ["workflows", "cancel", "--queue", "q", "--max", str(n), "--yes", "-o", output]
    done = subprocess.run(
        ["/usr/bin/time", "-v", f"{BIN}/qctl", "--dsn", url, *verb],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    assert wall and rss, done.stderr
    seconds = int(wall[1] or 0) * 3600 + int(wall[2]) * 60 + float(wall[3])
    if output == "json":
        record = json.loads(done.stdout)
        said = f"cancelled {record['done']} in {record['batches']} batches"
    else:
        said = done.stdout.splitlines()[0].strip()
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FILTER (WHERE status = 'CANCELLED'), count(*)"
            " FROM dbos.workflow_status"
        ).fetchone()
        assert row is not None and row[0] == row[1] == n, (row, said)
        conn.execute("TRUNCATE dbos.workflow_status, dbos.workflow_input CASCADE")
    return seconds, int(rss[1]) / 1024, said


if __name__ == "__main__":
    main()
