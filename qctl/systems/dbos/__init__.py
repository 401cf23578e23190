"""DBOS: the system database that DBOS applications (every SDK: Python, TypeScript, Go,
Java) share, on PostgreSQL (schema ``dbos``) or in a SQLite file.

``database`` opens it and checks DBOS's migration version, ``reads`` holds qctl's SQL,
``payload`` decodes stored values without unpickling, ``actions`` writes through
``dbos.DBOSClient``. The command groups are ``cli/``, the dashboard's screens ``tui/``.
Importing this package imports none of them (nor DBOS).
"""

from __future__ import annotations

from qctl.systems import Entry, System

_CLI = "qctl.systems.dbos.cli"

INSTALL_HINT = "pip install '.[dbos]' from the qctl checkout (the dbos extra: dbos>=3.0,<4)"
"""How to get DBOS's client library, as the README says: the extra of this checkout
(``pip install 'qctl[dbos]'`` would install whatever the package index calls qctl)."""

SYSTEM = System(
    name="dbos",
    label="DBOS",
    project="https://github.com/dbos-inc/dbos-transact-py",
    # what DBOS's own CLI reads (dbos/cli/cli.py)
    dsn_env="DBOS_SYSTEM_DATABASE_URL",
    tables=("workflow_status", "dbos_migrations"),
    default_schema="dbos",
    commands={
        "db": Entry(f"{_CLI}.db", "app", "The DBOS system database: status (never migrated)."),
        "workflows": Entry(
            f"{_CLI}.workflows",
            "app",
            "Workflows: list, show, errors, steps, streams; cancel, resume, fork, rewind, delete,"
            " delay.",
            alias="workflow",
        ),
        "queues": Entry(
            f"{_CLI}.queues", "app", "Queues: depths, oldest age, limits.", alias="queue"
        ),
        "schedules": Entry(
            f"{_CLI}.schedules",
            "app",
            "DBOS schedules: list, show, pause, resume, trigger, backfill.",
            alias="schedule",
        ),
        "versions": Entry(
            f"{_CLI}.versions",
            "app",
            "DBOS application versions: list, set-latest.",
        ),
        "vacuum": Entry(f"{_CLI}.vacuum", "app", "Retention: delete old finished workflows."),
        "executors": Entry(
            f"{_CLI}.executors",
            "app",
            "Executors: list (latest activity), recover a dead one's workflows.",
            alias="executor",
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "top": Entry(
            "qctl.cli.top", "top", "The live dashboard (polling): workflows, queues, schedules."
        ),
        "watch": Entry(
            f"{_CLI}.watch", "watch", "Workflows created, started, completed: JSON lines."
        ),
    },
    metrics="qctl.systems.dbos.metrics:collect",
    values="qctl.systems.dbos.values:values",
    verbs="qctl.systems.dbos.actions:VERBS",
    screens="qctl.systems.dbos.tui:DBOS",
    database="qctl.systems.dbos.database:Database",
    demo="qctl.systems.dbos.cli.demo:demo",
    demo_embedded=True,
    instead={
        "jobs": "see `qctl workflows`",
        "dags": "see `qctl workflows`",
        "events": "see `qctl workflows events ID`",
        "subscribers": "see `qctl workflows`",
        "replay": "see `qctl workflows fork`",
        "nuke": "see `qctl vacuum workflows`",
        "maintain": "DBOS applications run their own queues and recovery",
    },
)
