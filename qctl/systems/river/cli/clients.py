"""``qctl clients`` on a River database: the clients its schema shows at work, and the
leader."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_rows
from qctl.core.sqldb import row_record
from qctl.systems.river import reads
from qctl.systems.river.cli import database, group

app = group("clients")

COLUMNS = ["client", "queue", "running", "oldest_attempted_at", "leader", "expires_at"]
LEADER_COLUMNS = ["name", "leader_id", "elected_at", "expires_at", "expired"]


@app.command("list")
def list_clients(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """River's clients at work, per client and queue: the jobs each runs now (the id a
    client writes in attempted_by when it fetches a job) and since when its oldest one
    runs; the leader (River's maintenance runs there) with its lease, on a row of its own
    when it runs no job. River v0.51.2 records no client table: a client running no job
    and not leading does not show (`queues list`'s updated_at says when a client last
    reported each queue)."""
    emit_rows([row_record(c) for c in reads.clients(database(ctx))], COLUMNS, output)


@app.command("leader")
def leader(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """River's elected leader (river_leader): its client id, when it was elected, when
    its lease expires unless it renews it, and whether that has passed (no row: no
    client leads, and River's maintenance (cleaner, rescuer, scheduler) is not running)."""
    emit_rows([row_record(r) for r in reads.leaders(database(ctx))], LEADER_COLUMNS, output)
