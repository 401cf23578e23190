"""azync: job stores operated through ``qctl_store``. Its command groups are ``cli/``
(one module per noun), its operations layer ``ops/``, its dashboard screens ``tui/``, its
demo workload ``demo.py``; ``top`` and ``demo`` are the shell's commands.
"""

from __future__ import annotations

from qctl.systems import Entry, System

SYSTEM = System(
    name="azync",
    label="azync",
    project="https://github.com/kausys/azync",
    tables=("azync_jobs",),
    default_schema=None,
    verbs="qctl.systems.azync.ops.jobs:VERBS",
    commands={
        "db": Entry(
            "qctl.systems.azync.cli.db", "app", "Database schema: migrate, status and tune."
        ),
        "jobs": Entry(
            "qctl.systems.azync.cli.jobs",
            "app",
            "Jobs of every source: list, show, enqueue, retry, pause, delete.",
            alias="job",
        ),
        "dags": Entry(
            "qctl.systems.azync.cli.dags",
            "app",
            "Declared DAG runs: list, show the graph, signal, retry, compensate.",
            alias="dag",
        ),
        "events": Entry(
            "qctl.systems.azync.cli.events",
            "app",
            "The event ledger: list, show, publish, stats, retain.",
            alias="event",
        ),
        "subscribers": Entry(
            "qctl.systems.azync.cli.subscribers",
            "app",
            "Event subscribers: list, register, delete.",
            alias="subscriber",
        ),
        "queues": Entry(
            "qctl.systems.azync.cli.queues",
            "app",
            "Per-kind depths and daily throughput.",
            alias="queue",
        ),
        "workflows": Entry(
            "qctl.systems.azync.cli.workflows",
            "app",
            "Workflow executions: list, show history, signal, cancel, resolve.",
            alias="workflow",
        ),
        "vacuum": Entry(
            "qctl.systems.azync.cli.vacuum",
            "app",
            "Retention: delete old completed, dead, stats, keys, DAGs, workflows.",
        ),
        "maintain": Entry(
            "qctl.systems.azync.cli.maintain",
            "maintain",
            "Promote due jobs, reap expired leases, advance DAGs (leader-elected).",
        ),
        "replay": Entry(
            "qctl.systems.azync.cli.replay", "replay", "Re-deliver ledger events to subscribers."
        ),
        "nuke": Entry(
            "qctl.systems.azync.cli.replay", "nuke", "Delete every job, stat and key of a source."
        ),
        "watch": Entry(
            "qctl.systems.azync.cli.watch",
            "watch",
            "Print change hints as JSON lines until Ctrl-C.",
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "top": Entry(
            "qctl.cli.top", "top", "The live dashboard: queues, jobs, DAGs, events, workflows."
        ),
    },
    metrics="qctl.systems.azync.metrics:collect",
    values="qctl.systems.azync.values:values",
    screens="qctl.systems.azync.tui:AZYNC",
    preloads={"overview-pane": "qctl.systems.azync.tui.overview_data:fetch_overview"},
    demo="qctl.systems.azync.cli.demo:demo",
    demo_embedded=True,
    instead={
        "schedules": "see `qctl jobs list --state scheduled`",
        "versions": "see `qctl workflows list`",
    },
    database="qctl.systems.azync.cli.database:Store",
    takes_detection=True,
)
