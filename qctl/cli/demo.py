"""``qctl demo``: a realistic live workload, watched in ``qctl top`` (or headless)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from qctl import systems
from qctl.cli.common import Yes, cli


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
        typer.Option(
            "--reset",
            help="Start afresh: delete the embedded demo database, or drop the PostgreSQL"
            " schema the demo itself created (never one it did not).",
        ),
    ] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Random seed.")] = None,
    yes: Yes = False,
    system: Annotated[
        str,
        typer.Option(
            "--system",
            metavar=systems.choices(lambda s: s.demo),
            help=f"Whose workload (default {systems.systems()[0].name}), on its own demo "
            "database unless --dsn is given.",
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
    from qctl_kit.errors import InvalidInput

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
    # The named system's workload, else the default system's.
    name = system or c.system_name
    record = systems.get(name) if name else systems.systems()[0]
    if not record.demo:
        having = ", ".join(s.name for s in systems.systems() if s.demo)
        raise InvalidInput(f"{record.label} has no demo (demos: {having})")
    run = systems.load(record.demo)
    run(c, no_tui=no_tui, seconds=seconds, speed=speed, reset=reset, seed=seed, yes=yes)
