"""dispatch's metrics for ``qctl metrics``: the per-queue read (jobs per state, failed
among them, the oldest due pending job's age) and DLQ entries waiting for a replay (a
bounded read), as Prometheus metric families. dispatch cannot pause a queue."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.core.triage import COUNT_CAP
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
    failed = GaugeMetricFamily(
        "qctl_dispatch_failed_jobs",
        "Failed jobs (out of retries) per queue.",
        labels=["queue"],
    )
    for q in reads.queue_stats(db):
        for state in STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_pending_age
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
        failed.add_metric([q.queue], q.failed)
    yield jobs
    yield oldest
    yield failed
    counts, bounded = reads.dlq_waiting(db)
    waiting = GaugeMetricFamily(
        "qctl_dispatch_dlq_waiting",
        "DLQ entries not replayed per queue. dispatch indexes no replayed_at: at most"
        f" {COUNT_CAP:,} entries are read, and bounded=true marks counts that are then lower"
        " bounds.",
        labels=["queue", "bounded"],
    )
    for queue, n in sorted(counts.items()):
        waiting.add_metric([queue, str(bounded).lower()], n)
    yield waiting
