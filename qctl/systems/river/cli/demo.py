"""``qctl demo --system river``: a River workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "river_demo"
"""Where the demo creates River's tables when --schema names none."""
OWNED = "created by qctl demo --system river"
"""The comment the demo puts on a schema it creates: the one schema it may drop
(--reset), lead and write River's schema into."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer and two stand-in clients (Python running River's own SQL, labelled as
    such: River's Go runtime does not ship with qctl) on River's schema (line main,
    version 8) in --schema (default ``river_demo``) of the --dsn PostgreSQL database,
    written there when the schema is absent or empty; watched in ``qctl top``, or headless
    for ``seconds`` then the demo's jobs per state. A River schema the demo did not
    create is confirmed first, and the demo then inserts, fetches and settles only jobs
    of its own and leaves the leadership alone. ``reset`` drops the schema first, only
    one the demo created."""

    from qctl.systems.river import reads, standin
    from qctl.systems.river.database import Database

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput(
            "the River demo needs --dsn postgresql://... (River's schema here is PostgreSQL)"
        )
    schema = cli.schema or DEMO_SCHEMA
    where = cli.demo_where(cli.dsn, "river", schema)
    q = reads.queries("standin.sql")
    with common.demo_connection(cli.dsn) as conn:
        place = common.demo_schema(
            conn, schema, mark=OWNED, table="river_job", label="River",
            scope="only on jobs it inserts", reset=reset, yes=yes,
        )  # fmt: skip
        if not place.holds:
            standin.install(conn, schema)
    db = Database(cli.dsn, schema)
    try:
        db.writable()  # River's migrations as the stand-in's statements need them
    except Exception:
        db.close()
        raise
    workload = standin.Workload(cli.dsn, schema, speed=speed, lead=place.owned, seed=seed)
    workload.start()
    common.run_demo(
        cli, db, workload, where, system="river", screens="qctl.systems.river.tui:RIVER",
        schema=schema, no_tui=no_tui, seconds=seconds, job_counts=q.job_counts,
        running="River workload (stand-in clients running River's SQL)",
        label="River demo, stand-in clients",
    )  # fmt: skip
