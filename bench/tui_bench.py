"""Dashboard benchmarks: the real ``qctl top`` / ``qctl demo`` in a pty (120x40).

- first frame: spawn to the first rendered data (the overview's status line saying
  ``updated``) of azync's dashboard (SQLite, and PostgreSQL with ``--pg``) and DBOS's
  (an empty SQLite system database made by ``dbos migrate``), repeated, median;
  round-robin with ``bench/textual_floor.py``, a minimal Textual app, whose first frame
  is the floor any Textual dashboard starts above;
- change latency: a job committed by this process -> its kind shown by the dashboard,
  median and p95 (SQLite by default; ``--pg`` also against PostgreSQL in a scratch schema);
- memory: RSS of ``qctl demo`` after ``--minutes`` of its workload (run it long).

    .venv/bin/python bench/tui_bench.py [--runs 5] [--samples 30] [--minutes 1] [--pg]
        [--server DSN] [--json out.jsonl]

Prints a Markdown table (for docs/benchmarks.md); with ``--json PATH`` appends the
figures as JSON lines, as the other scenario scripts do. PostgreSQL runs in a scratch
database on ``--server`` (dropped afterwards).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import DEFAULT_PG, Recorder, compile_qctl, pct, scratch_database

QCTL = str(Path(sys.executable).parent / "qctl")
FLOOR = "Textual floor"
FLOOR_APP = [sys.executable, str(Path(__file__).resolve().parent / "textual_floor.py")]
TABBED = "Textual floor, six tabs"
"""The same app in the tabs ``qctl top`` has: the part of the ratio the tabs cost."""
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


class Pty:
    def __init__(self, args: list[str], env: dict[str, str], program: str = QCTL) -> None:
        self.child = pexpect.spawn(
            program, args, dimensions=(40, 120), env=env, encoding="utf-8", codec_errors="replace"
        )
        self.text = ""

    def wait_for(self, needle: str, timeout: float = 30.0, start: int | None = None) -> float:
        """Seconds until ``needle`` is written (after offset ``start`` of the text)."""
        t0 = time.monotonic()
        start = len(self.text) if start is None else start
        while needle not in self.text[start:]:
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(needle)
            try:
                chunk = self.child.read_nonblocking(1_000_000, timeout=0.01)
            except pexpect.TIMEOUT:
                continue
            self.text += ANSI.sub("", chunk)
        return time.monotonic() - t0

    def drain(self, seconds: float) -> None:
        """Keep reading (the app blocks on a full pty), keeping only a short tail."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            with contextlib.suppress(pexpect.TIMEOUT):
                self.child.read_nonblocking(1_000_000, timeout=0.1)
        self.text = ""

    def quit(self) -> None:
        self.child.send("q")
        try:
            self.child.expect(pexpect.EOF, timeout=10)
        except pexpect.TIMEOUT:
            self.child.terminate(force=True)


def env(tmp: Path) -> dict[str, str]:
    e = dict(os.environ, TERM="xterm-256color", XDG_DATA_HOME=str(tmp / "data"))
    e["XDG_CONFIG_HOME"] = str(tmp / "cfg")
    e.pop("QCTL_DSN", None)
    return e


def first_frames(commands: dict[str, list[str]], tmp: Path, runs: int) -> dict[str, list[float]]:
    """Seconds from spawn to ``updated`` on screen, ``runs`` times each command, taking
    the commands in turn so that a slow minute on the machine hits all of them alike."""
    out: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (program, *args) in commands.items():
            t0 = time.monotonic()
            pty = Pty(args, env(tmp), program)
            pty.wait_for("updated")
            out[name].append(time.monotonic() - t0)
            pty.quit()
    return out


def change_latency(args: list[str], store: Any, tmp: Path, samples: int) -> list[float]:
    from qctl_store.types import EnqueueParams, JobState, Source

    pty = Pty(args, env(tmp))
    pty.wait_for("updated")
    out = []
    try:
        for _ in range(samples):
            kind = f"lat_{uuid.uuid4().hex[:8]}"
            start = len(pty.text)
            t0 = time.monotonic()
            p = EnqueueParams(kind=kind)
            store.enqueue(p)
            pty.wait_for(kind, start=start)
            out.append(time.monotonic() - t0)
            # One probe row at a time, so the next one is never below the visible rows.
            store.delete_job(Source.QUEUE, p.id, JobState.PENDING)
            time.sleep(0.3)
    finally:
        pty.quit()
    return out


