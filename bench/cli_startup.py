"""Start-up cost of one-shot commands: wall time of ``qctl --help``, ``qctl queues list``
on an embedded database, and ``qctl jobs list`` / ``qctl queues list`` on PostgreSQL,
beside two floors: ``python -c pass`` and the least any PostgreSQL command can cost,
``python -c "import psycopg; psycopg.connect(DSN).execute('select 1')"``; and beside
``python -c "import typer"``, the least any command Typer runs costs (``qctl --help``
prints the help generated from the command tree without importing Typer).

    python bench/cli_startup.py [--runs N] [--pg DSN] [--json out.jsonl]

The commands run round-robin, ``--runs`` rounds, and each figure is the median of its
runs: on a shared machine a burst of load then hits every command alike, so the ratios
to the floors (measured in the same rounds) are the figures to read.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import Recorder, base_args, compile_qctl, median, scratch_database

QCTL = str(Path(sys.executable).parent / "qctl")
FLOOR = "import psycopg, sys; psycopg.connect(sys.argv[1]).execute('select 1')"


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    ap = base_args(__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    rec = Recorder(args.json, "cli", "qctl")
    compile_qctl()
    with tempfile.TemporaryDirectory() as tmp, scratch_database(args.pg, "qctl_bench_cli") as pg:
        env = {**os.environ, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp}
        lite = f"sqlite:///{tmp}/bench.db"
        for dsn in (lite, pg):
            for setup in (["db", "migrate"], ["jobs", "enqueue", "bench.kind"]):
                subprocess.run(
                    [QCTL, "--dsn", dsn, *setup], env=env, check=True, stdout=subprocess.DEVNULL
                )
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import typer'": [sys.executable, "-c", "import typer"],
            "qctl --help": [QCTL, "--help"],
            "qctl queues list (sqlite)": [QCTL, "--dsn", lite, "queues", "list"],
            "psycopg connect + select 1 (floor)": [sys.executable, "-c", FLOOR, pg],
            "qctl jobs list (postgres)": [QCTL, "--dsn", pg, "jobs", "list"],
            "qctl queues list (postgres)": [QCTL, "--dsn", pg, "queues", "list"],
        }
        for cmd in cases.values():
            run_once(cmd, env)  # warm the page cache
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, cmd in cases.items():
                samples[name].append(run_once(cmd, env))
    m = {name: median(s) for name, s in samples.items()}
    base, floor = m["python -c pass"], m["psycopg connect + select 1 (floor)"]
    typer = m["python -c 'import typer'"]
    for name, seconds in m.items():
        pg_cmd = "(postgres)" in name
        ref = floor if pg_cmd else base
        ratio = f"{seconds / ref:.2f} x {'the floor' if pg_cmd else 'python -c pass'}"
        if name == "qctl --help":
            ratio += f", {seconds / typer:.2f} x import typer"
        rec.add("cli", name, seconds * 1000, "ms", f"median of {args.runs}; {ratio}")


if __name__ == "__main__":
    main()
