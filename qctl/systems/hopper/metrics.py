"""hopper's metrics for ``qctl metrics``: the dashboard's per-queue read (live jobs per
state, the oldest available job's age, completions in the last minute), as Prometheus
metric families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.systems.hopper import reads

if TYPE_CHECKING:
    from qctl.systems.hopper.database import Database

STATES = ("pending", "available", "scheduled", "retryable", "running")


def collect(db: Database) -> Iterator[Metric]:
    jobs = GaugeMetricFamily(
        "qctl_hopper_jobs", "Live jobs per queue and state.", labels=["queue", "state"]
    )
    oldest = GaugeMetricFamily(
        "qctl_hopper_oldest_available_age_seconds",
        "Age of the oldest available job of a queue (0: none).",
        labels=["queue"],
    )
    completed = GaugeMetricFamily(
        "qctl_hopper_completed_last_minute", "Jobs completed in the last minute.", labels=["queue"]
    )
    for q in reads.queue_depths(db):
        for state in STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_available
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
        completed.add_metric([q.queue], q.completed_last_minute)
    yield jobs
    yield oldest
    yield completed
