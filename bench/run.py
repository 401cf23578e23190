"""Run every benchmark scenario and append a dated section to docs/benchmarks.md.

    make bench                       # the full run (45 to 55 minutes on 2 cores)
    .venv/bin/python bench/run.py --quick          # a smoke run (a few minutes)
    .venv/bin/python bench/run.py --only queue,peers --no-doc

Options: ``--pg DSN`` (a server DSN; scratch databases named ``qctl_bench_*`` are created
on that server and dropped afterwards; default ``$QCTL_BENCH_PG_DSN`` or
``postgresql://postgres@127.0.0.1:5432/postgres``), ``--only`` (a comma list of
machine, queue, peers, rounds, whatif, hints, admin, dags, cli, tui, dbos, hopper,
dispatch, bulk), ``--no-peers``, ``--no-doc``; ``--admin-db``, ``--hopper-db`` and
``--dispatch-db`` reuse a 10-million-row table loaded by an earlier run.

The peers (pgqueuer, procrastinate) are installed from PyPI into ``bench/.venv-peers``,
an environment of their own created here on first use; they are never dependencies of
qctl. Each scenario script runs in its own process and appends JSON lines to
``bench/out/results-<stamp>.jsonl``; its printed output goes to the console and to
``bench/out/run-<stamp>.log``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from common import DEFAULT_PG, OUT_DIR, VACUUM_EVERY  # noqa: E402

PEERS_VENV = os.path.join(HERE, ".venv-peers")
PEER_PINS = [
    "pgqueuer==1.6.0",
    "procrastinate==3.10.0",
    "asyncpg==0.32.0",
    "psycopg[binary]==3.3.9",
    "psycopg-pool==3.3.3",
]
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
STEPS = [
    "machine",
    "queue",
    "peers",
    "rounds",
    "whatif",
    "hints",
    "admin",
    "dags",
    "cli",
    "tui",
    "dbos",
    "hopper",
    "dispatch",
    "bulk",
]
ROUNDS = 5
"""Alternating rounds of scenario 1 (qctl, then the peers, repeated) in the rounds step:
the queue and peers steps run minutes apart, and on a shared machine the rates moved by a
third between them, so the enqueue targets compare the rounds' medians. Five, not three:
the rounds themselves spread by up to 17% (qctl's batched enqueue 45,085, 45,658 and
52,898 jobs/s in the three rounds of one run on the Xeon)."""


def peers_python() -> str:
    """The bench-only environment with the peers, (re)built when the pins change."""
    py = os.path.join(PEERS_VENV, "bin", "python")
    stamp = os.path.join(PEERS_VENV, ".pins")
    want = "\n".join(PEER_PINS)
    if os.path.exists(py) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == want:
                return py
    print(f"creating {PEERS_VENV} with {', '.join(PEER_PINS)}", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", PEERS_VENV], check=True)
    pip = subprocess.run(
        [py, "-m", "pip", "install", "-q", *PEER_PINS], capture_output=True, text=True
    )
    if pip.returncode != 0:
        sys.exit(f"installing the peers failed:\n{pip.stdout}{pip.stderr}")
    with open(stamp, "w") as f:
        f.write(want)
    return py


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        os.makedirs(OUT_DIR, exist_ok=True)
        self.stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        self.results = os.path.join(OUT_DIR, f"results-{self.stamp}.jsonl")
        self.rounds = os.path.join(OUT_DIR, f"rounds-{self.stamp}.jsonl")
        self.info = os.path.join(OUT_DIR, f"machine-{self.stamp}.json")
        self.log = open(os.path.join(OUT_DIR, f"run-{self.stamp}.log"), "w")  # noqa: SIM115
        self.texts: dict[str, str] = {}
        self.failures: list[str] = []
        self.durations: dict[str, float] = {}

    def script(
        self, step: str, python: str, name: str, *extra: str, pg: bool = True, json: str = ""
    ) -> str:
        """Run one scenario script (its results into ``json``, by default the run's
        results file); its stdout is echoed, logged and returned."""
        cmd = [python, os.path.join(HERE, name), *extra]
        if pg:
            cmd += ["--pg", self.args.pg, "--json", json or self.results]
            if self.args.quick:
                cmd.append("--quick")
        print(f"\n### {step}: {' '.join(cmd[1:])}", flush=True)
        self.log.write(f"\n### {step}: {' '.join(cmd)}\n")
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        out = []
        for line in proc.stdout:
            sys.stdout.write(line)
            self.log.write(line)
            out.append(line)
        rc = proc.wait()
        self.durations[step] = self.durations.get(step, 0) + time.perf_counter() - t0
        self.log.flush()
        if rc != 0:
            self.failures.append(f"{step} ({name}) exited {rc}; see the run log")
        return "".join(out)

    def run(self) -> None:
        steps = self.args.only.split(",") if self.args.only else STEPS
        if self.args.no_peers and "peers" in steps:
            steps.remove("peers")
        py = sys.executable
        q = self.args.quick
        if "machine" in steps:
            self.script("machine", py, "machine.py", "--info", self.info)
        sc = ["--scenarios", self.args.scenarios] if self.args.scenarios else []
        # What-if: the PostgreSQL burn-downs with the vacuum an autovacuum tuned for a
        # queue table would run (this server may run with autovacuum off), for every system.
        vacuum = ["--scenarios", "2", "--vacuum-every", f"{VACUUM_EVERY:g}"]
        if "queue" in steps:
            self.script("queue", py, "queue_qctl.py", *sc)
            self.script("queue", py, "queue_qctl.py", "--backends", "postgres", *vacuum)
        if "peers" in steps:
            self.script("peers", peers_python(), "queue_peers.py", *sc)
            self.script("peers", peers_python(), "queue_peers.py", *vacuum)
        if "rounds" in steps:
            one = ["--scenarios", "1"]
            pg_only = [*one, "--backends", "postgres"]  # the peers run on PostgreSQL only
            for _ in range(1 if q else ROUNDS):
                self.script("rounds", py, "queue_qctl.py", *pg_only, json=self.rounds)
                if not self.args.no_peers:
                    self.script("rounds", peers_python(), "queue_peers.py", *one, json=self.rounds)
        if "whatif" in steps:
            self.script("whatif", py, "whatif_roundtrips.py")
        if "hints" in steps:
            n = ["--n", "100"] if q else ["--n", "300"]
            self.texts["hints"] = self.script("hints", py, "hint_latency.py", *n, pg=False)
        if "admin" in steps:
            extra = ["--rows", str(self.args.rows)] if self.args.rows else []
            if self.args.admin_db:
                extra += ["--db", self.args.admin_db]
            self.script("admin", py, "admin_scale.py", *extra)
        if "dags" in steps:
            self.script("dags", py, "dags_bench.py")
        if "cli" in steps:
            runs = ["--runs", "5" if q else "20"]
            self.texts["cli"] = self.script("cli", py, "cli_startup.py", *runs)
        if "tui" in steps:
            extra = ["--runs", "2", "--minutes", "0.2"] if q else ["--runs", "7", "--minutes", "10"]
            extra += ["--pg", "--server", self.args.pg, "--json", self.results]
            self.texts["tui"] = self.script("tui", py, "tui_bench.py", *extra, pg=False)
        if "dbos" in steps:
            self.script("dbos", py, "dbos_scale.py")
        for system in ("hopper", "dispatch"):
            if system in steps:
                kept = getattr(self.args, f"{system}_db")
                self.script(system, py, f"{system}_scale.py", *(["--db", kept] if kept else []))
        if "bulk" in steps:
            self.script("bulk", py, "bulk_verbs.py")
        section = report(self)
        print("\n" + section)
        if not self.args.no_doc:
            append_doc(section)
            print(f"appended to {os.path.relpath(DOC, ROOT)}")


# --- the report -------------------------------------------------------------------------------


def load(path: str) -> list[dict[str, Any]]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fmt(value: float | None, unit: str = "") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if abs(value) < 1 and value != 0:
        return f"{value:.3f}"
    if unit in ("x", "") and abs(value) < 10:
        return f"{value:.2f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


class Table:
    """Results indexed by (scenario, system, backend, metric)."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.by: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for r in rows:
            self.by[(r["scenario"], r["system"], r["backend"], r["metric"])] = r

    def get(self, scenario: str, system: str, backend: str, metric: str) -> float | None:
        r = self.by.get((scenario, system, backend, metric))
        return None if r is None else float(r["value"])

    def metrics(self, scenario: str) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rows:
            if r["scenario"] == scenario:
                seen.setdefault(r["metric"], None)
        return list(seen)

    def notes(self, scenario: str, system: str, backend: str, metric: str) -> str:
        r = self.by.get((scenario, system, backend, metric))
        return "" if r is None else str(r.get("note", ""))


