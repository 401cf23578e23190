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
    database ($XDG_DATA_HOME/qctl/demo.db), or on --dsn, and watch it in qctl top; it
    says the command that reads what it made. On PostgreSQL --dsn is all it needs: it
    runs in a schema of its own, created when absent (the system's name and _demo, as
    river_demo; DBOS's dbos), or in --schema. Its workers work every job of a schema it
    created; one it did not create is confirmed first when it holds anything, and the
    demo then works only the jobs it inserts and maintains nothing there."""
    from qctl.cli.context import CliContext
    from qctl.core import parse
    from qctl_kit.errors import InvalidInput

    c = cli(ctx)
    # The named system's workload, else the default system's: never the one detected.
    name = system or c.system_name
    record = systems.get(name) if name else systems.systems()[0]
    if not record.demo:
        having = ", ".join(s.name for s in systems.systems() if s.demo)
        raise InvalidInput(f"{record.label} has no demo (demos: {having})")
    seconds = parse.parse_duration(duration).total_seconds() if duration else None
    if seconds is None and no_tui:
        seconds = 60.0
    instead = c.describe() if c.dsn and not c.dsn_flag else ""
    if instead:
        # A context or QCTL_DSN names the database an operator works on, maybe a
        # production one: the demo writes there only when --dsn says so.
        c = CliContext(read_only=c.read_only, no_color=c.no_color)
        ctx.call_on_close(c.close)
    c.system_name = record.name
    c.require_writable("demo")
    if instead and record.demo_embedded:
        sys.stderr.write(f"qctl demo: on its own database, not {instead} (--dsn runs it there)\n")
    run = systems.load(record.demo)
    run(c, no_tui=no_tui, seconds=seconds, speed=speed, reset=reset, seed=seed, yes=yes)
