"""The command tree's table of contents: which module holds each top-level command and
its one-line help. The root group builds a command only when it runs (building Typer
commands from signatures is the slow part of start-up), so ``qctl --help`` reads this
table instead of importing every group."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    module: str
    attr: str
    """``app`` for a command group (a Typer app), else the command function's name."""
    help: str
    alias: str = ""
    """The hidden singular name of a group (``qctl dag ...``)."""


COMMANDS: dict[str, Entry] = {
    "db": Entry("qctl.systems.azync.cli.db", "app", "Database schema: migrate, status and tune."),
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
        "qctl.systems.azync.cli.watch", "watch", "Print change hints as JSON lines until Ctrl-C."
    ),
    "top": Entry("qctl.cli.top", "top", "The live dashboard."),
    "demo": Entry("qctl.cli.demo", "demo", "A live demo workload, watched in qctl top."),
}

ALIASES: dict[str, str] = {e.alias: name for name, e in COMMANDS.items() if e.alias}


SYSTEMLESS_COMMANDS: dict[str, Entry] = {
    "context": Entry(
        "qctl.cli.contexts", "app", "Named contexts: list, current, use, add, delete."
    ),
}
"""Commands about qctl itself rather than a database: the same for every system, and
run without detecting one."""
