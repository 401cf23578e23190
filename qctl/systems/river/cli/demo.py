"""``qctl demo --system river``: a River workload, watched in ``qctl top``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from qctl.cli import common
from qctl.systems.river import riverclients
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "river_demo"
"""Where the demo creates River's tables when --schema names none."""
OWNED = "created by qctl demo --system river"
"""The comment the demo puts on a schema it creates: the one schema it may drop
(--reset), lead, write River's schema into and run River's own clients on."""
BUILD_TIMEOUT = 600.0
"""Seconds building River's clients (go build, its modules fetched) may take."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer and two River clients on River's schema (line main, version 8) in
    --schema (default ``river_demo``) of the --dsn PostgreSQL database, written there
    when the schema is absent or empty; watched in ``qctl top``, or headless for
    ``seconds`` then the demo's jobs per state.

    The clients are River's own (River v0.51.2, the Go program ``riverdemo`` built with
    the machine's ``go`` under ``$XDG_CACHE_HOME/qctl/`` on first use) on a schema the
    demo created; else, with one line saying why, stand-ins (Python running River's own
    SQL, labelled as such). A River schema the demo did not create is confirmed first,
    and the demo then inserts, fetches and settles only jobs of its own and leaves the
    leadership alone. ``reset`` drops the schema first, only one the demo created."""
    import sys

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
    program, why = river_program(place.owned)
    workload = standin.Workload(
        cli.dsn, schema, speed=speed, lead=place.owned, seed=seed, program=program
    )
    if program is not None:
        try:
            workload.start()
        except RuntimeError as exc:
            why = str(exc)
            workload = standin.Workload(cli.dsn, schema, speed=speed, lead=place.owned, seed=seed)
    if workload.program is None:
        sys.stderr.write(f"qctl demo: stand-in River clients: {why}\n")
        workload.start()
        running = "River workload (stand-in clients running River's SQL)"
        label, stopped = "River demo, stand-in clients", "a stand-in stopped"
    else:
        names = ", ".join(workload.client_names)
        running = f"River workload (River {riverclients.VERSION} clients {names})"
        label, stopped = "River demo, River's clients", "River's clients stopped"
    common.run_demo(
        cli, db, workload, where, system="river", screens="qctl.systems.river.tui:RIVER",
        schema=schema, no_tui=no_tui, seconds=seconds, job_counts=q.job_counts,
        running=running, label=label, stopped=stopped,
    )  # fmt: skip


def river_program(owned: bool) -> tuple[Path | None, str]:
    """River's clients (``riverdemo``), built on first use (one line says so), or None
    and why the demo runs stand-ins instead: River's clients run only on a schema the
    demo created (they work every job of their queues, and lead)."""
    import sys

    if not owned:
        return None, "the schema is not the demo's own, and River's clients would work every job"
    if riverclients.toolchain() is None:
        return None, riverclients.MISSING

    def announce(what: str) -> None:
        sys.stderr.write(
            f"qctl demo: building {what} (once; under a minute when Go's module cache holds"
            f" River, a few minutes otherwise; go build's output in {riverclients.LOG} there)\n"
        )

    where = riverclients.demo_dir()
    return common.demo_built(
        lambda: riverclients.build(where, timeout=BUILD_TIMEOUT, announce=announce),
        where / riverclients.LOG,
        "building River's clients failed",
    )