def demo_memory(tmp: Path, minutes: float) -> dict[str, Any]:
    """RSS every 10 s while the demo's workload runs; ``curve``: one sample a minute
    (the first at one minute, when the workload and the dashboard are warm)."""
    pty = Pty(["demo", "--reset"], env(tmp))
    first = pty.wait_for("updated", timeout=60)
    start = time.monotonic()
    samples: list[tuple[float, float]] = []
    end = start + minutes * 60
    while time.monotonic() < end:
        pty.drain(min(10.0, max(0.1, end - time.monotonic())))
        samples.append((time.monotonic() - start, rss_mb(pty.child.pid)))
    pty.quit()
    curve = []
    for m in range(1, int(minutes) + 1):
        at = [mb for t, mb in samples if t >= m * 60 - 5]
        if at:
            curve.append(round(at[0], 1))
    rss = [mb for _, mb in samples]
    return {
        "first_frame_s": first,
        "rss_mb_end": rss[-1],
        "rss_mb_max": max(rss),
        "curve": curve or [round(rss[-1], 1)],
    }


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def migrated(dsn: str) -> Iterator[Any]:
    from qctl_store import open_store

    store = open_store(dsn)
    try:
        store.migrate()
        yield store
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--pg", action="store_true", help="also measure against PostgreSQL")
    ap.add_argument("--server", default=DEFAULT_PG, help="PostgreSQL server DSN for --pg")
    ap.add_argument("--json", default=None, help="append JSON-lines results to this file")
    a = ap.parse_args()
    rec = Recorder(a.json, "tui", "qctl")
    compile_qctl()

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        tmp = Path(d)
        dsns = {"sqlite": f"sqlite:///{tmp / 'bench.db'}"}
        if a.pg:
            dsns["pg"] = stack.enter_context(scratch_database(a.server, "qctl_bench_tui"))
        stores = {name: stack.enter_context(migrated(dsn)) for name, dsn in dsns.items()}
        tops = {name: ["--dsn", dsn, "top"] for name, dsn in dsns.items()}
        # DBOS's dashboard too, on a system database of DBOS's own making
        dbos = f"sqlite:///{tmp / 'dbos.sqlite'}"
        dbos_cli = str(Path(sys.executable).with_name("dbos"))
        subprocess.run([dbos_cli, "migrate", "--sys-db-url", dbos], check=True, capture_output=True)
        frames = first_frames(
            {
                **{name: [QCTL, *top] for name, top in tops.items()},
                "dbos": [QCTL, "--dsn", dbos, "top"],
                FLOOR: FLOOR_APP,
                TABBED: [*FLOOR_APP, "--tabs"],
            },
            tmp,
            a.runs,
        )
        floor = statistics.median(frames.pop(FLOOR))
        tabbed = statistics.median(frames.pop(TABBED))
        results["first_frame_dbos"] = frames.pop("dbos")
        for name, top in tops.items():
            results[f"first_frame_{name}"] = frames[name]
            results[f"latency_{name}"] = change_latency(top, stores[name], tmp, a.samples)
        results["demo"] = demo_memory(tmp, a.minutes)

    print("| measure | median | p95 | n |")
    print("|---|---|---|---|")
    for name, values in results.items():
        if isinstance(values, list):
            med, p95 = statistics.median(values), pct(values, 0.95)
            print(f"| {name} (s) | {med:.3f} | {p95:.3f} | {len(values)} |")
    print(f"| {FLOOR} first frame (s) | {floor:.3f} | | {a.runs} |")
    print(f"| {TABBED} first frame (s) | {tabbed:.3f} | | {a.runs} |")
    demo = results["demo"]
    print(f"| demo first frame (s) | {demo['first_frame_s']:.3f} | | 1 |")
    print(
        f"| demo RSS after {a.minutes:g} min (MB) | {demo['rss_mb_end']:.1f} "
        f"| max {demo['rss_mb_max']:.1f} | |"
    )
    for name, values in results.items():
        if isinstance(values, list):
            what, backend = name.rsplit("_", 1)
            backend = {"pg": "postgres"}.get(backend, backend)
            rec.add(
                backend, f"{what} median", statistics.median(values), "s", f"{len(values)} runs"
            )
            rec.add(backend, f"{what} p95", pct(values, 0.95), "s", f"{len(values)} runs")
            if what == "first_frame":
                rec.add(
                    backend,
                    f"first_frame / {FLOOR}",
                    statistics.median(values) / floor,
                    "x",
                    f"medians; {FLOOR} (bench/textual_floor.py) {floor:.3f} s, run in turn",
                    floor=floor,
                )
                rec.add(
                    backend,
                    f"first_frame / {TABBED}",
                    statistics.median(values) / tabbed,
                    "x",
                    f"medians; {TABBED} (textual_floor.py --tabs) {tabbed:.3f} s, run in turn",
                    floor=tabbed,
                )
    print(f"demo RSS per minute (MB): {demo['curve']}")
    rec.add(
        "sqlite",
        "demo RSS",
        demo["rss_mb_end"],
        "MB",
        f"after {a.minutes:g} min",
        curve=demo["curve"],
    )
    curve = demo["curve"]
    if len(curve) >= 2:
        # Flat: the last minute's RSS over the first minute's (1.00 = no growth).
        rec.add("sqlite", "demo RSS last / first minute", curve[-1] / curve[0], "x", str(curve))


if __name__ == "__main__":
    main()
