"""``qctl metrics`` on azync, both backends: the one-shot OpenMetrics text, the
textfile and the HTTP endpoint, parsed with prometheus_client's parsers, carry the
depths and counters the store reads; bad options are one line and exit 2."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from prometheus_client.parser import text_string_to_metric_families as text_parse

from qctl_store.types import Source
from tests.cli.conftest import Run, enqueue, make_dead


def samples(families: Any) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {(s.name, frozenset(s.labels.items())): s.value for f in families for s in f.samples}


def job_count(found: dict[Any, float], kind: str, state: str) -> float:
    labels = {"source": "queue", "kind": kind, "state": state, "estimated": "false"}
    return found[("qctl_azync_jobs", frozenset(labels.items()))]


def test_one_shot_openmetrics_equals_the_store(run: Run, st: Any, kind: str) -> None:
    held = enqueue(st, kind, 4)[0]
    st.pause_job(Source.QUEUE, held)
    make_dead(st, kind, 2)
    result = run("metrics")
    assert result.exit_code == 0, result.stderr
    found = samples(om_parse(result.stdout))
    depths = st.sources_depths([Source.QUEUE], True)[Source.QUEUE][0][kind]
    assert job_count(found, kind, "pending") == depths.pending == 3
    assert job_count(found, kind, "dead") == depths.dead == 2
    # the failure and paused gauges every system has
    mine = frozenset({"source": "queue", "kind": kind}.items())
    assert found[("qctl_azync_failed_jobs", mine)] == 2
    paused = frozenset({"source": "queue", "kind": kind, "estimated": "false"}.items())
    assert found[("qctl_azync_paused_jobs", paused)] == depths.paused == 1
    age = found[
        (
            "qctl_azync_oldest_pending_age_seconds",
            frozenset({"source": "queue", "kind": kind}.items()),
        )
    ]
    assert 0 < age < 600
    today = st.all_daily(Source.QUEUE)[-1]
    enqueued = (
        "qctl_azync_today_jobs",
        frozenset({"source": "queue", "counter": "enqueued"}.items()),
    )
    assert found[enqueued] == today.enqueued >= 5


def test_textfile_is_written_whole(run: Run, st: Any, kind: str, tmp_path: Path) -> None:
    enqueue(st, kind, 2)
    target = tmp_path / "qctl.prom"
    result = run("metrics", "--textfile", str(target))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert job_count(samples(text_parse(target.read_text())), kind, "pending") == 2
    assert [p.name for p in tmp_path.iterdir()] == ["qctl.prom"]  # no temporary left


def test_http_endpoint_serves_the_same(db_args: list[str], st: Any, kind: str) -> None:
    enqueue(st, kind, 4)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qctl", *db_args, "metrics", "--listen", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
    )
    try:
        body = ""
        for _ in range(100):
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/metrics",
                    headers={"Accept": "application/openmetrics-text; version=1.0.0"},
                )
                with urllib.request.urlopen(request, timeout=5) as response:
                    body = response.read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert job_count(samples(om_parse(body)), kind, "pending") == 4
        enqueue(st, kind, 1)  # each scrape reads anew
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            assert job_count(samples(text_parse(response.read().decode())), kind, "pending") == 5
    finally:
        proc.terminate()
        proc.wait(10)


def test_bad_options_are_one_line(run: Run, tmp_path: Path) -> None:
    for args in (["--listen", "nope"], ["--listen", ":1", "--textfile", str(tmp_path / "f")]):
        result = run("metrics", *args)
        assert result.exit_code == 2
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
