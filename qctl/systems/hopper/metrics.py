"""hopper's metrics for ``qctl metrics``: the dashboard's per-queue read (live jobs per
state, the oldest available job's age, completions in the last minute, whether the queue
is paused), and discarded jobs (a bounded read), as Prometheus metric families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.core.triage import COUNT_CAP
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
    paused = GaugeMetricFamily(
        "qctl_hopper_queue_paused",
        "1 while a queue is paused (its clients claim none of its jobs), else 0.",
        labels=["queue"],
    )
    for q in reads.queue_depths(db):
        for state in STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_available
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
        completed.add_metric([q.queue], q.completed_last_minute)
        paused.add_metric([q.queue], 1.0 if q.paused else 0.0)
    yield jobs
    yield oldest
    yield completed
    yield paused
    counts, bounded = reads.discarded(db)
    failed = GaugeMetricFamily(
        "qctl_hopper_failed_jobs",
        "Discarded jobs (out of attempts, or expired) per queue, in history until hopper's"
        " retention drops them. No index holds a history row's state: at most"
        f" {COUNT_CAP:,}"
        " rows of the failed history are read, and bounded=true marks counts that are"
        " then lower bounds.",
        labels=["queue", "bounded"],
    )
    for queue, n in sorted(counts.items()):
        failed.add_metric([queue, str(bounded).lower()], n)
    yield failed
