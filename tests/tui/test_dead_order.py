"""Dead jobs read alike in both front-ends: newest first, and "when" is when they died
(before: the dashboard listed them oldest first and showed their enqueue time)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from qctl.systems.azync.cli.filters import reverse
from qctl.systems.azync.tui.jobs import job_when, parse_search
from qctl.tui import fmt
from qctl_store.types import Job, JobState, Source


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
