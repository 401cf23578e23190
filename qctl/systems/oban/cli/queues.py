"""``qctl queues`` and ``qctl nodes`` on an Oban database: queues list, show, pause,
resume, scale (Oban's signal); nodes list."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import verbs
from qctl.cli.common import Output
from qctl.cli.output import OutputFormat, emit_detail, emit_rows
from qctl.cli.verbs import (
    AllQueues,
    QueueInstance,
    QueueMatch,
    QueueNames,
    QueueNode,
    queue_command,
    queue_selection,
)
from qctl.core.sqldb import row_record
from qctl.systems.oban import actions, reads
from qctl.systems.oban.cli import database, group, writable
from qctl_kit.errors import InvalidInput

app = group("queues")
nodes_app = group("nodes")

COLUMNS = [
    "queue",
    "paused",
    "limits",
    "nodes",
    "available",
    "scheduled",
    "executing",
    "retryable",
    "suspended",
    "completed",
    "cancelled",
    "discarded",
    "oldest_available_age",
]
NODE_COLUMNS = ["node", "name", "queue", "local_limit", "paused", "leader", "started_at",
                "updated_at", "expires_at"]  # fmt: skip
THROUGHPUT_COLUMNS = ["queue", "completed", "cancelled", "discarded"]


@app.command("list")
def list_queues(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Per queue: whether its producers are paused (oban-py; empty on Elixir, whose nodes
    keep it in memory), their limits and nodes, its jobs in each state and how long the
    oldest available job has waited. Counting the finished jobs reads every job; `qctl
    top`'s Queues tab counts the unfinished ones."""
    emit_rows([row_record(q) for q in reads.list_queues(database(ctx))], COLUMNS, output)


@app.command("show")
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="QUEUE", help="Queue name.")],
    seconds: Annotated[
        int, typer.Option("--window", metavar="SECONDS", help="Throughput window.", min=1)
    ] = 300,
    output: Output = OutputFormat.TABLE,
) -> None:
    """One queue: its jobs per state, its producers (node, limit, paused) and its
    throughput (jobs finished per state in the last --window seconds)."""
    db = database(ctx)
    queue, producers = reads.get_queue(db, name)
    done = [r for r in reads.throughput(db, seconds) if r["queue"] == name]
    record = {
        **row_record(queue),
        "producers": [row_record(p) for p in producers],
        "throughput": {"window_seconds": seconds, **(done[0] if done else {})},
    }
    head = {k: v for k, v in record.items() if k not in ("producers", "throughput")}
    emit_detail(
        output,
        head,
        record,
        [([row_record(p) for p in producers], NODE_COLUMNS), (done, THROUGHPUT_COLUMNS)],
    )


@nodes_app.command("list")
def list_nodes(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """Oban's nodes: on oban-py its producers (one per queue and node, the limit and
    pause each last recorded, when it last reported), the leader marked; on Elixir the
    peer that leads (oban_peers)."""
    emit_rows([row_record(n) for n in reads.nodes(database(ctx))], NODE_COLUMNS, output)


queue_command(
    app,
    actions.PAUSE,
    writable,
    "Stop Oban's producers fetching from queues, as Oban's pause_queue does: a pause on"
    " Oban's signal channel, to every node or --node alone (Oban's ident); executing jobs"
    " finish. Each oban-py producer records it in its own row.",
    lambda node, instance: actions.queue_verb("pause", node, instance),
)
queue_command(
    app,
    actions.RESUME,
    writable,
    "Let Oban's producers fetch from paused queues again, as Oban's resume_queue does (a"
    " resume on Oban's signal channel, to every node or --node alone).",
    lambda node, instance: actions.queue_verb("resume", node, instance),
)


@app.command("scale")
@verbs.running
def scale(
    ctx: typer.Context,
    limit: Annotated[
        int, typer.Option("--limit", metavar="N", min=1, help="The new concurrency limit.")
    ],
    names: QueueNames = None,
    match: QueueMatch = None,
    all_queues: AllQueues = False,
    node: QueueNode = None,
    instance: QueueInstance = None,
    *,
    run: verbs.Run,
) -> None:
    """Change how many jobs of a queue each producer runs at once, as Oban's scale_queue
    does (a scale with the new limit on Oban's signal channel, to every node or --node
    alone)."""
    if instance and not node:
        raise InvalidInput("--instance names an instance on --node: give --node too")
    verb = actions.queue_verb("scale", node, instance, limit)
    verbs.act(ctx, verb, writable, queue_selection(verb, names, match, all_queues), run)
