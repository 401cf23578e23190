"""dispatch's metrics for ``qctl metrics``: the dashboard's per-queue read (jobs per
state, the oldest due pending job's age), as Prometheus metric families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.systems.dispatch import reads

if TYPE_CHECKING:
    from qctl.systems.dispatch.database import Database

STATES = ("pending", "retrying", "running", "completed", "failed", "cancelled")


def collect(db: Database) -> Iterator[Metric]:
    jobs = GaugeMetricFamily(
        "qctl_dispatch_jobs", "Jobs per queue and state.", labels=["queue", "state"]
    )
    oldest = GaugeMetricFamily(
        "qctl_dispatch_oldest_pending_age_seconds",
        "How long the oldest due pending or retrying job of a queue has waited (0: none).",
        labels=["queue"],
    )
    for q in reads.queue_stats(db):
        for state in STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_pending_age
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
    yield jobs
    yield oldest
