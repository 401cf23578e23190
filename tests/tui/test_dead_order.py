"""Dead jobs read alike in both front-ends: newest failure first, and "when" is when they
died (before: the dashboard listed them oldest first and showed their enqueue time; both
front-ends ordered them by enqueue time)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qctl.systems.azync.cli.filters import reverse
from qctl.systems.azync.tui import jobs as tui_jobs
from qctl.systems.azync.tui.jobs import job_when, parse_search
from qctl.tui import fmt
from qctl_store.types import Job, JobState, Source
from tests.cli.conftest import dead_out_of_order


def test_dead_jobs_newest_first_in_both_front_ends() -> None:
    assert parse_search(None, JobState.DEAD, "").reverse is True
    assert reverse(JobState.DEAD, None) is True
    assert parse_search(None, JobState.PENDING, "").reverse is reverse(JobState.PENDING, None)


def test_a_dead_jobs_when_is_its_failure_time() -> None:
    now = datetime.now(UTC)
    job = Job(
        id=uuid.uuid4(),
        source=Source.QUEUE,
        kind="k",
        state=JobState.DEAD,
        enqueued_at=now - timedelta(days=3),
        failed_at=now - timedelta(minutes=5),
    )
    assert job_when(job, now) == fmt.ago(job.failed_at, now) != fmt.ago(job.enqueued_at, now)


def test_the_dashboard_pages_dead_jobs_in_failure_order(
    store: Any, module_db: tuple[str, str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    kind = f"k_{uuid.uuid4().hex[:10]}"
    expected = dead_out_of_order(store, module_db, kind)
    monkeypatch.setattr(tui_jobs, "PAGE", 3)
    pane = tui_jobs.JobsPane()
    pane.source, pane.state, pane.filter_text = Source.QUEUE, JobState.DEAD, kind
    walked: list[uuid.UUID] = []
    while True:
        page = pane.fetch(store)
        walked.extend(j.id for j in page.jobs)
        if page.next_cursor is None:
            break
        pane.cursors.append(page.next_cursor)
    assert walked == expected


def test_the_jobs_bar_says_what_an_unindexed_dead_page_reads() -> None:
    assert tui_jobs.scans_warning(JobState.DEAD)[1][0] == ": reads every dead job, sorted"
    assert tui_jobs.scans_warning(JobState.PAUSED)[1][0] == ": reads the whole job table"
