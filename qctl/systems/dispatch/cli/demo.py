"""``qctl demo --system dispatch``: a dispatch workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "dispatch_demo"
"""Where the demo creates dispatch's tables when --schema names none."""
OWNED = "created by qctl demo --system dispatch"
"""The comment the demo puts on a schema it creates: the one schema it may drop
(--reset)."""


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
    ``qctl top``, or headless for ``seconds`` then jobs per state. A schema the demo did
    not create is confirmed first when it holds anything (its workers then take that
    fleet's jobs of the demo's queues too). ``reset`` drops the schema first, only one
    the demo created."""
    import json
    import sys
    import time
    from importlib.resources import files

    from qctl.systems.dispatch import reads
    from qctl.systems.dispatch.database import Database
    from qctl.systems.dispatch.demo import QUEUES, Workload

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput(
            "the dispatch demo needs --dsn postgresql://... (qctl operates dispatch on PostgreSQL)"
        )
    schema = cli.schema or DEMO_SCHEMA
    where = cli.demo_where(cli.dsn, "dispatch", schema)
    from psycopg import sql

    with common.demo_connection(cli.dsn) as conn:
        place = common.demo_schema(
            conn, schema, mark=OWNED, table="dispatch_jobs", label="dispatch",
            scope=f"its workers take any job of queues {', '.join(QUEUES)}",
            reset=reset, yes=yes,
        )  # fmt: skip
        if not place.holds:
            conn.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(schema)))
            conn.execute(files("qctl.systems.dispatch").joinpath("schema_6f7dda7.sql").read_text())
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
            common.say_demo_reading(cli.dsn, "dispatch", schema)
        else:
            from qctl.systems.dispatch.tui import DISPATCH
            from qctl.tui.app import run

            location = f"{db.location} schema {schema} (dispatch demo, stand-in workers)"
            common.say_demo_reading(cli.dsn, "dispatch", schema)
            run(db, system=DISPATCH, location=location, poll_interval=1.0, audit_where=where)
    finally:
        workload.stop()
        workload.db.close()
        db.close()
