"""``qctl demo --system oban``: an Oban workload, watched in ``qctl top``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from qctl.cli import common
from qctl.systems.oban import obanpy
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_SCHEMA = "oban_demo"
"""Where the demo creates oban-py's tables when --schema names none."""
OWNED = "created by qctl demo --system oban"
"""The comment the demo puts on a schema it creates: the one schema it may drop (--reset),
lead without asking and run oban-py's own nodes on."""
BUILD_TIMEOUT = 600.0
"""Seconds each step of building oban-py's environment (venv, pip) may take."""


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """A producer of jobs and two Oban nodes on oban-py's schema in --schema (default
    ``oban_demo``) of the --dsn PostgreSQL database, created there when absent; watched
    in ``qctl top``, or headless for ``seconds`` then the demo's jobs per state.

    The nodes are oban-py's own (``oban`` 0.7.0 in its Python 3.12 environment under
    ``$XDG_CACHE_HOME/qctl/``, built on first use) on a schema the demo created; else,
    with one line saying why, stand-ins (Python running oban-py's own fetch, ack,
    producer and leader SQL, labelled as such) that answer Oban's signals (pause, resume,
    scale, pkill) as oban-py's producers do. A schema the demo did not create is
    confirmed first when it holds anything, and the demo then works only jobs of its own
    and takes no leadership. ``reset`` drops the schema first, only one the demo
    created."""
    import sys
    from importlib.resources import files

    from psycopg import sql

    from qctl.systems.oban import reads
    from qctl.systems.oban.database import Database
    from qctl.systems.oban.demo import Workload

    if not cli.dsn or not cli.is_postgres:
        raise InvalidInput("the Oban demo needs --dsn postgresql://... (Oban is PostgreSQL only)")
    schema = cli.schema or DEMO_SCHEMA
    where = cli.demo_where(cli.dsn, "oban", schema)
    q = reads.queries("demo.sql")
    with common.demo_connection(cli.dsn) as conn:
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
    python, why = obanpy_python(schema, place.owned)
    workload = Workload(
        cli.dsn, schema, speed=speed, lead=place.owned, seed=seed,
        python=python, logs=obanpy.demo_venv(),
    )  # fmt: skip
    if python is not None:
        try:
            workload.start()
        except RuntimeError as exc:
            why = str(exc)
            workload = Workload(cli.dsn, schema, speed=speed, lead=place.owned, seed=seed)
    if workload.python is None:
        sys.stderr.write(f"qctl demo: stand-in Oban nodes: {why}\n")
        workload.start()
        running = "Oban workload (stand-in nodes running oban-py's SQL)"
        label, stopped = "Oban demo, stand-in nodes", "a stand-in stopped"
    else:
        names = ", ".join(workload.node_names)
        running = f"Oban workload (oban-py {obanpy.VERSION} nodes {names})"
        label, stopped = "Oban demo, oban-py nodes", "an oban-py node stopped"
    common.run_demo(
        cli, db, workload, where, system="oban", screens="qctl.systems.oban.tui:OBAN",
        schema=schema, no_tui=no_tui, seconds=seconds, job_counts=q.job_counts,
        running=running, label=label, stopped=stopped,
    )  # fmt: skip


def obanpy_python(schema: str, owned: bool) -> tuple[Path | None, str]:
    """The Python of oban-py's environment for the demo's real nodes, built on first use
    (one line says so), or None and why the demo runs stand-ins instead: real nodes run
    only on a schema the demo created (they work every job of their queues, and lead)."""
    import re
    import sys

    if not owned:
        return None, (
            f"schema {schema} is not the demo's own, and oban-py's nodes would work every"
            " job of its queues"
        )
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", schema):
        return None, f"oban-py writes its prefix unquoted, and {schema!r} is no plain name"
    if obanpy.interpreter() is None:
        return None, obanpy.MISSING

    def announce(what: str) -> None:
        sys.stderr.write(
            f"qctl demo: building {what} (once; about half a minute, pip's output in"
            f" {obanpy.LOG} there)\n"
        )

    venv = obanpy.demo_venv()
    return common.demo_built(
        lambda: obanpy.build(venv, timeout=BUILD_TIMEOUT, announce=announce),
        venv / obanpy.LOG,
        "building oban-py's environment failed",
    )
