"""The machine a run was taken on, and what the database itself can do on it.

    .venv/bin/python bench/machine.py [--quick] [--pg DSN] [--json out.jsonl]

Machine: cores, CPU model, memory, load average, OS, Python, SQLite and PostgreSQL
versions and the server settings that bound commit speed. Calibration, in a scratch
database created here and dropped afterwards: ``pgbench`` (scale 10) simple-update with
1 client (the cost of one durable commit) and 4 clients, select-only with 4 clients,
and the round trip of ``SELECT 1`` over one psycopg connection. Every figure of the
other scenarios can be read as a ratio to these.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import psycopg
from common import Recorder, base_args, median, pct, scratch_database


def machine_info(dsn: str) -> dict[str, str]:
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(next(x for x in f if x.startswith("MemTotal")).split()[1])
    with psycopg.connect(dsn) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()
            for name in ("shared_buffers", "synchronous_commit", "fsync", "max_connections")
        }
    load = os.getloadavg()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "load average at start": f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": str(version[0]) if version else "?",
        "server settings": ", ".join(f"{k}={v[0] if v else '?'}" for k, v in settings.items()),
    }


def pgbench(dsn: str, *args: str) -> float:
    """Run pgbench and return its TPS (without initial connection time)."""
    out = subprocess.run(["pgbench", *args, dsn], check=True, capture_output=True, text=True).stdout
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    if not m:
        raise RuntimeError(f"no TPS in pgbench output:\n{out}")
    return float(m.group(1))


def calibrate(rec: Recorder, server_dsn: str, quick: bool) -> None:
    seconds = "5" if quick else "15"
    if shutil.which("pgbench") is None:
        rec.add("postgres", "pgbench", 0, "", "pgbench not installed; calibration skipped")
    else:
        with scratch_database(server_dsn, "qctl_bench_pgbench") as dsn:
            subprocess.run(
                ["pgbench", "-i", "-q", "-s", "10", dsn], check=True, capture_output=True
            )
            runs = [
                ("pgbench simple-update, 1 client", "simple-update", "1"),
                ("pgbench simple-update, 4 clients", "simple-update", "4"),
                ("pgbench select-only, 4 clients", "select-only", "4"),
            ]
            for metric, builtin, clients in runs:
                tps = pgbench(dsn, "-b", builtin, "-c", clients, "-j", "2", "-T", seconds)
                rec.add("postgres", metric, tps, "tps", f"scale 10, {seconds} s")
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        for _ in range(200):
            conn.execute("SELECT 1")
        rtt = []
        for _ in range(1000 if quick else 5000):
            t0 = time.perf_counter()
            conn.execute("SELECT 1").fetchone()
            rtt.append((time.perf_counter() - t0) * 1000)
    rec.add("postgres", "SELECT 1 round trip p50", median(rtt), "ms", "psycopg, one connection")
    rec.add("postgres", "SELECT 1 round trip p99", pct(rtt, 0.99), "ms", "psycopg, one connection")


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--info", default=None, help="write the machine description (JSON) here")
    args = ap.parse_args()
    info = machine_info(args.pg)
    for k, v in info.items():
        print(f"  {k}: {v}")
    if args.info:
        with open(args.info, "w") as f:
            json.dump(info, f, indent=1)
    calibrate(Recorder(args.json, "calibration", "postgres"), args.pg, args.quick)


if __name__ == "__main__":
    main()
