"""Oban: the PostgreSQL database of an Oban deployment, in either of its flavours over
one schema: oban-py's (the ``oban`` package on PyPI, its tables made by
``oban.schema.install``) and Elixir Oban's (``Oban.Migrations``, v11 and later).

``database`` opens it, names the flavour and gates writes on the versions qctl knows;
``reads`` and ``actions`` hold qctl's SQL (``queries/*.sql``), each statement naming the
upstream file it follows. The command groups are ``qctl.systems.oban.cli``, the dashboard
``qctl.systems.oban.tui``. Importing this package imports none of them.
"""

from __future__ import annotations

from qctl.systems import Entry, System

_CLI = "qctl.systems.oban.cli"

SYSTEM = System(
    name="oban",
    label="Oban",
    project="https://github.com/oban-bg/oban",
    tables=("oban_jobs",),
    # Oban's prefix: its tables live in "public" unless the deployment names another.
    default_schema="public",
    verbs="qctl.systems.oban.actions:VERBS",
    commands={
        "db": Entry(
            f"{_CLI}.db", "app", "The Oban database: flavour and version, tune (never migrated)."
        ),
        "jobs": Entry(
            f"{_CLI}.jobs",
            "app",
            "Oban jobs: list, show, errors, retry, cancel, delete.",
            alias="job",
        ),
        "queues": Entry(
            f"{_CLI}.queues",
            "app",
            "Oban queues: jobs per state, pause, resume, scale (Oban's signal).",
            alias="queue",
        ),
        "nodes": Entry(
            f"{_CLI}.queues", "nodes_app", "Oban nodes: producers or peers, and the leader."
        ),
        "vacuum": Entry(
            f"{_CLI}.vacuum", "app", "Delete what Oban's pruner deletes: finished jobs older than."
        ),
        "watch": Entry(
            f"{_CLI}.watch", "watch", "Oban's notifications (insert, signal, leader) as JSON lines."
        ),
        "metrics": Entry(
            "qctl.cli.metrics",
            "metrics",
            "Figures as OpenMetrics: once, to a textfile or over HTTP.",
        ),
        "top": Entry("qctl.cli.top", "top", "The live dashboard: queues, jobs, nodes."),
    },
    demo="qctl.systems.oban.cli.demo:demo",
    metrics="qctl.systems.oban.metrics:collect",
    screens="qctl.systems.oban.tui:OBAN",
    database="qctl.systems.oban.database:Database",
    values="qctl.systems.oban.values:values",
    instead={},
)