PEERS = ("pgqueuer", "procrastinate")


def best_peer(t: Table, metric: str, higher: bool) -> float | None:
    values = [v for p in PEERS if (v := t.get("queue", p, "postgres", metric)) is not None]
    if not values:
        return None
    return max(values) if higher else min(values)


def qctl_best(t: Table, metrics: tuple[str, ...], backend: str = "postgres") -> float | None:
    values = [v for m in metrics if (v := t.get("queue", "qctl", backend, m)) is not None]
    return max(values) if values else None


BATCHED = ("batched enqueue", "batched enqueue, pipelined", "batched enqueue, enqueue_many_tx")
BURN = ("burn-down", "burn-down, ack_many")
VACUUMED = f", VACUUM every {VACUUM_EVERY:g} s"
"""The suffix of the burn-down what-if's figures (every system's queue table vacuumed)."""
BATCH_PRODUCER = ", batched producer"
"""Scenario 3 with qctl's producer on ``enqueue_many`` (its workers always batch)."""


Rounds = dict[tuple[str, str], list[float]]
"""The rounds step's results: (system, metric) -> its value in each round, in order."""


def load_rounds(path: str) -> Rounds:
    out: Rounds = {}
    for r in load(path):
        out.setdefault((r["system"], r["metric"]), []).append(float(r["value"]))
    return out


