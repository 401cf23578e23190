"""dispatch: the PostgreSQL database of a github.com/xraph/dispatch deployment (Go), its
tables created by dispatch's own migrator (grove, group ``dispatch``).

``database`` opens it and gates on the applied migration versions, ``reads`` and
``actions`` hold qctl's SQL (``queries/*.sql``), each action transcribed from dispatch's
Go code. The command groups are ``qctl.systems.dispatch.cli``. Importing this package
imports none of them.
"""

from __future__ import annotations

from qctl.systems import Entry, System

_CLI = "qctl.systems.dispatch.cli"

SYSTEM = System(
    name="dispatch",
    label="dispatch",
    project="https://github.com/xraph/dispatch",
    tables=("dispatch_jobs", "grove_migrations"),
    # dispatch names its tables unqualified: they live in the connection's search_path.
    default_schema=None,
    verbs="qctl.systems.dispatch.actions:VERBS",
    commands={
        "db": Entry(f"{_CLI}.db", "app", "The dispatch database: status (never migrated)."),
        "jobs": Entry(
            f"{_CLI}.jobs", "app", "dispatch jobs: list, show, cancel, retry.", alias="job"
        ),
        "queues": Entry(
            f"{_CLI}.queues", "app", "Per queue: jobs by state, oldest pending age.", alias="queue"
        ),
        "dlq": Entry(
            f"{_CLI}.dlq",
            "app",
            "dispatch's dead-letter queue: list, show, replay, replay-all, delete, purge.",
        ),
        "cron": Entry(
            f"{_CLI}.cron", "app", "dispatch cron entries: list, enable, disable, trigger, delete."
        ),
        "workers": Entry(f"{_CLI}.workers", "app", "dispatch workers: list.", alias="worker"),
        "workflows": Entry(
            f"{_CLI}.workflows",
            "app",
            "dispatch workflow runs: list, show with checkpoints (read-only).",
            alias="workflow",
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "stats": Entry(f"{_CLI}.stats", "stats", "Jobs and workflow runs per state, DLQ entries."),
        "vacuum": Entry(
            f"{_CLI}.vacuum",
            "app",
            "Retention: delete old finished jobs, acked events, replayed DLQ entries.",
        ),
        "watch": Entry(
            f"{_CLI}.watch", "watch", "New jobs and DLQ entries as JSON lines (polling)."
        ),
        "top": Entry(
            "qctl.cli.top", "top", "The live dashboard (polling): queues, jobs, DLQ, cron, workers."
        ),
    },
    metrics="qctl.systems.dispatch.metrics:collect",
    values="qctl.systems.dispatch.values:values",
    screens="qctl.systems.dispatch.tui:DISPATCH",
    database="qctl.systems.dispatch.database:Database",
    demo="qctl.systems.dispatch.cli.demo:demo",
    instead={},
)
