"""DBOS's metrics for ``qctl metrics``: the dashboard's reads (workflows per status,
failed ones among them, per queue in-flight counts and oldest enqueued age), as
Prometheus metric families. DBOS cannot pause a queue."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.systems.dbos import reads

if TYPE_CHECKING:
    from qctl.systems.dbos.database import Database


def collect(db: Database) -> Iterator[Metric]:
    counts = reads.status_counts(db)
    workflows = GaugeMetricFamily(
        "qctl_dbos_workflows",
        "Workflows per status (estimated: SUCCESS from planner statistics on PostgreSQL).",
        labels=["status", "estimated"],
    )
    failed = GaugeMetricFamily(
        "qctl_dbos_failed_workflows",
        "Workflows that ended without a result (ERROR, MAX_RECOVERY_ATTEMPTS_EXCEEDED),"
        " exact from DBOS's partial index.",
        labels=["status"],
    )
    for status, n in sorted(counts.counts.items()):
        workflows.add_metric([status, str(status in counts.estimated).lower()], n)
    for status in reads.FAILED:
        failed.add_metric([status], counts.counts.get(status, 0))
    yield workflows
    yield failed
    queued = GaugeMetricFamily(
        "qctl_dbos_queue_workflows",
        "In-flight workflows per queue and status (ENQUEUED, PENDING, DELAYED).",
        labels=["queue", "status"],
    )
    oldest = GaugeMetricFamily(
        "qctl_dbos_queue_oldest_enqueued_age_seconds",
        "Age of the oldest enqueued workflow per queue (0: none enqueued).",
        labels=["queue"],
    )
    now_ms = time.time() * 1000
    for q in reads.queue_stats(db):
        for status, n in (
            ("ENQUEUED", q["enqueued"]),
            ("PENDING", q["pending"]),
            ("DELAYED", q["delayed"]),
        ):
            queued.add_metric([q["queue_name"], status], n)
        at = q["oldest_enqueued_at"]
        oldest.add_metric([q["queue_name"]], max(0.0, (now_ms - at) / 1000) if at else 0.0)
    yield queued
    yield oldest