def round_values(rounds: Rounds, system: str, figure: str) -> list[float]:
    """``figure``'s value in each round; qctl's batched enqueue is the best of its batch
    calls in that round, as in the targets."""
    metrics = BATCHED if system == "qctl" and figure == "batched enqueue" else (figure,)
    series = [rounds[(system, m)] for m in metrics if (system, m) in rounds]
    return [max(values) for values in zip(*series, strict=False)]


def round_medians(rounds: Rounds, figure: str) -> tuple[float | None, float | None]:
    """qctl's median over the rounds and the faster peer's."""
    ours = round_values(rounds, "qctl", figure)
    peers = [statistics.median(v) for p in PEERS if (v := round_values(rounds, p, figure))]
    return (statistics.median(ours) if ours else None, max(peers) if peers else None)


def rounds_table(rounds: Rounds) -> list[str]:
    lines = [
        "| figure (jobs/s) | qctl PG, each round | pgqueuer | procrastinate"
        " | qctl / faster peer (medians) |",
        "|---|---|---|---|---:|",
    ]
    for figure in ("single enqueue", "batched enqueue"):
        cells = [
            ", ".join(fmt(v) for v in round_values(rounds, system, figure)) or "-"
            for system in ("qctl", *PEERS)
        ]
        ours, theirs = round_medians(rounds, figure)
        ratio = fmt(ours / theirs, "x") + "x" if ours and theirs else "-"
        lines.append(f"| {figure} | " + " | ".join(cells) + f" | {ratio} |")
    return lines


