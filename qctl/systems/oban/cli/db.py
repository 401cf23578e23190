"""``qctl db`` on an Oban database: status, tune (qctl's opt-in index), and the refusal
to migrate."""

from __future__ import annotations

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output
from qctl.cli.output import OutputFormat
from qctl.systems.oban.cli import database, group, writable
from qctl_kit.errors import InvalidInput

app = group("db")


@app.command("status")
def status(ctx: typer.Context, output: Output = OutputFormat.TABLE) -> None:
    """The context, schema (Oban's prefix), the flavour that made it (oban-py's tables,
    or Elixir Oban's migration version) and whether qctl supports it; exit 5 (after the
    report) when qctl does not know it."""
    from qctl.systems.oban import tune
    from qctl.systems.oban.database import SUPPORTED

    db = database(ctx, gate=False)
    state = db.state
    fields = {
        "flavour": state.described,
        "elixir_version": state.version,
        "tables": list(state.tables),
        "job_states": list(state.states),
        "supported": state.supported,
        "supported_versions": SUPPORTED,
        "signal_channel": f"{db.channel('signal')} (cancel of an executing job, pause,"
        " resume and scale reach Oban's nodes there)",
        "timestamps": "UTC (Oban stores timestamps without time zone)",
        "console_indexes": tune.present(db) if state.readable else [],
    }
    refusal = None if state.supported else state.refusal()
    common.database_status(ctx, "oban", db, fields, refusal, output)


@app.command("tune")
def tune(ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE) -> None:
    """Add qctl's own index on oban_jobs (queue, id), so a first page filtered by queue
    (`jobs list --queue`, a queue's jobs in the dashboard) is one index descent instead
    of a walk of the primary key (every job, for a queue with few or none). Built with
    CREATE INDEX CONCURRENTLY (Oban's nodes are not blocked; each insert then updates one
    more index); named qctl_*, a name Oban never takes; listed by `qctl db status`.
    Nothing else of Oban's schema is changed."""
    from qctl.systems.oban import tune as tuning

    common.cli(ctx).unlimit("statement_timeout", "lock_timeout")
    db = writable(ctx, "db tune", dry_run)
    names = tuning.tune(db, dry_run=dry_run)
    common.tune_report(names, [] if names else tuning.present(db), dry_run, output)


@app.command("migrate")
def migrate(
    ctx: typer.Context, dry_run: DryRun = False, output: Output = OutputFormat.TABLE
) -> None:
    """Refused: Oban installs and migrates its own schema (oban-py's oban.schema.install,
    Elixir's Oban.Migration)."""
    raise InvalidInput(
        "qctl never migrates an Oban database: oban-py's oban.schema.install or Elixir's"
        " Oban.Migration does"
    )
