"""``qctl demo`` on azync: a realistic workload (``qctl.systems.azync.demo``) on the
embedded demo database or on ``--dsn``, watched in ``qctl top`` (or headless)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from qctl.cli.common import confirm, demo_connection, demo_schema, say_demo_reading
from qctl.core.paths import demo_database_path

if TYPE_CHECKING:
    from qctl.cli.common import DemoSchema
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "azync_demo"
"""Where the demo creates azync's tables on PostgreSQL when --schema names none."""
OWNED = "created by qctl demo --system azync"
"""The comment the demo puts on a schema it creates: the one schema it may drop
(--reset), migrate, maintain and vacuum without asking."""


def demo(
    c: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    seed: int | None,
    yes: bool,
) -> None:
    """Run the workload on the embedded demo database, or on ``c``'s: on PostgreSQL in
    --schema (default ``azync_demo``), created and migrated there when absent; a schema
    the demo did not create is confirmed first when it holds anything, and the demo then
    maintains and vacuums nothing there (nor on a SQLite file that already holds jobs).
    ``reset`` deletes the embedded demo database, or drops the schema the demo created."""
    from qctl.systems.azync.cli import database
    from qctl.systems.azync.demo import Demo
    from qctl_store import Config, open_store
    from qctl_store.types import Source

    maintain = True
    dsn = c.dsn or ""
    if c.is_postgres:
        c.schema = c.schema or DEMO_SCHEMA
        place = _schema(c, reset, yes)
        store = database.open_store(c, pooled=True, create=True, check=False)
        if place.owned or not place.holds:
            store.migrate()
        else:
            store.check_schema()  # never migrate a schema the demo did not create
        # Its maintenance reaps and its vacuums delete across kinds: they act only where
        # every row is the demo's.
        maintain = place.owned
        location = c.describe()
    elif c.dsn:
        store = database.open_store(c, pooled=True, create=True, check=False)
        store.migrate()
        location = c.describe()
        if any(store.list_kinds(source) for source in Source):
            confirm(
                f"{location} already holds jobs: add the demo's workload to it (its "
                "maintenance and vacuums stay off there)?",
                yes,
            )
            maintain = False
    else:
        path = demo_database_path()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # as the embedded default
        if reset:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        store = open_store(f"sqlite:///{path}", Config())
        c.opened.append(store)
        store.migrate()
        location = f"{path} (demo)"
        dsn = f"sqlite:///{path}"
    workload = Demo(store, speed=speed, duration=seconds, seed=seed, maintain=maintain)
    where = c.demo_where(dsn, "azync")
    if no_tui:
        sys.stderr.write(f"qctl demo: running on {location} for {seconds:g}s\n")
        workload.start()
        try:
            workload.wait()
        except KeyboardInterrupt:
            workload.stop()
            workload.join()
        json.dump(workload.summary(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        say_demo_reading(dsn, "azync", c.schema)
        return
    from qctl.tui.app import run

    # The dashboard's first frame comes first; the workload starts right after it.
    try:
        say_demo_reading(dsn, "azync", c.schema)
        code = run(store, location=location, on_ready=workload.start, audit_where=where)
    finally:
        workload.stop()
        workload.join()
    if code:
        raise typer.Exit(code)


def _schema(c: CliContext, reset: bool, yes: bool) -> DemoSchema:
    """``common.demo_schema`` for azync's tables in ``c``'s schema."""

    with demo_connection(c.dsn or "") as conn:
        return demo_schema(
            conn, c.schema, mark=OWNED, table="azync_jobs", label="azync",
            scope="it works any job of its kinds there, and maintains and vacuums nothing",
            reset=reset, yes=yes,
        )  # fmt: skip
