"""``qctl maintain``: the housekeeping azync's engines do, for stores without Go workers
(or beside them; every step is idempotent and uses the same row locks as theirs)."""

from __future__ import annotations

import signal
import threading
from datetime import timedelta
from types import FrameType
from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import Output
from qctl.cli.errors import Terminated
from qctl.cli.output import OutputFormat, emit_rows, note, rows_of
from qctl.core.parse import ParseError
from qctl.systems.azync.cli import database, options
from qctl.systems.azync.cli.options import SourceOpt
from qctl.systems.azync.ops import maintain as ops_maintain
from qctl.systems.azync.ops.results import MaintainStep
from qctl_store.contract import ConsoleStore

COLUMNS = ["step", "source", "count"]


@common.writes
def maintain(
    ctx: typer.Context,
    once: Annotated[bool, typer.Option("--once", help="One pass, then exit.")] = False,
    interval: Annotated[
        str, typer.Option("--interval", metavar="DURATION", help="Time between passes.")
    ] = "5s",
    source: SourceOpt = None,
    max_reaps: Annotated[
        int,
        typer.Option(
            "--max-reaps",
            metavar="N",
            min=1,
            help="Lease expiries a job survives before it is dead (azync's default 5); "
            "must match the Go deployment.",
        ),
    ] = ops_maintain.DEFAULT_MAX_REAPS,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Promote due jobs, reap expired leases, advance DAGs; under leader election
    ("maintain"), so several maintainers do not duplicate work. A lost connection is
    logged, backed off and re-established. Ctrl-C or SIGTERM stops (exit 0)."""
    pause = common.duration(interval, "--interval") or timedelta(0)
    if not once and pause <= timedelta(0):
        raise ParseError("--interval must be positive")
    context = common.cli(ctx)
    # The first store is opened here (read-only and bad DSNs fail before the loop);
    # after a lost connection the loop opens a new one.
    stores: list[ConsoleStore] = [options.writable(ctx, "maintain")]

    def open_store() -> ConsoleStore:
        return stores.pop() if stores else database.open_store(context, pooled=False)

    def on_pass(steps: list[MaintainStep]) -> None:
        rows = [{**r, "source": r["source"] or None} for r in rows_of(steps)]
        emit_rows(rows, COLUMNS, output if once else _streaming(output))

    stop = threading.Event()

    def terminate(signum: int, frame: FrameType | None) -> None:
        stop.set()
        raise Terminated  # a statement waiting on a lock is cancelled on the server

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        ops_maintain.run(
            open_store,
            options.sources(source),
            max_reaps,
            pause.total_seconds(),
            stop,
            note,
            on_pass,
            once=once,
        )
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    if not once:
        note("maintain: stopped")


def _streaming(output: OutputFormat) -> OutputFormat:
    """A long-running loop prints one JSON document per line (``json`` becomes ``jsonl``)."""
    return OutputFormat.JSONL if output == OutputFormat.JSON else output
