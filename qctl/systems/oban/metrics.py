"""Oban's metrics for ``qctl metrics``: the dashboard's per-queue read (unfinished jobs
per state, the oldest available job's age, whether its producers are paused), jobs
finished in the last minute, discarded jobs, and Oban's nodes, as Prometheus metric
families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl.systems.oban import reads

if TYPE_CHECKING:
    from qctl.systems.oban.database import Database


def collect(db: Database) -> Iterator[Metric]:
    jobs = GaugeMetricFamily(
        "qctl_oban_jobs", "Unfinished jobs per queue and state.", labels=["queue", "state"]
    )
    oldest = GaugeMetricFamily(
        "qctl_oban_oldest_available_age_seconds",
        "Age of the oldest available job of a queue (0: none).",
        labels=["queue"],
    )
    paused = GaugeMetricFamily(
        "qctl_oban_queue_paused",
        "1 while every oban-py producer of a queue is paused, else 0 (Elixir's nodes keep"
        " it in memory: not exported).",
        labels=["queue"],
    )
    for q in reads.list_queues(db, live=True):
        for state in reads.LIVE_STATES:
            jobs.add_metric([q.queue, state], getattr(q, state))
        age = q.oldest_available_age
        oldest.add_metric([q.queue], age.total_seconds() if age else 0.0)
        if q.paused is not None:
            paused.add_metric([q.queue], 1.0 if q.paused else 0.0)
    yield jobs
    yield oldest
    yield paused
    finished = GaugeMetricFamily(
        "qctl_oban_finished_last_minute",
        "Jobs finished in the last minute per queue and state (completed, cancelled, discarded).",
        labels=["queue", "state"],
    )
    for row in reads.throughput(db, 60):
        for state in reads.FINISHED_STATES:
            finished.add_metric([row["queue"], state], float(row[state]))
    yield finished
    failed = GaugeMetricFamily(
        "qctl_oban_failed_jobs",
        "Discarded jobs per queue, until Oban's pruner (or qctl vacuum) deletes them.",
        labels=["queue"],
    )
    for row in db.all(reads.queries("reads.sql").discarded):
        failed.add_metric([row["queue"]], float(row["n"]))
    yield failed
    nodes = GaugeMetricFamily(
        "qctl_oban_producers",
        "oban-py producers per queue and node, or Elixir's leading peer (queue empty).",
        labels=["queue", "node", "leader"],
    )
    for n in reads.nodes(db):
        nodes.add_metric([n.queue, n.node, str(n.leader).lower()], 1.0)
    yield nodes
