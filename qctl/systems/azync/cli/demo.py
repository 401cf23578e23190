"""``qctl demo`` on azync: a realistic workload (``qctl.systems.azync.demo``) on the
embedded demo database or on ``--dsn``, watched in ``qctl top`` (or headless)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from qctl.cli.common import confirm
from qctl.core.paths import demo_database_path

if TYPE_CHECKING:
    from qctl.cli.context import CliContext


def demo(
    c: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    seed: int | None,
    yes: bool,
) -> None:
    """Run the workload on ``c``'s database (PostgreSQL must be migrated; one that already
    holds jobs is confirmed first, and the demo then maintains and vacuums nothing there),
    else on the embedded demo database."""
    from qctl.systems.azync.cli import database
    from qctl.systems.azync.demo import Demo
    from qctl_store import Config, open_store
    from qctl_store.types import Source

    maintain = True
    if c.dsn:
        store = database.open_store(
            c, pooled=True, create=True, check=False
        )  # checked or migrated below
        location = c.describe()
        if c.is_postgres:
            store.check_schema()  # never migrate someone's PostgreSQL implicitly
        else:
            store.migrate()
        if any(store.list_kinds(source) for source in Source):
            # Its maintenance reaps and its vacuums delete across kinds: on a database
            # with jobs of its own they would act on rows the demo did not create.
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
    workload = Demo(store, speed=speed, duration=seconds, seed=seed, maintain=maintain)
    where = c.demo_where(c.dsn or f"sqlite:///{path}", "azync")
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
        return
    from qctl.tui.app import run

    # The dashboard's first frame comes first; the workload starts right after it.
    try:
        code = run(store, location=location, on_ready=workload.start, audit_where=where)
    finally:
        workload.stop()
        workload.join()
    if code:
        raise typer.Exit(code)
