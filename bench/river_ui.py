"""River UI beside qctl on one River database: River UI's API (riverqueue.com/riverui
v0.22.0, its own server) answering its jobs-by-state page and its queue list, and qctl's
same reads in-process, in the same run on the same data.

    .venv/bin/python bench/river_ui.py --riverui PATH --db NAME [--pg DSN] [--json PATH]

``PATH`` is River UI's server built from its Go module (``go build
riverqueue.com/riverui/cmd/riverui`` at v0.22.0, outside this repository); ``NAME`` a
database ``bench/river_scale.py --db NAME`` loaded (schema ``river``). Figures: median of
7 after a warm-up, milliseconds; River UI's include its HTTP round trip on localhost and
JSON encoding, qctl's its row decoding. The ratio is River UI's time over qctl's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from common import Recorder, base_args, dsn_for, median, timed  # noqa: E402

from qctl.systems.river import reads  # noqa: E402
from qctl.systems.river.database import Database  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    ap = base_args(__doc__ or "")
    ap.add_argument("--riverui", required=True, help="River UI's server binary")
    ap.add_argument("--db", required=True, help="a database river_scale.py --db loaded")
    args = ap.parse_args()
    dsn = dsn_for(args.pg, args.db)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": dsn, "PORT": str(port), "RIVER_HOST": "127.0.0.1",
           "RIVER_LOG_LEVEL": "error"}  # fmt: skip
    server = subprocess.Popen(
        [args.riverui, "-schema", "river"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/features", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        rec = Recorder(args.json, "river-ui", "river")
        db = Database(dsn, "river")

        def get(path: str) -> Callable[[], Any]:
            return lambda: urllib.request.urlopen(base + path, timeout=60).read()

        pairs: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            (f"jobs by state {state}, a page of 20",
             get(f"/api/jobs?state={state}&limit=20"),
             lambda s=state: reads.list_jobs(db, [s], limit=20))
            for state in ("available", "running", "completed", "discarded")
        ]  # fmt: skip
        pairs += [
            ("queue list (River UI: its queues with counts; qctl: the Queues tab)",
             get("/api/queues?limit=100"), lambda: reads.list_queues(db, live=True)),
        ]  # fmt: skip
        for name, ui, qctl in pairs:
            ui()
            qctl()
            ui_ms, qctl_ms = median(timed(ui, 7)), median(timed(qctl, 7))
            ratio = ui_ms / qctl_ms if qctl_ms else float("nan")
            rec.add("postgres", f"River UI: {name}", ui_ms, "ms", f"{ratio:.1f}x qctl's")
            rec.add("postgres", f"qctl: {name}", qctl_ms, "ms", "")
        db.close()
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
