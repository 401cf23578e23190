"""River: the database of a github.com/riverqueue/river deployment (Go), PostgreSQL
(riverpgxv5) or a SQLite file (riversqlite), its tables created by River's own migrator
(rivermigrate, line ``main``).

``database`` opens it and gates on the applied migrations, ``reads`` and ``actions``
hold qctl's SQL (``queries/*.sql``), each write with the effect of River's own query
named beside it. The command groups are ``qctl.systems.river.cli``, the dashboard
``qctl.systems.river.tui``. Importing this package imports none of them.
"""

from __future__ import annotations

from qctl.systems import Entry, System

_CLI = "qctl.systems.river.cli"

SYSTEM = System(
    name="river",
    label="River",
    project="https://github.com/riverqueue/river",
    tables=("river_job", "river_migration"),
    # River names its tables unqualified (its client's Schema empty): they live in the
    # connection's search_path.
    default_schema=None,
    verbs="qctl.systems.river.actions:VERBS",
    commands={
        "db": Entry(f"{_CLI}.db", "app", "The River database: status, tune (never migrated)."),
        "jobs": Entry(
            f"{_CLI}.jobs",
            "app",
            "River jobs: list, show, errors, retry, cancel, delete.",
            alias="job",
        ),
        "queues": Entry(
            f"{_CLI}.queues",
            "app",
            "River queues: list, show, throughput, pause, resume.",
            alias="queue",
        ),
        "clients": Entry(
            f"{_CLI}.clients",
            "app",
            "River's clients at work and its leader: list, leader.",
            alias="client",
        ),
        "vacuum": Entry(
            f"{_CLI}.vacuum",
            "app",
            "Delete what River's cleaner deletes (finalized jobs), with your age, now.",
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "watch": Entry(
            f"{_CLI}.watch",
            "watch",
            "River's notifications (inserts, control, leadership) as JSON lines.",
        ),
        "top": Entry(
            "qctl.cli.top", "top", "The live dashboard (live + polling): queues, jobs, clients."
        ),
    },
    demo="qctl.systems.river.cli.demo:demo",
    metrics="qctl.systems.river.metrics:collect",
    values="qctl.systems.river.values:values",
    screens="qctl.systems.river.tui:RIVER",
    database="qctl.systems.river.database:Database",
    instead={"workers": "see `qctl clients list`"},
)
