"""``qctl demo --system hopper``: a hopper workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "hopper_demo"
"""Where the demo creates hopper's tables when --schema names none."""
OWNED = "created by qctl demo --system hopper"
"""The comment the demo puts on a schema it creates: the one schema it may drop (--reset),
lead and work without asking."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer, two stand-in workers and a stand-in leader (Python running hopper's
    own SQL, labelled as such: hopper's Go runtime does not ship with qctl) on hopper's
    schema version 8 in --schema (default ``hopper_demo``) of the --dsn PostgreSQL
    database, created there when absent; watched in ``qctl top``, or headless for
    ``seconds`` then the demo's jobs per state. A schema the demo did not create is
    confirmed first when it holds anything, and the demo then inserts, claims and
    finalizes only jobs of its own and leaves the leader lease alone. ``reset`` drops
    the schema first, only one the demo created."""

    from qctl.systems.hopper import reads, standin
    from qctl.systems.hopper.database import Database
    from qctl.systems.hopper.demo import Workload

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput("the hopper demo needs --dsn postgresql://... (hopper is PostgreSQL)")
    schema = cli.schema or DEMO_SCHEMA
    where = cli.demo_where(cli.dsn, "hopper", schema)
    q = reads.queries("demo.sql")
    with common.demo_connection(cli.dsn) as conn:
        place = common.demo_schema(
            conn, schema, mark=OWNED, table="hopper_jobs", label="hopper",
            scope="only on jobs it inserts", reset=reset, yes=yes,
        )  # fmt: skip
        if not place.holds:
            standin.install(conn, schema)
    db = Database(cli.dsn, schema)
    try:
        db.require_writable()  # hopper's schema at version 8, as the stand-in writes
    except Exception:
        db.close()
        raise
    workload = Workload(cli.dsn, schema, speed=speed, lead=place.owned, seed=seed)
    workload.start()
    common.run_demo(
        cli, db, workload, where, system="hopper", screens="qctl.systems.hopper.tui:HOPPER",
        schema=schema, no_tui=no_tui, seconds=seconds, job_counts=q.job_counts,
        running="hopper workload (stand-in workers running hopper's SQL)",
        label="hopper demo, stand-in workers",
    )  # fmt: skip
