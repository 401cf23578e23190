"""``qctl streams`` on a hopper database: stream consumers, and moving one through the
log (hopper's ``StreamConsumerSeek``)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.hopper import actions, reads
from qctl.systems.hopper.cli import database, group, writable

app = group("streams")

COLUMNS = ["name", "pattern", "kind", "queue", "seen", "reading", "xid", "seq", "delivered_at"]


@app.command("list")
def list_streams(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Stream consumers: the topic pattern, the job kind and queue of their deliveries,
    and where each has read to (the snapshot seen; part way through a delta, the delta's
    snapshot and the last event delivered, xid:seq)."""
    rows = [row_record(c) for c in reads.list_stream_consumers(database(ctx))]
    emit_rows(rows, COLUMNS, output)


@app.command("seek")
def seek(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="CONSUMER", help="Stream consumer name.")],
    earliest: Annotated[bool, typer.Option("--earliest", help="Back to the first event.")] = False,
    latest: Annotated[bool, typer.Option("--latest", help="Past every event so far.")] = False,
    at: Annotated[
        str | None,
        typer.Option("--time", metavar="INSTANT", help="Just before the first event at or after."),
    ] = None,
    position: Annotated[
        str, typer.Option("--position", metavar="XID:SEQ", help="Resume after this event.")
    ] = "",
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Move a stream consumer through the log as hopper's StreamConsumerSeek does; the
    leader's next pump delivers from there (a rewind delivers events again, as new
    jobs)."""
    when = common.instant(at, "--time")
    db = writable(ctx, "streams seek", dry_run)

    def act(dry: bool) -> actions.Sought:
        return actions.seek(db, name, earliest, latest, when, position, dry)

    plan = act(True)
    said = f"seek hopper stream consumer {plan.consumer} to {plan.to} (it had {plan.before})"
    if not common.proceed(dry_run, yes, output, plan, said, f"Seek {name} to {plan.to}?"):
        return
    done = act(False)
    common.done(done, f"sought hopper stream consumer {done.consumer} to {done.to}", output)
