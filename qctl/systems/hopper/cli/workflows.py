"""``qctl workflows`` on a hopper database: batches and workflows (read-only)."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli.common import After, Output, PageLimit
from qctl.cli.output import OutputFormat, emit_detail, emit_rows, page_note
from qctl.core.sqldb import row_record
from qctl.systems.hopper import reads
from qctl.systems.hopper.cli import database, group

app = group("workflows")

COLUMNS = ["id", "name", "total", "pending", "failed", "created_at", "completed_at"]
JOB_COLUMNS = ["id", "kind", "queue", "state", "attempt", "depends_on"]


@app.command("list")
def list_workflows(
    ctx: typer.Context,
    limit: PageLimit = 50,
    after: After = None,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Batches and workflows, newest first: jobs in all, still pending, failed."""
    batches = reads.list_batches(database(ctx), limit, reads.parse_after(after))
    records = [row_record(b) for b in batches]
    emit_rows(records, COLUMNS, output)
    page_note(output, len(batches), None, str(batches[-1].id) if len(batches) == limit else None)


@app.command("show")
def show(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(metavar="ID", help="Batch id or a unique prefix.")],
    output: Output = OutputFormat.TABLE,
) -> None:
    """A batch or workflow: its progress, callbacks, its jobs, each with the jobs it
    depends on, and (in a table) the workflow's dependency graph with each job's kind,
    id and state, the jobs then in the graph's reading order (roots first). JSON lists
    the jobs in insertion order and the graph as ``edges`` ([job, depends_on] pairs)."""
    db = database(ctx)
    batch, jobs = reads.get_batch(db, reads.resolve_batch(db, id))
    needs: dict[str, list[str]] = {}
    for job_id, depends_on in batch.edges or []:
        needs.setdefault(job_id, []).append(depends_on)
    rows = [{**row_record(j), "depends_on": ", ".join(needs.get(str(j.id), []))} for j in jobs]
    record = row_record(batch)
    head = {k: v for k, v in record.items() if k != "edges"}
    graph = ""
    if batch.edges and output == OutputFormat.TABLE:  # for people only
        from qctl.systems.hopper.graph import draw

        drawn = draw(batch, jobs)
        rank = {key: i for i, key in enumerate(drawn.order)}
        rows.sort(key=lambda r: rank.get(str(r["id"]), len(rank)))
        graph = drawn.rendering.text
    emit_detail(output, head, {**record, "jobs": rows}, [(rows, JOB_COLUMNS)], graph)
