"""``qctl demo``: a realistic live workload, watched in ``qctl top`` (or headless)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from qctl.cli.common import Yes, cli, confirm
from qctl.core.paths import demo_database_path


def demo(
    ctx: typer.Context,
    no_tui: Annotated[
        bool, typer.Option("--no-tui", help="Run headless and print a summary at the end.")
    ] = False,
    duration: Annotated[
        str | None,
        typer.Option(
            "--duration",
            metavar="D",
            help="Stop after this long (90s, 15m, ...); default: until the dashboard "
            "quits, or 60s with --no-tui.",
        ),
    ] = None,
    speed: Annotated[
        float, typer.Option("--speed", min=0.1, max=20.0, help="Workload rate multiplier.")
    ] = 1.0,
    reset: Annotated[
        bool,
        typer.Option("--reset", help="Start from an empty demo database (embedded only)."),
    ] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed.")] = None,
    yes: Yes = False,
    system: Annotated[
        str,
        typer.Option(
            "--system",
            metavar="azync|dbos",
            help="Whose workload: azync jobs (default), or a DBOS application "
            "(SQLite file by default, --dsn for PostgreSQL).",
        ),
    ] = "",
) -> None:
    """Run a workload (jobs, retries, dead jobs, crashed workers, events, DAG runs with
    fan-out, signals and sagas, workflows with uncertain operations) on the embedded demo
    database ($XDG_DATA_HOME/qctl/demo.db), or on --dsn (PostgreSQL must be migrated; a
    database that already holds jobs is confirmed first, and the demo then maintains and
    vacuums nothing there), and watch it in qctl top."""
    from qctl.cli.context import CliContext
    from qctl.core import parse
    from qctl.systems.azync.demo import Demo
    from qctl_store import Config, open_store
    from qctl_store.types import Source

    c = cli(ctx)
    c.require_writable("demo")
    seconds = parse.parse_duration(duration).total_seconds() if duration else None
    if seconds is None and no_tui:
        seconds = 60.0
    if c.dsn and not c.dsn_flag:
        # A context or QCTL_DSN names the database an operator works on, maybe a
        # production one: the demo writes there only when --dsn says so.
        sys.stderr.write(
            f"qctl demo: on its own database, not {c.describe()} (--dsn runs it there)\n"
        )
        c = CliContext(read_only=c.read_only, no_color=c.no_color, system_name=c.system_name)
        ctx.call_on_close(c.close)
    if (system or c.system_name) == "dbos":
        from qctl.systems.dbos.cli.demo import demo as dbos_demo

        dbos_demo(c, no_tui=no_tui, seconds=seconds, speed=speed, reset=reset, yes=yes)
        return
    maintain = True
    if c.dsn:
        store = c.open_store(pooled=True, create=True, check=False)  # checked or migrated below
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
        c._stores.append(store)
        store.migrate()
        location = f"{path} (demo)"
    workload = Demo(store, speed=speed, duration=seconds, seed=seed, maintain=maintain)
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
        code = run(store, location=location, on_ready=workload.start)
    finally:
        workload.stop()
        workload.join()
    if code:
        raise typer.Exit(code)
