"""``qctl demo --system dispatch``: a dispatch workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "dispatch_demo"
"""Where the demo creates dispatch's tables when --schema names none."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer and two stand-in workers (Python running dispatch v0.1.0's worker
    SQL, labelled as such: dispatch's Go runtime does not ship with qctl) on dispatch's
    schema in --schema (default ``dispatch_demo``) of the --dsn PostgreSQL database,
    created there from dispatch's migrations at main 6f7dda7 when absent; watched in
    ``qctl top``, or headless for ``seconds`` then jobs per state. ``reset`` drops the
    demo's schema first (only ``dispatch_demo``, never one --schema names)."""
    import json
    import sys
    import time
    from importlib.resources import files

    from qctl.systems.dispatch import reads
    from qctl.systems.dispatch.database import Database
    from qctl.systems.dispatch.demo import Workload

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput(
            "the dispatch demo needs --dsn postgresql://... (dispatch is PostgreSQL)"
        )
    schema = cli.schema or DEMO_SCHEMA
    import psycopg

    with psycopg.connect(cli.dsn, autocommit=True) as conn:
        if reset and not cli.schema:
            conn.execute(f'DROP SCHEMA IF EXISTS "{DEMO_SCHEMA}" CASCADE')
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(f'SET search_path = "{schema}"')
        present = conn.execute(reads.queries("demo.sql").has_schema).fetchone()
        if not (present and present[0]):
            if conn.execute("SELECT to_regclass('grove_migrations')").fetchone() != (None,):
                raise InvalidInput(f"schema {schema} holds grove's tables but no dispatch_jobs")
            conn.execute(files("qctl.systems.dispatch").joinpath("schema_6f7dda7.sql").read_text())
        elif cli.schema:
            common.confirm(
                f"schema {schema} already holds dispatch's tables: run the demo's workload there?",
                yes,
            )
    db = Database(cli.dsn, schema)
    workload = Workload(Database(cli.dsn, schema), speed=speed, seed=seed)
    workload.start()
    try:
        if no_tui:
            sys.stderr.write(
                f"qctl demo: dispatch workload (stand-in workers running dispatch's worker"
                f" SQL) on {db.location} schema {schema} for {seconds:g}s\n"
            )
            time.sleep(seconds or 60.0)
            workload.stop()
            counts = {r["state"]: r["n"] for r in db.all(reads.queries("demo.sql").job_counts)}
            json.dump(counts, sys.stdout, indent=2, sort_keys=True)
            sys.stdout.write("\n")
        else:
            from qctl.systems.dispatch.tui import DISPATCH
            from qctl.tui.app import run

            location = f"{db.location} schema {schema} (dispatch demo, stand-in workers)"
            where = cli.audit_where(cli.dsn, "dispatch", schema)
            run(db, system=DISPATCH, location=location, poll_interval=1.0, audit_where=where)
    finally:
        workload.stop()
        workload.db.close()
        db.close()
