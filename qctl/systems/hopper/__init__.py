"""hopper: the PostgreSQL database of a github.com/parallelworks/hopper deployment (Go),
its schema created by hopper's own migrator (``hoppermigrate``) in the schema of hopper's
``Config.Schema`` (``hopper`` unless configured).

``database`` opens it and gates writes on the version in ``hopper_schema``; ``reads`` and
``actions`` hold qctl's SQL (``queries/*.sql``), each action transcribed from hopper's Go
code (``driver/internal/pgsql``). The command groups are ``qctl.systems.hopper.cli``.
Importing this package imports none of them.
"""

from __future__ import annotations

from qctl.systems import Entry, System

_CLI = "qctl.systems.hopper.cli"

SYSTEM = System(
    name="hopper",
    label="hopper",
    project="https://github.com/parallelworks/hopper",
    tables=("hopper_jobs", "hopper_schema"),
    default_schema="hopper",
    verbs="qctl.systems.hopper.actions:VERBS",
    commands={
        "db": Entry(f"{_CLI}.db", "app", "The hopper database: status, tune (never migrated)."),
        "jobs": Entry(
            f"{_CLI}.jobs",
            "app",
            "hopper jobs, live and finalized: list, show, retry, cancel.",
            alias="job",
        ),
        "queues": Entry(
            f"{_CLI}.queues",
            "app",
            "hopper queues: list, pause, resume, limit.",
            alias="queue",
        ),
        "clients": Entry(
            f"{_CLI}.clients", "app", "hopper client leases and the leader: list.", alias="client"
        ),
        "stats": Entry(f"{_CLI}.stats", "stats", "Per queue depths, throughput, leader."),
        "periodic": Entry(
            f"{_CLI}.periodic", "app", "hopper periodic jobs: the last slot inserted of each."
        ),
        "subscriptions": Entry(
            f"{_CLI}.subscriptions",
            "app",
            "hopper topic subscriptions: list.",
            alias="subscription",
        ),
        "workflows": Entry(
            f"{_CLI}.workflows",
            "app",
            "hopper batches and workflows: list, show with the dependency graph.",
            alias="workflow",
        ),
        "streams": Entry(
            f"{_CLI}.streams", "app", "hopper stream consumers: list, seek.", alias="stream"
        ),
        "vacuum": Entry(
            f"{_CLI}.vacuum",
            "app",
            "Delete what hopper's leader leaves: finished batches, delivered stream events,"
            " history it keeps forever.",
        ),
        "watch": Entry(
            f"{_CLI}.watch",
            "watch",
            "hopper's notifications (inserts, control, done) as JSON lines.",
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "top": Entry(
            "qctl.cli.top", "top", "The live dashboard (polling): queues, jobs, clients, workflows."
        ),
    },
    demo="qctl.systems.hopper.cli.demo:demo",
    metrics="qctl.systems.hopper.metrics:collect",
    values="qctl.systems.hopper.values:values",
    screens="qctl.systems.hopper.tui:HOPPER",
    database="qctl.systems.hopper.database:Database",
    instead={
        "dags": "see `qctl workflows`",
        "dlq": "hopper's dead letters are its discarded jobs: `qctl jobs list --state discarded`",
        "cron": "see `qctl periodic list`",
        "workers": "see `qctl clients list`",
    },
)
