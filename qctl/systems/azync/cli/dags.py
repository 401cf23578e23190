"""``qctl dags``: declared DAG runs, their tasks and graph, and the operator's actions."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import After, DryRun, Output, PageLimit, Yes
from qctl.cli.output import (
    OutputFormat,
    as_dict,
    emit_detail,
    emit_result,
    emit_rows,
    page_note,
    stream_listing,
)
from qctl.core import parse
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.cli.act import act
from qctl.systems.azync.cli.jobs import job_record
from qctl.systems.azync.ops import dags as ops_dags
from qctl_kit.values import PageCursor
from qctl_store.types import DAGDep, DAGFilter, DAGState, DAGView, Job, JobState

app = common.app("dags", SYSTEM.commands["dags"].help)

IdArg = Annotated[
    str, typer.Argument(metavar="ID", help="DAG id or unique prefix (>= 8 hex chars).")
]
DAG_COLUMNS = ["id", "name", "state", "on_failure", "tasks", "created_at", "failure_reason"]
TASK_COLUMNS = ["task_key", "kind", "state", "attempt", "max_attempts", "id", "last_error"]


def counts_text(counts: dict[JobState, int]) -> str:
    return " ".join(f"{state}:{n}" for state, n in sorted(counts.items()) if n)


def dag_record(dag: DAGView, counts: dict[JobState, int] | None = None) -> dict[str, Any]:
    record = as_dict(dag)
    if counts is not None:
        record["tasks"] = counts
    return record


def draw(tasks: list[Job], deps: list[DAGDep]) -> tuple[list[Job], str]:
    """The tasks in graph reading order (roots first), and the graph drawn as text with
    each task labelled by its state."""
    from qctl.core.graph import layout, render

    lay = layout([t.task_key for t in tasks], [(d.task_key, d.depends_on_key) for d in deps])
    rank = {key: i for i, key in enumerate(lay.order())}
    labels = {t.task_key: f"{t.task_key} [{t.state}]" for t in tasks}
    ordered = sorted(tasks, key=lambda t: rank.get(t.task_key, len(rank)))
    return ordered, render(lay, labels).text


@app.command("list")
def list_dags(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", help="Only runs of this DAG name.")] = "",
    state: Annotated[DAGState | None, typer.Option("--state", help="Run state.")] = None,
    limit: PageLimit = 50,
    after: After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """DAG runs, newest first, with per-run task-state counts."""
    store = options.store(ctx)
    flt = DAGFilter(name=name, state=state)
    fetch_dags, totals = options.counted_first(
        lambda n, at: store.list_dags(flt, 0, n, at),
        lambda n, at: store.dag_page(flt, n, at),
        output == OutputFormat.TABLE,
    )

    def fetch(n: int, at: PageCursor | None) -> list[tuple[DAGView, dict[JobState, int]]]:
        dags = fetch_dags(n, at)
        counts = store.dag_task_counts([d.id for d in dags]) if dags else {}
        return [(d, counts.get(d.id, {})) for d in dags]

    shown, position = stream_listing(
        fetch,
        lambda row: options.newest_first(row[0]),
        lambda row: dag_record(*row),
        DAG_COLUMNS,
        output,
        limit,
        options.cursor(after),
        shown=lambda row: {**dag_record(*row), "tasks": counts_text(row[1])},
    )
    total = totals[0] if totals else None
    page_note(output, shown, total, parse.cursor_text(position) if position else None)


@app.command("counts")
def counts(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """How many runs of each DAG name are in each state."""
    by_name = options.store(ctx).dag_name_state_counts()
    rows: list[dict[str, Any]] = [
        {"name": name, **{s.value: per.get(s, 0) for s in DAGState}}
        for name, per in sorted(by_name.items())
    ]
    emit_rows(rows, ["name", *(s.value for s in DAGState)], output)


@app.command("show")
def show(ctx: typer.Context, id: IdArg, output: Output = OutputFormat.TABLE) -> None:
    """One run: header, tasks, and its graph with task states.

    \b
    Example:
      qctl dags show 3f2a9c1e
    """
    store = options.store(ctx)
    dag = options.found(ctx, "dag", id, store.get_dag)
    tasks = store.dag_tasks(dag.id)
    deps = store.dag_deps(dag.id)
    # The graph is for people only (and imports the layout code).
    ordered, graph = draw(tasks, deps) if tasks and output == OutputFormat.TABLE else (tasks, "")
    emit_detail(
        output,
        dag_record(dag),
        {"dag": dag_record(dag), "tasks": [job_record(t) for t in tasks], "deps": deps},
        [([job_record(t) for t in ordered], TASK_COLUMNS)],
        graph,
    )


@app.command("find")
def find(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="DAG name.")],
    key: Annotated[str, typer.Argument(metavar="KEY", help="Idempotency key of the run.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """The live run of NAME with idempotency KEY."""
    dag_id = options.store(ctx).find_dag_by_key(name, key)
    emit_result({"id": dag_id, "name": name, "idempotency_key": key}, str(dag_id), output)


@app.command("signal")
@common.writes
def signal(
    ctx: typer.Context,
    id: IdArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Signal name.")],
    payload: Annotated[str | None, typer.Option("--payload", "-p", help="JSON payload.")] = None,
    message_id: Annotated[str, typer.Option("--message-id", help="Dedupe id.")] = "",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Send signal NAME to a live run: its waiting $signal task of that name completes
    with the payload as its result; a $sleep timer of that name wakes now (its sleep
    ends early; the payload is not used). With neither ready (a task not reached yet, a
    paused run) the signal is buffered until one is. A finished run is refused naming its
    state, and a name no task of the run declares is refused listing the run's signals
    (exit 3).

    \b
    Example:
      qctl dags signal 3f2a9c1e approve --payload '{"by": "ops"}'
    """
    store = options.writable(ctx, "dags signal")
    dag_id = options.resolve(ctx, "dag", id)
    value = common.json_value(payload, "--payload")
    sent = ops_dags.signal(store, dag_id, name, value, message_id)
    common.done(sent, ops_dags.signal_words(sent), output)


