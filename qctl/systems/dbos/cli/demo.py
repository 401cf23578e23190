"""``qctl demo --system dbos``: a DBOS application's workload, watched in ``qctl top``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl.cli import common
from qctl.systems.dbos import INSTALL_HINT, reads
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.cli.context import CliContext

DEMO_POLL = 1.0
"""Seconds between the demo dashboard's reads: its workload moves faster than a live
system's (``qctl top`` polls every 2 s)."""


def demo_database_url() -> str:
    """The DBOS demo's SQLite file, beside qctl's own demo database."""
    from qctl.core.paths import demo_database_path

    return f"sqlite:///{demo_database_path().with_name('dbos-demo.sqlite')}"


def demo(
    cli: CliContext,
    no_tui: bool,
    seconds: float | None,
    speed: float,
    reset: bool,
    yes: bool,
    seed: int | None = None,
) -> None:
    """``qctl demo --system dbos``: a real DBOS application (``demo_app.py``) works a mixed
    workload on a system database, watched in ``qctl top`` (or headless, then a summary
    of workflows by status). A ``--dsn`` database that already holds a system's tables
    (another application's workflows, an azync store) is confirmed first. ``seed`` seeds
    azync's workload only: the DBOS application's workload is its own."""
    import importlib.util
    import json
    import sys
    import time
    from pathlib import Path

    from qctl import systems
    from qctl.systems.dbos.app_process import AppProcess
    from qctl.systems.dbos.database import Database
    from qctl_kit.dsn import sqlite_path

    if importlib.util.find_spec("dbos") is None:
        raise InvalidInput(f"the DBOS demo needs the dbos package: {INSTALL_HINT}")
    url = cli.dsn or demo_database_url()
    if not cli.dsn:
        path = Path(sqlite_path(url))
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if reset:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
    elif not cli.is_postgres:
        url = f"sqlite:///{sqlite_path(url)}"
    if cli.dsn and (held := systems.holding(cli.dsn, cli.schema)):
        common.confirm(
            f"{cli.describe()} already holds {' and '.join(s.label for s in held)} tables: "
            "run a DBOS demo application on it?",
            yes,
        )
    try:
        # DBOS creates its tables in the schema qctl then reads (--schema), not in "dbos".
        schema = ["--schema", cli.schema] if cli.is_postgres and cli.schema else []
        app = AppProcess(url, "--workload", f"{2.0 * speed:g}", *schema)
    except RuntimeError as exc:
        raise InvalidInput(str(exc)) from None
    try:
        db = Database(
            url,
            cli.schema,
            statement_timeout=cli.session_statement_timeout,
            lock_timeout=cli.session_lock_timeout,
        )
        where = cli.demo_where(url, "dbos", db.schema if cli.is_postgres else "")
        try:
            tables = db.schema if cli.is_postgres else ""  # where DBOS made them
            if no_tui:
                sys.stderr.write(f"qctl demo: DBOS application on {db.location} for {seconds:g}s\n")
                time.sleep(seconds or 60.0)
                json.dump(reads.status_counts(db).counts, sys.stdout, indent=2, sort_keys=True)
                sys.stdout.write("\n")
                common.say_demo_reading(url, "dbos", tables, "workflows")
            else:
                from qctl.systems.dbos.tui import DBOS
                from qctl.tui.app import run

                common.say_demo_reading(url, "dbos", tables, "workflows")
                run(
                    db,
                    system=DBOS,
                    location=f"{db.location} (DBOS demo)",
                    poll_interval=DEMO_POLL,
                    audit_where=where,
                )
        finally:
            db.close()
    finally:
        app.stop()