def queue_table(t: Table) -> list[str]:
    lines = [
        "| figure | qctl PG | pgqueuer | procrastinate | qctl / best peer (rates: higher is"
        " better; latencies: lower) | qctl PG / pgbench simple-update (1 client) | qctl SQLite |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    pgb = t.get("calibration", "postgres", "postgres", "pgbench simple-update, 1 client")
    metrics = [m for m in t.metrics("queue") if "watcher" not in m and "two writers" not in m]
    for m in metrics:
        unit = next(
            (r["unit"] for r in t.rows if r["scenario"] == "queue" and r["metric"] == m), ""
        )
        q = t.get("queue", "qctl", "postgres", m)
        higher = unit == "jobs/s"
        peer = best_peer(t, m, higher) if unit in ("jobs/s", "ms") else None
        if m in BATCHED or m in BURN or "stability" in m:
            peer = best_peer(t, m.split(",")[0], unit == "jobs/s") if unit == "jobs/s" else None
        if BATCH_PRODUCER in m:  # the peers' producers enqueue one job per call
            peer = best_peer(t, m.replace(BATCH_PRODUCER, ""), False)
        ratio = q / peer if q is not None and peer else None
        vs_pgb = q / pgb if q is not None and pgb and unit == "jobs/s" else None
        cells = [
            fmt(q, unit),
            fmt(t.get("queue", "pgqueuer", "postgres", m), unit),
            fmt(t.get("queue", "procrastinate", "postgres", m), unit),
            fmt(ratio, "x") + ("x" if ratio is not None else ""),
            fmt(vs_pgb, "x") + ("x" if vs_pgb is not None else ""),
            fmt(t.get("queue", "qctl", "sqlite", m), unit),
        ]
        lines.append(f"| {m} ({unit or 'ratio'}) | " + " | ".join(cells) + " |")
    return lines


def simple_table(t: Table, scenario: str, backends: tuple[str, ...]) -> list[str]:
    head = " | ".join(b for b in backends)
    lines = [f"| figure | {head} | notes |", "|---|" + "---:|" * len(backends) + "---|"]
    for m in t.metrics(scenario):
        unit = next(
            (r["unit"] for r in t.rows if r["scenario"] == scenario and r["metric"] == m), ""
        )
        system = "qctl" if scenario != "calibration" else "postgres"
        cells = [fmt(t.get(scenario, system, b, m), unit) for b in backends]
        note = next(
            (t.notes(scenario, system, b, m) for b in backends if t.notes(scenario, system, b, m)),
            "",
        )
        lines.append(f"| {m} ({unit or 'ratio'}) | " + " | ".join(cells) + f" | {note} |")
    return lines


def hint_table(t: Table) -> list[str]:
    lines = [
        "| figure | PG without | PG with watcher | PG ratio | SQLite without |"
        " SQLite with watcher | SQLite ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for m in ("single enqueue", "batched enqueue"):
        cells = []
        for b in ("postgres", "sqlite"):
            a = t.get("queue", "qctl", b, m)
            w = t.get("queue", "qctl", b, f"{m} + watcher")
            cells += [fmt(a), fmt(w), fmt(w / a if a and w else None, "x")]
        lines.append(f"| {m} (jobs/s) | " + " | ".join(cells) + " |")
    return lines


DBOS_SIDE_BY_SIDE = (
    ("first page (50), in process", "list first page (50)",
     "DBOSClient.list_workflows first page (50)"),
    ("page 100,000 deep, in process", "list page 100,000 deep (keyset)",
     "DBOSClient.list_workflows page 100,000 deep (offset)"),
    ("first page (50), command line", "CLI: qctl workflows list -n 50 -o json",
     "CLI: dbos workflow list -l 50 -d"),
)  # fmt: skip
"""qctl's read beside DBOS's own for the same page (``bench/dbos_scale.py``)."""
DBOS_READS = (
    "list first page (50)",
    "list filtered page (ERROR, name)",
    "list page 100,000 deep (keyset)",
    "counts by status",
    "dashboard refresh (overview)",
)
"""The DBOS reads the 50 ms target covers."""


def dbos_side_by_side(t: Table, backends: tuple[str, ...]) -> list[str]:
    cells = " | ".join(f"qctl {b} (ms) | DBOS {b} (ms) | DBOS / qctl" for b in backends)
    lines = [f"| page | {cells} |", "|---|" + "---:|---:|---:|" * len(backends)]
    for label, ours, theirs in DBOS_SIDE_BY_SIDE:
        row = []
        for b in backends:
            q, d = t.get("dbos", "qctl", b, ours), t.get("dbos", "qctl", b, theirs)
            row += [fmt(q), fmt(d), f"{d / q:.1f}x" if q and d else "-"]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return lines


def dbos_targets(t: Table) -> list[tuple[str, str, bool | None]]:
    rows: list[tuple[str, str, bool | None]] = []
    for b in ("postgres", "sqlite"):
        reads = [r for m in DBOS_READS if (r := t.by.get(("dbos", "qctl", b, m)))]
        if not reads:
            continue
        worst = max(reads, key=lambda r: r["value"])
        rows.append(
            (
                f"DBOS reads at scale < 50 ms each ({b}: first page, filtered page, a page"
                " 100,000 deep, counts by status, dashboard refresh)",
                f"{len(reads)} reads, worst {worst['metric']}: {worst['value']:,.1f} ms",
                all(r["value"] < 50 for r in reads),
            )
        )
        if b == "postgres":
            planned = [r for r in reads if r.get("extra", {}).get("seq_scan_plans")]
            rows.append(
                (
                    "DBOS PG: no sequential scan of workflow_status in those reads (EXPLAIN)",
                    ", ".join(r["metric"] for r in planned) or f"none in {len(reads)} reads",
                    not planned,
                )
            )
        tx = t.get("dbos", "qctl", b, "vacuum workflows (slowest transaction)")
        done = t.get("dbos", "qctl", b, "vacuum workflows (deleted)")
        rows.append(
            (
                f"DBOS vacuum workflows: every transaction < 1 s ({b})",
                "-" if tx is None else f"longest {tx:,.0f} ms, {done or 0:,.0f} deleted",
                None if tx is None else tx < 1000,
            )
        )
    return rows


SCALE = {"hopper": "hopper-scale", "dispatch": "dispatch-scale"}
"""The Go systems' scale steps and their results' scenario."""
TUNED = " (db tune)"


def scale_table(t: Table, system: str) -> list[str]:
    """The reads' table, after a line on the database they ran on (loaded by this run or
    reused, as ``common.load_or_reuse`` recorded it)."""
    database = t.by.get((SCALE[system], system, "postgres", "database"))
    lines = []
    if database:
        lines += [f"Database: {database['note']}.", ""]
    lines += ["| read | ms | what it is | big tables scanned sequentially |", "|---|---:|---|---|"]
    for r in t.rows:
        if r["scenario"] == SCALE[system] and r is not database:
            kind = "refresh read or first page" if r["extra"].get("refresh") else "command"
            scans = ", ".join(r["extra"].get("seq_scans") or []) or "none"
            lines.append(f"| {r['metric']} | {fmt(r['value'])} | {kind} | {scans} |")
    return lines


def scale_targets(t: Table) -> list[tuple[str, str, bool | None]]:
    """hopper's and dispatch's refresh reads and first pages at scale: each under 50 ms
    with no sequential scan of a big table; a read ``qctl db tune`` serves counts tuned."""
    rows: list[tuple[str, str, bool | None]] = []
    for system, scenario in SCALE.items():
        found = [r for r in t.rows if r["scenario"] == scenario and r["extra"].get("refresh")]
        tuned = {r["metric"].removesuffix(TUNED) for r in found if r["metric"].endswith(TUNED)}
        reads = [r for r in found if r["metric"].endswith(TUNED) or r["metric"] not in tuned]
        if not reads:
            continue
        jobs = reads[0]["extra"].get("jobs", 0)
        worst = max(reads, key=lambda r: r["value"])
        after = " (after `qctl db tune`)" if tuned else ""
        rows.append(
            (
                f"{system}: every refresh read and first page < 50 ms at {jobs:,} jobs{after}",
                f"{len(reads)} reads, worst {worst['metric']}: {worst['value']:,.1f} ms",
                all(r["value"] < 50 for r in reads),
            )
        )
        scanning = [r["metric"] for r in reads if r["extra"].get("seq_scans")]
        rows.append(
            (
                f"{system}: no sequential scan of a big table in those reads (EXPLAIN)",
                ", ".join(scanning) or f"none in {len(reads)} reads",
                not scanning,
            )
        )
    return rows


BULK_KINDS = ("retry", "cancel")
BULK_SYSTEMS = ("azync", "hopper", "dispatch", "river", "oban")
BULK_TARGETS = {
    "time": ("/ azync", 1.5),
    "peak RSS": ("MB", 100.0),
    "longest qctl transaction": ("ms", 1000.0),
    "worker claim p99 / alone": ("x", 1.2),
}
"""The issue's targets of a bulk verb by filter (``bench/bulk_verbs.py``): within 1.5x
azync's time, peak RSS, the longest transaction, the worker's p99 over its own."""


def bulk_figure(t: Table, system: str, kind: str, figure: str) -> float | None:
    """One figure of a bulk verb; ``time`` as a ratio to azync's time for the same kind
    when ``figure`` is ``/ azync``."""
    if figure == "/ azync":
        ours = t.get("bulk", system, "postgres", f"{kind}: time")
        base = t.get("bulk", "azync", "postgres", f"{kind}: time")
        return ours / base if ours is not None and base else None
    return t.get("bulk", system, "postgres", f"{kind}: {figure}")


def bulk_section(t: Table) -> list[str]:
    machine = t.by.get(("bulk", "machine", "postgres", "machine"))
    end = t.by.get(("bulk", "machine", "postgres", "load at end"))
    lines = []
    if machine:
        x = machine["extra"]
        lines += [
            f"{x.get('date', '?')}; {x.get('cores', '?')} cores, {x.get('cpu', '?')},"
            f" {x.get('memory', '?')}; PostgreSQL {x.get('postgresql', '?')}"
            f" ({x.get('server settings', '')}); load average at start"
            f" {x.get('load average at start', '?')}"
            + (f", at end {end['note']}" if end else "")
            + ".",
            "",
        ]
    lines += [
        "| system | verb (`-o json`) | done | time (s) | / azync, same kind | / azync retry |"
        " peak RSS (MB) | longest qctl transaction (ms) | worker claim p99 during / alone |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in BULK_KINDS:
        for system in BULK_SYSTEMS:
            r = t.by.get(("bulk", system, "postgres", f"{kind}: time"))
            if r is None:
                continue
            x = r["extra"]
            done = "-" if x.get("done") is None else f"{x['done']:,} of {x['jobs']:,}"
            if not x.get("ok"):
                done += f" (exit {x.get('exit')})"
            ratio = bulk_figure(t, system, kind, "/ azync")
            # the reference is azync's retry; azync has no cancel to compare with
            retry = t.get("bulk", "azync", "postgres", "retry: time")
            p99 = t.by.get(("bulk", system, "postgres", f"{kind}: worker claim p99 / alone"))
            cells = [
                system,
                f"`{x['command']}`",
                done,
                fmt(r["value"]),
                "-" if ratio is None else f"{ratio:.2f}x",
                f"{r['value'] / retry:.2f}x" if retry else "-",
                fmt(bulk_figure(t, system, kind, "peak RSS")),
                fmt(bulk_figure(t, system, kind, "longest qctl transaction")),
                "-" if p99 is None else f"{p99['value']:.2f}x ({p99['note']})",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def bulk_targets(t: Table) -> list[tuple[str, str, bool | None]]:
    rows: list[tuple[str, str, bool | None]] = []
    for name, (unit, limit) in BULK_TARGETS.items():
        found = []
        for kind in BULK_KINDS:
            for system in BULK_SYSTEMS:
                if system == "azync" and unit == "/ azync":
                    continue
                v = bulk_figure(t, system, kind, unit if unit == "/ azync" else name)
                if v is not None:
                    found.append((f"{system} {kind}", v))
        if not found:
            continue
        shown = "; ".join(f"{w} {fmt(v)}{'x' if unit in ('x', '/ azync') else ' ' + unit}"
                          for w, v in found)  # fmt: skip
        what = "time within 1.5x azync's" if unit == "/ azync" else f"{name} <= {limit:g} {unit}"
        rows.append((f"bulk verbs by filter: {what}", shown, all(v <= limit for _, v in found)))
    return rows


PCTS = ("p50", "p99")


def _pair(values: list[float | None]) -> str:
    return "/".join(fmt(v) for v in values)


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "**missed**")


def _first_last(t: Table, system: str, metric: str) -> str | None:
    r = t.by.get(("queue", system, "postgres", metric))
    windows = (r or {}).get("extra", {}).get("windows") or []
    if len(windows) < 2 or not windows[0]:
        return None
    return f"{windows[-1] / windows[0]:.2f}"


ADMIN_REFRESH = ("live_depths", "search_jobs ", "count_jobs ")
"""The console's reads on the dashboard's refresh path and `qctl jobs list`."""


def _refresh_reads(t: Table) -> list[dict[str, Any]]:
    """Admin reads the 50 ms target covers, with `qctl db tune` (the tuned figure where
    the run took one): every state's first page and count, the depths and the deep keyset
    page; not the listing of every state at once, nor the exact counts asked for on
    demand, nor the dead jobs' failure-order page 5,000 deep (a deep page, not a first)."""
    out = []
    metrics = {r["metric"] for r in t.rows if r["scenario"] == "admin"}
    for r in t.rows:
        m = r["metric"]
        if (
            r["scenario"] != "admin"
            or r["backend"] != "postgres"
            or not m.startswith(ADMIN_REFRESH)
            or f"{m}, tuned" in metrics
        ):
            continue
        if "any state" in m or "exact=True" in m or "page 1 (keyset)" in m or "profile" in m:
            continue
        if "5,000 deep" in m:
            continue
        out.append(r)
    return out


def targets(t: Table, rounds: Rounds) -> list[str]:
    rows: list[tuple[str, str, bool | None]] = []

    def cmp(
        name: str,
        ours: float | None,
        theirs: float | None,
        factor: float,
        note: str = "",
        what_if: bool = False,
    ) -> None:
        if ours is None or theirs is None:
            rows.append((name, "not measured", None))
            return
        measured = f"{ours:,.0f} vs {theirs:,.0f} ({ours / theirs:.2f}x){note}"
        rows.append((name, measured, None if what_if else ours >= theirs * factor))

    reads = _refresh_reads(t)
    if reads:
        worst = max(reads, key=lambda r: r["value"])
        rows.append(
            (
                "PG admin reads at scale < 50 ms each with `qctl db tune` (depths, every"
                " state's first page and count, a page 100,000 deep)",
                f"{len(reads)} reads, worst {worst['metric']}: {worst['value']:,.1f} ms",
                all(r["value"] < 50 for r in reads),
            )
        )
        planned = [r for r in reads if r.get("extra", {}).get("seq_scan_plans")]
        rows.append(
            (
                "PG no sequential scan of azync_jobs in those reads (EXPLAIN)",
                ", ".join(r["metric"] for r in planned) or f"none in {len(reads)} reads",
                not planned,
            )
        )
    depths = [r for r in reads if r["metric"].startswith("live_depths")]
    if depths:
        worst = max(depths, key=lambda r: r["value"])
        rows.append(
            (
                "PG `live_depths` (the refresh read) < 20 ms on a quiet machine",
                f"worst {worst['metric']}: {worst['value']:,.1f} ms",
                worst["value"] < 20,
            )
        )
    base = t.get("cli", "qctl", "cli", "python -c pass")
    v = t.get("cli", "qctl", "cli", "qctl --help")
    rows.append(
        (
            "`qctl --help` <= 2.5 x `python -c pass`",
            "not measured" if v is None or not base else f"{v / base:.2f}x ({v:,.0f} ms)",
            None if v is None or not base else v <= 2.5 * base,
        )
    )
    for metric in ("qctl jobs list (postgres)", "qctl queues list (postgres)"):
        v = t.get("cli", "qctl", "cli", metric)
        floor = t.get("cli", "qctl", "cli", "psycopg connect + select 1 (floor)")
        rows.append(
            (
                f"`{metric.split(' (')[0]}` on PostgreSQL <= 1.4 x the psycopg floor",
                "not measured" if v is None or not floor else f"{v / floor:.2f}x ({v:,.0f} ms)",
                None if v is None or not floor else v <= 1.4 * floor,
            )
        )
    for backend, what in (("sqlite", "azync, SQLite"), ("postgres", "azync, PostgreSQL"),
                          ("dbos", "DBOS, SQLite")):  # fmt: skip
        v = t.get("tui", "qctl", backend, "first_frame median")
        ratio = t.get("tui", "qctl", backend, "first_frame / Textual floor")
        rows.append(
            (
                f"`qctl top` first frame <= 1.3 x a minimal Textual app's ({what})",
                "not measured" if v is None or ratio is None else f"{ratio:.2f}x ({v:.3f} s)",
                None if ratio is None else ratio <= 1.3,
            )
        )
        if backend == "dbos":
            continue
        v = t.get("tui", "qctl", backend, "latency p95")
        rows.append(
            (
                f"`qctl top` change committed -> on screen p95 < 150 ms ({what})",
                "not measured" if v is None else f"{v * 1000:.0f} ms",
                None if v is None else v < 0.150,
            )
        )
    n = len(round_values(rounds, "qctl", "single enqueue"))
    for name, figure, ours, theirs, factor in (
        (
            "PG batched enqueue >= 1.2 x the faster peer",
            "batched enqueue",
            qctl_best(t, BATCHED),
            best_peer(t, "batched enqueue", True),
            1.2,
        ),
        (
            "PG single enqueue >= the faster peer",
            "single enqueue",
            t.get("queue", "qctl", "postgres", "single enqueue"),
            best_peer(t, "single enqueue", True),
            1.0,
        ),
    ):
        if n:  # the rounds' medians decide; the queue and peers steps' figures beside them
            step = f"; queue and peers steps {fmt(ours)} vs {fmt(theirs)}"
            medians = round_medians(rounds, figure)
            cmp(f"{name} (medians of {n} alternating rounds)", *medians, factor, step)
        else:
            cmp(name, ours, theirs, factor)
    cmp(
        "PG burn-down >= 1.2 x the faster peer",
        qctl_best(t, BURN),
        best_peer(t, "burn-down", True),
        1.2,
    )
    cmp(
        f"PG burn-down >= faster peer, each with a VACUUM every {VACUUM_EVERY:g} s (what-if)",
        qctl_best(t, tuple(m + VACUUMED for m in BURN)),
        best_peer(t, "burn-down" + VACUUMED, True),
        1.0,
        what_if=True,
    )
    for metric in BURN:
        for what_if in ("", VACUUMED):
            flat = _first_last(t, "qctl", metric + what_if)
            if what_if and flat is None:
                continue
            rows.append(
                (
                    f"PG {metric}{what_if}: last window >= 0.8 x first"
                    + (" (what-if)" if what_if else ""),
                    "not measured" if flat is None else f"{flat}x",
                    None if flat is None or what_if else float(flat) >= 0.8,
                )
            )
    # Like for like: qctl's producer enqueues one job a call, as the peers' producers do
    # (its batched producer's figures are shown beside); the workers lease in batches.
    e2e, under = [], []
    for frac in (25, 50, 75):
        one = [t.get("queue", "qctl", "postgres", f"e2e {frac}% wakeups {p}") for p in PCTS]
        batched = [
            t.get("queue", "qctl", "postgres", f"e2e {frac}% wakeups{BATCH_PRODUCER} {p}")
            for p in PCTS
        ]
        pgq = [t.get("queue", "pgqueuer", "postgres", f"e2e {frac}% wakeups {p}") for p in PCTS]
        if None in one or None in pgq:
            continue
        under.append(all(q <= g for q, g in zip(one, pgq, strict=True)))  # type: ignore[operator]
        also = "" if None in batched else f", batched producer {_pair(batched)}"
        e2e.append(f"{frac}%: qctl {_pair(one)}{also}; pgqueuer {_pair(pgq)} ms")
    rows.append(
        (
            "scenario 3, PG enqueue-to-lease p50 and p99 <= pgqueuer's (25%, 50%, 75% of the"
            " burn-down rate)",
            "; ".join(e2e) or "not measured",
            all(under) if under else None,
        )
    )
    demo = t.by.get(("tui", "qctl", "sqlite", "demo RSS"))
    curve = (demo or {}).get("extra", {}).get("curve") or []
    rows.append(
        (
            f"`qctl demo` resident memory flat over {len(curve) or 'ten'} minute(s) (last <= 1.1 x"
            " the first minute's)",
            f"{curve} MB" if curve else "not measured",
            None if len(curve) < 2 else curve[-1] <= 1.1 * curve[0],
        )
    )
    tx = t.get("admin", "qctl", "postgres", "retry_all_dead longest transaction")
    rows.append(
        (
            "retry_all_dead: every transaction < 1 s",
            "-" if tx is None else f"longest {tx:,.0f} ms",
            None if tx is None else tx < 1000,
        )
    )
    locked = t.get("queue", "qctl", "sqlite", "two writers: 'database is locked' errors")
    rows.append(
        (
            "SQLite two writers: no 'database is locked'",
            "-" if locked is None else f"{locked:.0f} errors",
            None if locked is None else locked == 0,
        )
    )
    rows += dbos_targets(t)
    rows += scale_targets(t)
    rows += bulk_targets(t)
    lines = ["| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {n} | {m} | {verdict(ok)} |" for n, m, ok in rows]
    return lines


def report(r: Runner) -> str:
    t = Table(load(r.results))
    info: dict[str, str] = {}
    if os.path.exists(r.info):
        with open(r.info) as f:
            info = json.load(f)
    # results-<stamp>.jsonl: the run's start, also when --report renders an older run.
    started = datetime.strptime(os.path.basename(r.results)[8:23], "%Y%m%d-%H%M%S")
    kind = "quick smoke run" if r.args.quick else "full run"
    if r.args.only or r.args.scenarios:
        kind += f", steps {r.args.only or 'all'}, scenarios {r.args.scenarios or 'all'}"
    out = [
        # Without the machine step's date, the run's start dates it, not this render.
        f"## Run of {info.get('date', started.strftime('%Y-%m-%d %H:%M UTC'))} ({kind})",
        "",
    ]
    if info:
        out += [f"- **{k}**: {v}" for k, v in info.items()]
    took = ", ".join(f"{k} {v:.0f} s" for k, v in r.durations.items())
    out += [
        f"- **step durations**: {took}",
        f"- **raw results**: `bench/out/{os.path.basename(r.results)}`",
        "",
    ]
    if r.failures:
        out += ["**Failed steps:** " + "; ".join(r.failures), ""]
    if any(x["scenario"] == "calibration" for x in t.rows):
        out += ["### Calibration (what the server itself does)", ""]
        out += [*simple_table(t, "calibration", ("postgres",)), ""]
    if any(x["scenario"] == "queue" for x in t.rows):
        out += ["### Scenarios 1-3: enqueue, burn-down, end to end (qctl beside the peers)", ""]
        out += [*queue_table(t), ""]
        out += ["### Scenario 4: change-hint overhead (scenario 1 with a watcher attached)", ""]
        out += [*hint_table(t), ""]
        w = [x for x in t.rows if x["metric"].startswith("two writers")]
        for x in w:
            out += [
                f"SQLite, two writer processes: **{x['value']:.0f}** 'database is locked'"
                f" errors ({x['note']}).",
                "",
            ]
        e2e = [
            x
            for x in t.rows
            if x["scenario"] == "queue"
            and x["metric"].startswith("e2e ")
            and x["metric"].endswith(" p50")
        ]
        if e2e:
            out += ["Scenario 3, each producer's target and achieved rate:", ""]
            out += [
                f"- {x['system']} {x['backend']}, {x['metric'][4:-4]}: {x['note']}" for x in e2e
            ]
            out.append("")
        burn = [x for x in t.rows if x["metric"] == "burn-down" and x["extra"].get("windows")]
        if burn:
            out += ["Burn-down rate per window (jobs/s):", ""]
            for x in burn:
                out.append(f"- {x['system']} {x['backend']}: {x['extra']['windows']}")
            out.append("")
    if any(x["scenario"] == "whatif" for x in t.rows):
        out += [
            "### What-if: the same effects with fewer round trips (`bench/whatif_roundtrips.py`)",
            "",
        ]
        out += [*simple_table(t, "whatif", ("postgres",)), ""]
    if "hints" in r.texts:
        out += [
            "Change-hint latency (`bench/hint_latency.py`, H6):",
            "",
            "```",
            r.texts["hints"].strip(),
            "```",
            "",
        ]
    if any(x["scenario"] == "admin" for x in t.rows):
        out += ["### Scenario 5: admin at scale", ""]
        out += [*simple_table(t, "admin", ("postgres", "sqlite")), ""]
    if any(x["scenario"] == "dags" for x in t.rows):
        out += ["### Scenario 6: DAGs", ""]
        out += [*simple_table(t, "dags", ("postgres", "sqlite")), ""]
    if any(x["scenario"] in ("cli", "tui") for x in t.rows):
        out += ["### Scenario 7: CLI and dashboard", ""]
        out += [*simple_table(t, "cli", ("cli",)), ""]
        out += [*simple_table(t, "tui", ("sqlite", "postgres", "dbos")), ""]
    if any(x["scenario"] == "dbos" for x in t.rows):
        ran = {x["backend"] for x in t.rows if x["scenario"] == "dbos"}
        backends = tuple(b for b in ("postgres", "sqlite") if b in ran)
        out += ["### Scenario 8: DBOS at scale (`bench/dbos_scale.py`)", ""]
        out += [*simple_table(t, "dbos", backends), ""]
        out += ["qctl beside DBOS's own listing, same page, same database, same run:", ""]
        out += [*dbos_side_by_side(t, backends), ""]
    for system, scenario in SCALE.items():
        if any(x["scenario"] == scenario for x in t.rows):
            out += [f"### {system} at scale (`bench/{system}_scale.py`)", ""]
            out += [*scale_table(t, system), ""]
    if any(x["scenario"] == "bulk" for x in t.rows):
        out += ["### Bulk verbs by filter at scale (`bench/bulk_verbs.py`)", ""]
        out += [*bulk_section(t), ""]
    rounds = load_rounds(r.rounds)
    if rounds:
        n = len(round_values(rounds, "qctl", "single enqueue"))
        out += [f"### Scenario 1 in {n} alternating rounds (qctl, then the peers, repeated)", ""]
        out += [*rounds_table(rounds), ""]
    out += ["### Targets (computed from this run)", "", *targets(t, rounds), ""]
    return "\n".join(out)


def append_doc(section: str) -> None:
    with open(DOC, "a") as f:
        f.write("\n" + section + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pg", default=DEFAULT_PG)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help=f"comma list of {','.join(STEPS)}")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--scenarios", default="", help="queue and peers steps: e.g. 1,2 (all)")
    ap.add_argument("--no-doc", action="store_true", help="print the section only")
    ap.add_argument("--rows", type=int, default=0, help="admin table size on PostgreSQL")
    ap.add_argument(
        "--admin-db",
        default="",
        help="admin step: build its table in this database, or reuse it when a read-only run"
        " (admin_scale.py --db --reads-only) left it; dropped after the run",
    )
    for system in SCALE:
        ap.add_argument(
            f"--{system}-db",
            default="",
            help=f"{system} step: load its database into this one, or reuse it when an earlier"
            f" run loaded it (bench/{system}_scale.py --db); kept after the run",
        )
    ap.add_argument("--report", default="", help="re-render a results file, run nothing")
    args = ap.parse_args()
    runner = Runner(args)
    if args.report:
        runner.results = args.report
        runner.rounds = args.report.replace("results-", "rounds-")
        runner.info = args.report.replace("results-", "machine-").replace(".jsonl", ".json")
        print(report(runner))
        return
    runner.run()
    sys.exit(1 if runner.failures else 0)


if __name__ == "__main__":
    main()
