"""``qctl metrics`` on a DBOS database, both backends: workflows per status and per
queue, parsed with prometheus_client's OpenMetrics parser, equal the reads the dashboard
makes."""

from __future__ import annotations

import uuid

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from qctl.systems.dbos import reads
from qctl.systems.dbos.database import Database
from tests.dbos.conftest import Run
from tests.dbos.fixtures import App, delayed


def test_metrics_equal_the_dashboard_reads(run: Run, dbos_app: App) -> None:
    delayed(dbos_app, f"metrics-{uuid.uuid4().hex[:8]}")
    result = run("metrics")
    assert result.exit_code == 0, result.output
    found = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(result.stdout)
        for s in f.samples
    }
    db = Database(dbos_app.url)
    try:
        counts = reads.status_counts(db)
        queues = reads.queue_stats(db)
    finally:
        db.close()
    for status, n in counts.counts.items():
        labels = {"status": status, "estimated": str(status in counts.estimated).lower()}
        assert found[("qctl_dbos_workflows", frozenset(labels.items()))] == n
    work = next(q for q in queues if q["queue_name"] == "work")
    assert work["delayed"] >= 1
    for status in ("enqueued", "pending", "delayed"):
        labels = {"queue": "work", "status": status.upper()}
        assert found[("qctl_dbos_queue_workflows", frozenset(labels.items()))] == work[status]
