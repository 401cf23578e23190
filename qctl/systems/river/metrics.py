"""River's metrics for ``qctl metrics``: the dashboard's per-queue read (jobs not
finalized per state, the oldest available job's age, whether the queue is paused), the
jobs completed and discarded in the last minute and every discarded job (ranges of
River's index on state and finalized_at), and the leader's lease, as Prometheus metric
families."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.core.triage import COUNT_CAP
from qctl.systems.river import reads

if TYPE_CHECKING:
    from qctl.systems.river.database import Database

STATES = ("available", "running", "scheduled", "retryable", "pending")


def collect(db: Database) -> Iterator[Metric]:
    jobs = GaugeMetricFamily(
        "qctl_river_jobs", "Jobs not finalized per queue and state.", labels=["queue", "state"]
    )
    oldest = GaugeMetricFamily(
        "qctl_river_oldest_available_age_seconds",
        "How long the oldest available job of a queue has waited since its scheduled_at (0: none).",
        labels=["queue"],
    )
    paused = GaugeMetricFamily(
        "qctl_river_queue_paused",
        "1 while a queue is paused (River's producers fetch none of its jobs), else 0.",
        labels=["queue"],
    )
    for q in reads.list_queues(db, live=True):
        for state in STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_available_age
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
        paused.add_metric([q.queue], 1.0 if q.paused else 0.0)
    yield jobs
    yield oldest
    yield paused
    completed = GaugeMetricFamily(
        "qctl_river_completed_last_minute", "Jobs completed in the last minute.", labels=["queue"]
    )
    failed_lately = GaugeMetricFamily(
        "qctl_river_discarded_last_minute",
        "Jobs discarded (out of attempts) in the last minute.",
        labels=["queue"],
    )
    now = db.now()
    for f in reads.finalized_since(db, now - timedelta(minutes=1)):
        completed.add_metric([f.queue], f.completed)
        failed_lately.add_metric([f.queue], f.discarded)
    yield completed
    yield failed_lately
    counts, bounded = reads.discarded(db)
    failed = GaugeMetricFamily(
        "qctl_river_failed_jobs",
        "Discarded jobs (out of attempts) per queue, until River's cleaner deletes them"
        f" (7 days unless configured). At most the newest {COUNT_CAP:,} are read, and"
        " bounded=true marks counts that are then lower bounds.",
        labels=["queue", "bounded"],
    )
    for queue, n in sorted(counts.items()):
        failed.add_metric([queue, str(bounded).lower()], n)
    yield failed
    leader = GaugeMetricFamily(
        "qctl_river_leader_lease_seconds",
        "Seconds until the elected leader's lease expires unless it renews it (negative:"
        " expired; no sample: no leader elected).",
        labels=["leader_id"],
    )
    for row in reads.leaders(db):
        if isinstance(row.expires_at, datetime):  # not an instant out of Python's range
            leader.add_metric([row.leader_id], (row.expires_at - now).total_seconds())
    yield leader
