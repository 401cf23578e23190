"""``qctl demo --system oban``: an Oban workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "oban_demo"
"""Where the demo creates oban-py's tables when --schema names none."""
OWNED = "created by qctl demo --system oban"
"""The comment the demo puts on a schema it creates: the one schema it may drop (--reset)
and lead without asking."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer of jobs and two stand-in Oban nodes (Python running oban-py's own
    fetch, ack, producer and leader SQL, labelled as such: oban-py needs Python 3.12 and
    does not ship with qctl) on oban-py's schema in --schema (default ``oban_demo``) of
    the --dsn PostgreSQL database, created there when absent; watched in ``qctl top``, or
    headless for ``seconds`` then the demo's jobs per state. The nodes answer Oban's
    signals (pause, resume, scale, pkill) as oban-py's producers do. A schema the demo
    did not create is confirmed first when it holds anything, and the demo then works
    only jobs of its own and takes no leadership. ``reset`` drops the schema first, only
    one the demo created."""
    import json
    import sys
    import time
    from importlib.resources import files

    import psycopg
    from psycopg import sql

    from qctl.systems.oban import reads
    from qctl.systems.oban.database import Database
    from qctl.systems.oban.demo import Workload

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput("the Oban demo needs --dsn postgresql://... (Oban is PostgreSQL only)")
    schema = cli.schema or DEMO_SCHEMA
    where = cli.demo_where(cli.dsn, "oban", schema)
    q = reads.queries("demo.sql")
    with psycopg.connect(cli.dsn, autocommit=True) as conn:
        place = common.demo_schema(
            conn, schema, mark=OWNED, table="oban_jobs", label="Oban",
            scope="only on jobs it inserts", reset=reset, yes=yes,
        )  # fmt: skip
        if not place.holds:
            ddl = files("qctl.systems.oban").joinpath("schema_obanpy_0.7.0.sql").read_text()
            with conn.transaction():
                conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(sql.Identifier(schema)))
                conn.execute(ddl.encode())
    db = Database(cli.dsn, schema)
    try:
        db.writable()
    except Exception:
        db.close()
        raise
    workload = Workload(cli.dsn, schema, speed=speed, lead=place.owned, seed=seed)
    workload.start()
    try:
        if no_tui:
            sys.stderr.write(
                f"qctl demo: Oban workload (stand-in nodes running oban-py's SQL) on"
                f" {db.location} schema {schema} for {seconds or 60.0:g}s\n"
            )
            time.sleep(seconds or 60.0)
            workload.stop()
            mark = json.dumps(workload.mark)
            counts = {r["state"]: r["n"] for r in db.all(q.job_counts, {"mark": mark})}
            json.dump(counts, sys.stdout, indent=2, sort_keys=True)
            sys.stdout.write("\n")
        else:
            from qctl.systems.oban.tui import OBAN
            from qctl.tui.app import run

            location = f"{db.location} schema {schema} (Oban demo, stand-in nodes)"
            run(db, system=OBAN, location=location, poll_interval=1.0, audit_where=where)
    finally:
        workload.stop()
        db.close()
    for error in workload.errors:
        sys.stderr.write(f"qctl demo: a stand-in stopped: {error}\n")
