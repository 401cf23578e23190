"""azync's metrics for ``qctl metrics``: the overview's reads (live depths per source,
kind and state, with dead and paused jobs also as the failure and paused gauges every
system has, the oldest pending job's age, today's throughput counters, the event
ledger's figures), as Prometheus metric families."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from qctl_store.types import Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

STATES = (
    *("pending", "scheduled", "active", "waiting", "blocked"),
    *("uncertain", "dead", "paused", "succeeded"),
)
COUNTERS = ("enqueued", "processed", "failed", "reaped")


def collect(store: ConsoleStore) -> Iterator[Metric]:
    jobs = GaugeMetricFamily(
        "qctl_azync_jobs",
        "Jobs per source, kind and state (estimated: succeeded and paused"
        " from planner statistics on a huge PostgreSQL table).",
        labels=["source", "kind", "state", "estimated"],
    )
    oldest = GaugeMetricFamily(
        "qctl_azync_oldest_pending_age_seconds",
        "Age of the oldest pending job per source and kind (0: none pending).",
        labels=["source", "kind"],
    )
    failed = GaugeMetricFamily(
        "qctl_azync_failed_jobs",
        "Dead jobs (out of attempts) per source and kind, exact from azync's dead index.",
        labels=["source", "kind"],
    )
    paused = GaugeMetricFamily(
        "qctl_azync_paused_jobs",
        "Paused jobs per source and kind (azync pauses jobs, not queues; estimated from"
        " planner statistics on a huge PostgreSQL table).",
        labels=["source", "kind", "estimated"],
    )
    for source, (by_kind, estimated) in store.sources_depths(list(Source)).items():
        for kind, d in sorted(by_kind.items()):
            for state in STATES:
                jobs.add_metric(
                    [source.value, kind, state, str(estimated).lower()], getattr(d, state)
                )
            oldest.add_metric(
                [source.value, kind],
                d.oldest_pending_age.total_seconds() if d.pending else 0.0,
            )
            failed.add_metric([source.value, kind], d.dead)
            paused.add_metric([source.value, kind, str(estimated).lower()], d.paused)
    yield jobs
    yield oldest
    yield failed
    yield paused
    today = GaugeMetricFamily(
        "qctl_azync_today_jobs",
        "Today's throughput counters per source (UTC day): enqueued, processed, failed, reaped.",
        labels=["source", "counter"],
    )
    for source in Source:
        days = store.all_daily(source)
        for counter in COUNTERS:
            today.add_metric([source.value, counter], getattr(days[-1], counter) if days else 0)
    yield today
    ops = store.ops_stats()
    for name, value, help_ in (
        (
            "undispatched_events",
            ops.undispatched,
            "Ledger events with no delivery row (no subscriber when published, or "
            "deliveries vacuumed).",
        ),
        ("events_24h", ops.total_24h, "Ledger events of the last 24 hours."),
        ("subscribers", ops.subscribers, "Registered event subscribers."),
    ):
        yield GaugeMetricFamily(f"qctl_azync_{name}", help_, value=value)
