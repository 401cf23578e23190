"""Fixtures and helpers of the operations-layer tests: the module's store on both
backends (from tests/conftest.py), and the question "would a Go worker lease this row"."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from qctl_store.types import JobState
from tests.azync_go import GO_DEQUEUE_PREDICATE
from tests.conftest import raw_pg


def go_would_lease(store: Any, schema: str, job_id: uuid.UUID) -> bool:
    """Whether azync's Go dequeue of the job's (source, kind) would pick ``job_id``."""
    job = store.find_job(job_id)
    if store.backend == "postgres":
        with raw_pg(schema) as conn:
            row = conn.execute(
                f"SELECT 1 FROM azync_jobs WHERE id = %(id)s AND {GO_DEQUEUE_PREDICATE}",
                {"id": job_id, "source": job.source.value, "kind": job.kind},
            ).fetchone()
        return row is not None
    # SQLite has no Go driver: the same predicate over the row.
    return (
        job.state == JobState.PENDING and job.run_at is not None and job.run_at <= datetime.now(UTC)
    )
