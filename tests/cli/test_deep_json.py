"""A job whose payload and meta are valid JSON nested 1,500 levels deep (a Go producer
writes such a document without trouble; Python's json parser recurses and gives up near
1,000): the store reads it exactly, and every view of it works, JSON nested past
``JSON_DEPTH`` levels rendered as cut (before: RecursionError, exit 1, in each)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from qctl.systems.azync.tui import JobDetailScreen, JobsPane
from qctl.tui.app import QctlTop
from qctl_kit.decode import JSON_DEPTH, cut_text
from qctl_store.types import DequeueParams, EnqueueParams, JobState, Source
from tests.cli.conftest import Run
from tests.conftest import PG_DSN
from tests.tui.helpers import SIZE, row_keys, screen_text, until

DEPTH = 1500


def depth(value: Any) -> int:
    """How deep ``value`` nests (iteratively)."""
    n = 0
    while isinstance(value, list | dict):
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        n += 1
    return n


@pytest.fixture(scope="module")
def deep_job(module_db: tuple[str, str, Path], st: Any) -> tuple[str, uuid.UUID]:
    """A dead job of its own kind whose payload and meta nest ``DEPTH`` levels, written
    in SQL as another producer would."""
    backend, schema, path = module_db
    kind = f"deep_{uuid.uuid4().hex[:8]}"
    p = EnqueueParams(kind=kind, max_attempts=1)
    st.enqueue(p)
    [job] = st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=1))
    st.dead(job.id, job.lease_token, "boom")
    payload = "[" * DEPTH + "1" + "]" * DEPTH
    meta = '{"m":' + '{"a":' * (DEPTH - 1) + '"x"' + "}" * DEPTH
    if backend == "postgres":
        with psycopg.connect(PG_DSN) as conn:
            conn.execute(
                f'UPDATE "{schema}".azync_jobs SET payload = %s::jsonb, meta = %s::jsonb'
                " WHERE id = %s",
                (payload, meta, p.id),
            )
    else:
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE azync_jobs SET payload = ?, meta = ? WHERE id = ?",
                (payload, meta, str(p.id)),
            )
    return kind, p.id


def test_the_store_reads_it_exactly(st: Any, deep_job: tuple[str, uuid.UUID]) -> None:
    job = st.get_job(Source.QUEUE, deep_job[1])
    assert (depth(job.payload), depth(job.meta)) == (DEPTH, DEPTH)


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl", "csv"])
def test_jobs_list(run: Run, deep_job: tuple[str, uuid.UUID], fmt: str) -> None:
    result = run("jobs", "list", "--kind", deep_job[0], "-o", fmt)
    assert result.exit_code == 0, result.stderr
    assert str(deep_job[1])[:8] in result.stdout


def test_jobs_show_cuts_what_is_too_deep(run: Run, deep_job: tuple[str, uuid.UUID]) -> None:
    result = run("jobs", "show", str(deep_job[1]), "--payload", "-o", "json")
    assert result.exit_code == 0, result.stderr
    job = json.loads(result.stdout)["job"]
    payload = job["payload"]
    # The document's own levels (the envelope's among them) stop at JSON_DEPTH.
    assert JSON_DEPTH - 3 <= depth(payload) < JSON_DEPTH
    assert JSON_DEPTH - 3 <= depth(job["meta"]) < JSON_DEPTH
    inner = payload
    while isinstance(inner, list):
        inner = inner[0]
    assert inner == cut_text()
    table = run("jobs", "show", str(deep_job[1]), "--payload")
    assert table.exit_code == 0, table.stderr
    assert '{"m":{"a":{"a":' in table.stdout


@pytest.mark.parametrize(
    "verb",
    [
        ["jobs", "retry", "--all-dead", "--kind", "{kind}", "--dry-run"],
        ["vacuum", "all", "--older-than", "30d", "--dead", "0s", "--dry-run"],
    ],
    ids=["retry-dry-run", "vacuum-all-dry-run"],
)
def test_dry_runs(run: Run, deep_job: tuple[str, uuid.UUID], verb: list[str]) -> None:
    result = run(*[a.replace("{kind}", deep_job[0]) for a in verb])
    assert result.exit_code == 0, result.stderr
    assert "RecursionError" not in result.stderr


def test_the_dashboard_lists_and_opens_it(st: Any, deep_job: tuple[str, uuid.UUID]) -> None:
    kind, job_id = deep_job
    app = QctlTop(st, location="test", live=False)

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            app.screen.query_one(JobsPane).open_with(Source.QUEUE, kind, JobState.DEAD)
            await until(pilot, lambda: row_keys(app, "#jobs-table") == [str(job_id)])
            app.push_screen(JobDetailScreen(job_id))
            await until(pilot, lambda: 'm={"a": {"a": {"a":' in screen_text(app))
            await pilot.press("v")  # the payload
            await until(pilot, lambda: "[[[[[[" in screen_text(app))

    asyncio.run(drive())
    assert app.return_code is None


def test_a_payload_filter_passes_over_it(run: Run, deep_job: tuple[str, uuid.UUID]) -> None:
    result = run("jobs", "list", "--kind", deep_job[0], "--payload-contains", '{"x": 1}')
    assert result.exit_code == 0, result.stderr
    assert str(deep_job[1])[:8] not in result.stdout
