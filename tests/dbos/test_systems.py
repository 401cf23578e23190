"""Which system a database holds, ``--system``, and DBOS schema versions."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.systems import detect
from tests.conftest import require_pg
from tests.dbos.fixtures import make_sqlite_system_db, migrate, pg_database


def qctl(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def dbos_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_sqlite_system_db(tmp_path_factory.mktemp("sys") / "dbos.sqlite")


def test_sqlite_detection(dbos_file: Path, tmp_path: Path) -> None:
    assert detect(f"sqlite:///{dbos_file}").name == "dbos"
    azync = tmp_path / "azync.db"
    assert qctl("--dsn", f"sqlite:///{azync}", "db", "migrate").exit_code == 0
    assert detect(f"sqlite:///{azync}").name == "azync"
    assert detect(f"sqlite:///{tmp_path / 'missing.db'}").name == "azync"
    assert not (tmp_path / "missing.db").exists()  # detection never creates a file
    assert detect(None).name == "azync"

    both = tmp_path / "both.db"
    shutil.copy(dbos_file, both)
    assert qctl("--dsn", f"sqlite:///{both}", "--system", "azync", "db", "migrate").exit_code == 0
    ambiguous = qctl("--dsn", f"sqlite:///{both}", "workflows", "list")
    assert ambiguous.exit_code == 2
    assert "holds both azync and DBOS tables: pass --system azync|dbos" in ambiguous.output
    dbos_list = qctl(
        "--dsn", f"sqlite:///{both}", "--system", "dbos", "workflows", "list", "-o", "json"
    )
    assert dbos_list.exit_code == 0 and dbos_list.stdout.strip() == "[]"
    azync_list = qctl(
        "--dsn", f"sqlite:///{both}", "--system", "azync", "jobs", "list", "-o", "json"
    )
    assert azync_list.exit_code == 0
    assert qctl("--dsn", f"sqlite:///{both}", "--system", "nosuch", "jobs", "list").exit_code == 2


def test_nouns_a_system_lacks(dbos_file: Path, tmp_path: Path) -> None:
    dsn = f"sqlite:///{dbos_file}"
    for noun, hint in [
        ("jobs", "DBOS databases have no jobs; see `qctl workflows`"),
        ("dags", "DBOS databases have no dags; see `qctl workflows`"),
        ("nuke", "DBOS databases have no nuke; see `qctl vacuum workflows`"),
    ]:
        result = qctl("--dsn", dsn, noun, "list")
        assert result.exit_code == 2 and hint in result.output, result.output
    azync = tmp_path / "a.db"
    qctl("--dsn", f"sqlite:///{azync}", "db", "migrate")
    result = qctl("--dsn", f"sqlite:///{azync}", "schedules", "list")
    assert result.exit_code == 2 and "azync databases have no schedules" in result.output
    # The singular alias of a DBOS-only noun works on DBOS.
    assert qctl("--dsn", dsn, "schedule", "list").exit_code == 0


def test_help_never_needs_the_database(dbos_file: Path, tmp_path: Path) -> None:
    # On a database that answers, help is its system's; on one that does not, or for a
    # noun its system lacks, the first system's with the noun. Help never fails.
    dbos = qctl("--dsn", f"sqlite:///{dbos_file}", "workflows", "--help")
    assert dbos.exit_code == 0 and "rewind" in dbos.stdout
    azync = qctl("--dsn", f"sqlite:///{tmp_path / 'none.db'}", "workflows", "--help")
    assert azync.exit_code == 0 and "rewind" not in azync.stdout
    lacking = qctl("--dsn", f"sqlite:///{tmp_path / 'none.db'}", "schedules", "--help")
    assert lacking.exit_code == 0 and "DBOS schedules" in lacking.stdout
    down = "postgresql://postgres@127.0.0.1:1/none?connect_timeout=1"
    for args in (["jobs", "--help"], ["--help-me"], ["jobs", "list", "--", "--help"]):
        result = qctl("--dsn", down, *args)
        assert (result.exit_code == 0) == (args[-1] == "--help" and "--" not in args), args
    assert qctl("--dsn", down, "jobs", "list", "--help").stdout.startswith("Usage: qctl jobs list")


def test_context_names_the_system(
    dbos_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config" / "qctl"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        f'[contexts.pay]\ndsn = "sqlite:///{dbos_file}"\nsystem = "dbos"\n'
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    result = qctl("--context", "pay", "db", "status", "-o", "json")
    assert result.exit_code == 0 and '"system": "dbos"' in result.stdout


@pytest.mark.parametrize(("version", "word"), [(99, "older"), (126, "newer")])
def test_unknown_versions_are_refused(
    dbos_file: Path, tmp_path: Path, version: int, word: str
) -> None:
    copy = tmp_path / "v.sqlite"
    shutil.copy(dbos_file, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute("UPDATE dbos_migrations SET version = ?", (version,))
    result = qctl("--dsn", f"sqlite:///{copy}", "workflows", "list")
    assert result.exit_code == 5
    assert (
        f"migration version {version} is {word} than this qctl supports (114 to 125"
        in result.output
    )
    with sqlite3.connect(copy) as conn:  # never migrated
        assert conn.execute("SELECT version FROM dbos_migrations").fetchone() == (version,)


def test_postgres_detection_and_schema() -> None:
    require_pg()
    with pg_database() as url:
        assert detect(url).name == "azync"  # empty: qctl's own default
        migrate(url)
        assert detect(url).name == "dbos"
        assert qctl("--dsn", url, "db", "status", "-o", "json").exit_code == 0
        assert qctl("--dsn", url, "--system", "azync", "db", "migrate").exit_code == 0
        result = qctl("--dsn", url, "queues", "list")
        assert result.exit_code == 2 and "holds both" in result.output
        assert qctl("--dsn", url, "--system", "dbos", "queues", "list").exit_code == 0
    with pg_database() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA ops")
        import subprocess

        from tests.dbos.fixtures import DBOS_CLI

        subprocess.run(
            [str(DBOS_CLI), "migrate", "--sys-db-url", url, "--schema", "ops"],
            check=True,
            capture_output=True,
        )
        assert detect(url).name == "azync"  # nothing in the default schema "dbos"
        assert detect(url, "ops").name == "dbos"
        status = qctl("--dsn", url, "--schema", "ops", "db", "status", "-o", "json")
        assert status.exit_code == 0 and '"schema": "ops"' in status.stdout


def test_dbos_demo_runs_a_dbos_application(tmp_path: Path) -> None:
    """``qctl demo --system dbos --no-tui``: the DBOS application works its mix on the
    demo's own SQLite file, and the summary counts what it ran."""
    import json
    import os
    import subprocess
    import sys

    qctl_bin = Path(sys.executable).with_name("qctl")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    env.pop("QCTL_DSN", None)
    res = subprocess.run(
        [str(qctl_bin), "demo", "--system", "dbos", "--no-tui", "--duration", "4s", "--speed", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    counts = json.loads(res.stdout)
    assert counts.get("SUCCESS", 0) > 0
    demo_db = tmp_path / "qctl" / "dbos-demo.sqlite"
    assert detect(f"sqlite:///{demo_db}").name == "dbos"


def test_dbos_demo_on_a_database_holding_azync_asks_first(tmp_path: Path) -> None:
    """``--dsn`` of an azync store with ``--system dbos``: the DBOS application would add
    its tables beside azync's, so the demo asks (--yes off a terminal) and, refused,
    creates nothing."""
    import os
    import subprocess
    import sys

    db = tmp_path / "azync.db"
    assert qctl("--dsn", f"sqlite:///{db}", "db", "migrate").exit_code == 0
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    demo = ["demo", "--system", "dbos", "--no-tui", "--duration", "2s"]
    res = subprocess.run(
        [str(Path(sys.executable).with_name("qctl")), "--dsn", f"sqlite:///{db}", *demo],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert res.returncode == 4, res.stderr
    assert "already holds azync tables" in res.stderr and "pass --yes" in res.stderr
    assert detect(f"sqlite:///{db}").name == "azync"
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "workflow_status" not in tables


def test_success_count_of_a_table_never_analyzed_is_its_live_rows() -> None:
    """On PostgreSQL SUCCESS is the table's estimated size less the exact statuses; a
    table not analyzed yet has no size in its statistics (``reltuples`` -1), and its
    successes are not read as 0."""
    import time

    from qctl.systems.dbos import reads
    from qctl.systems.dbos.database import Database

    require_pg()
    with pg_database() as url:
        migrate(url)
        with psycopg.connect(url, autocommit=True) as conn:
            for i, status in enumerate(["SUCCESS"] * 5 + ["ERROR"]):
                conn.execute(
                    "INSERT INTO dbos.workflow_status (workflow_uuid, status, name)"
                    " VALUES (%s, %s, 'w')",
                    (f"wf-{i}", status),
                )
        db = Database(url)
        try:
            never_analyzed = db.one(
                "SELECT reltuples FROM pg_class WHERE oid = 'dbos.workflow_status'::regclass"
            )
            assert never_analyzed and never_analyzed["reltuples"] < 0
            deadline = time.monotonic() + 10  # the statistics are flushed within a second
            while (counts := reads.status_counts(db)).counts["SUCCESS"] != 5:
                assert time.monotonic() < deadline, counts
                time.sleep(0.2)
            assert counts.counts["ERROR"] == 1 and counts.estimated == ("SUCCESS",)
        finally:
            db.close()


def test_dbos_demo_on_postgres_uses_the_schema_given(tmp_path: Path) -> None:
    """``qctl --dsn PG --schema S demo --system dbos``: DBOS creates its tables in S (not
    in its default ``dbos``), where qctl then reads them."""
    import json
    import os
    import subprocess
    import sys

    require_pg()
    qctl_bin = Path(sys.executable).with_name("qctl")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    with pg_database() as url:
        demo = ["demo", "--system", "dbos", "--no-tui", "--duration", "4s", "--speed", "3"]
        res = subprocess.run(
            [str(qctl_bin), "--dsn", url, "--schema", "ops", *demo],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        assert sum(json.loads(res.stdout).values()) > 0
        assert detect(url, "ops").name == "dbos"
        assert detect(url).name == "azync"  # nothing was written to the schema "dbos"


def test_without_dbos_both_hints_name_this_checkouts_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The actions and the demo give one install hint (the README's), never
    `pip install 'qctl[dbos]'`, which fetches whatever the index calls qctl."""
    import importlib.util
    import sys

    from qctl.cli.context import CliContext
    from qctl.systems.dbos import INSTALL_HINT, actions
    from qctl.systems.dbos.cli.demo import demo
    from qctl.systems.dbos.database import SQLITE_SQL
    from qctl_kit.errors import InvalidInput
    from qctl_kit.sqlfile import Queries, load

    assert "pip install '.[dbos]'" in INSTALL_HINT
    monkeypatch.setitem(sys.modules, "dbos", None)  # `import dbos` raises ImportError
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "dbos" else find_spec(name)
    )

    class Reachable:
        def queries(self, filename: str) -> Queries:
            return load("qctl.systems.dbos.queries", filename, SQLITE_SQL)

        def execute(self, sql: str) -> None:
            """The read-only check ``client`` makes before importing DBOS."""

    with pytest.raises(InvalidInput) as action, actions.client(Reachable()):  # type: ignore[arg-type]
        pass
    assert str(action.value) == f"DBOS actions go through DBOS's client library: {INSTALL_HINT}"
    with pytest.raises(InvalidInput) as demo_error:
        demo(CliContext(), no_tui=True, seconds=1.0, speed=1.0, reset=False, yes=False)
    assert str(demo_error.value) == f"the DBOS demo needs the dbos package: {INSTALL_HINT}"
