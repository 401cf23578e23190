"""``qctl audit``: the audit trail of qctl's writes (``qctl.core.audit``), newest first
by when each started: ``list`` reads it (the database's table where the context keeps
the trail there, else this account's local file), ``init`` creates the database's table
(``qctl.core.audit_table``). Bare ``qctl audit`` is ``qctl audit list``."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat, emit_result, emit_rows, note
from qctl.cli.registry import SYSTEMLESS_COMMANDS
from qctl.core import audit as trail

COLUMNS = ["time", "user", "front", "system", "context", "verb", "done", "exit_status", "reason"]

app = common.app("audit", SYSTEMLESS_COMMANDS["audit"].help)
app.info.no_args_is_help = False
app.info.invoke_without_command = True


Since = Annotated[
    str | None,
    typer.Option(
        "--since", metavar="INSTANT", help="Written at or after (1d: a day ago; 2026-01-02)."
    ),
]
VerbOpt = Annotated[
    str | None,
    typer.Option(
        "--verb",
        metavar="VERB",
        help="Only this verb, or the verbs of a noun: 'jobs retry', 'jobs'.",
    ),
]
Limit = Annotated[int, typer.Option("--limit", "-n", metavar="N", min=1, help="At most N entries.")]
Local = Annotated[
    bool,
    typer.Option(
        "--local",
        help="This account's local file, where the context keeps the trail in the database.",
    ),
]


@app.callback()
def bare(
    ctx: typer.Context,
    since: Since = None,
    verb: VerbOpt = None,
    limit: Limit = 50,
    local: Local = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """The audit trail of qctl's writes: bare, or with list's options, it is `qctl audit
    list`."""
    if ctx.invoked_subcommand is None:
        show(ctx, since, verb, limit, local, output)


@app.command("list")
def list_entries(
    ctx: typer.Context,
    since: Since = None,
    verb: VerbOpt = None,
    limit: Limit = 50,
    local: Local = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """The audit trail: every write qctl made (command line and dashboard), newest
    first by when each started. From the database's audit table where the context keeps
    the trail there (audit = "database", QCTL_AUDIT=database: every operator's writes to
    that database), else from this account's $XDG_STATE_HOME/qctl/audit.jsonl. Dry runs
    only read and are not recorded.

    \b
    Example:
      qctl audit list --since 1d --verb jobs -o json
    """
    show(ctx, since, verb, limit, local, output)


def show(
    ctx: typer.Context,
    since: str | None,
    verb: str | None,
    limit: int,
    local: bool,
    output: OutputFormat,
) -> None:
    start = common.instant(since, "--since")
    c = common.cli(ctx)
    table = c.audit_table() if c.audit == "database" and not local else None
    entries, said = trail.listing(table, start, verb or "", limit)
    if said:
        note(said)
    emit_rows(entries, COLUMNS, output)


@app.command("init")
def init(ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE) -> None:
    """Create the audit table in this database, in qctl's own namespace (PostgreSQL:
    schema qctl, table qctl.qctl_audit; SQLite: table qctl_audit), never in a system's
    schema: a context with audit = "database" (or QCTL_AUDIT=database) then keeps its
    trail there, where every operator of the database sees it. Refused in read-only
    mode; a table that exists is left as it is.

    \b
    Example:
      qctl --context prod audit init --dry-run
    """
    c = common.cli(ctx)
    if not dry_run:
        c.require_writable("audit init")
    table = c.audit_table()
    record = {"table": table.name, "database": table.database, "statements": table.statements()}
    if dry_run:
        exists = table.exists()
        record["created"] = False
        would = f"{table.where} exists already" if exists else f"would create the {table.where}"
        common.dry_run_report(record, would, output)
        return
    created = table.create()
    record["created"] = created
    keeps = (
        ""
        if c.audit == "database"
        else (
            '; set audit = "database" in the context (or QCTL_AUDIT=database) to keep the trail'
            " there"
        )
    )
    said = f"created the {table.where}" if created else f"the {table.where} exists already"
    emit_result(record, said + keeps, output)
