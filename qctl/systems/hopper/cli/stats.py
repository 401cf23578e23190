"""``qctl stats`` on a hopper database (hopper's ``hopper stats``)."""

from __future__ import annotations

import typer

from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail
from qctl.systems.hopper import reads
from qctl.systems.hopper.cli import database
from qctl.systems.hopper.cli.queues import COLUMNS, queue_rows


def stats(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The leader, the live clients, and per queue its live jobs by state, the age of its
    oldest claimable job, completions in the last minute and whether it is paused."""
    db = database(ctx)
    cluster = reads.cluster(db)
    queues = queue_rows(db)
    head = {"leader": cluster.leader, "live_clients": cluster.live_clients}
    emit_detail(output, head, {**head, "queues": queues}, [(queues, COLUMNS[:9])])