@app.command("pause")
@common.writes
def pause(
    ctx: typer.Context,
    id: IdArg,
    reason: Annotated[str, typer.Option("--reason", help="Why (shown on the run).")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """Pause a run: its tasks stay where they are until retry."""
    act(
        ctx,
        "dags",
        "dag",
        id,
        "pause",
        "paused",
        output,
        lambda s, i, dry: ops_dags.pause(s, i, reason, dry),
    )


Force = Annotated[
    bool,
    typer.Option("--force", help="Act even where it strands the saga (the refusal says how)."),
]
"""The saga verbs' override of the operations layer's refusal (``Strands``)."""


@app.command("retry")
def retry(
    ctx: typer.Context,
    id: IdArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Resume a suspended or paused run. Dead tasks get a fresh budget."""
    act(
        ctx,
        "dags",
        "dag",
        id,
        "retry",
        "retried",
        output,
        ops_dags.retry,
        destructive=True,
        yes=yes,
        dry_run=dry_run,
    )


@app.command("compensate")
def compensate(
    ctx: typer.Context,
    id: IdArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    force: Force = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Run the compensation chain of a run (saga rollback): cancels the tasks that have
    not run. Refused while an original task runs, or once the chain started, unless
    --force."""
    act(
        ctx,
        "dags",
        "dag",
        id,
        "compensate",
        "compensating",
        output,
        lambda s, i, dry: ops_dags.compensate(s, i, dry, force),
        destructive=True,
        yes=yes,
        dry_run=dry_run,
    )


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    id: IdArg,
    dry_run: DryRun = False,
    yes: Yes = False,
    force: Force = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Cancel a run without compensation. Refused where it would cancel compensation
    steps that have not run, unless --force."""
    act(
        ctx,
        "dags",
        "dag",
        id,
        "cancel",
        "cancelled",
        output,
        lambda s, i, dry: ops_dags.cancel(s, i, dry, force),
        destructive=True,
        yes=yes,
        dry_run=dry_run,
    )
