"""Import hygiene: help and plain commands load neither textual nor psycopg_pool (and
help does not even load the store); nothing of DBOS (nor SQLAlchemy, which it brings)
is imported until a DBOS database is written to. A command's own work runs with the
garbage collector that start-up paused (``qctl.startup``) back on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PROBE = """
import gc, json, runpy, sys
sys.argv = ["qctl", *json.loads(sys.argv[1])]
try:
    runpy.run_module("qctl", run_name="__main__")
except SystemExit as exc:
    code = exc.code
heavy = sorted(
    {m.split(".")[0] for m in sys.modules}
    & {"textual", "psycopg_pool", "qctl_store", "dbos", "sqlalchemy", "tabulate"}
)
ops = sorted(m for m in sys.modules if m.startswith("qctl.systems.azync.ops."))
print(json.dumps({"code": code, "heavy": heavy, "ops": ops, "gc": gc.isenabled()}), file=sys.stderr)
"""


def probe(args: list[str], tmp_path: Path) -> dict[str, object]:
    env = {"XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin"}
    res = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    result: dict[str, object] = json.loads(res.stderr.strip().splitlines()[-1])
    return result


def imports(args: list[str], tmp_path: Path) -> dict[str, object]:
    """The exit code and the heavy packages ``qctl ARGS`` imported."""
    result = probe(args, tmp_path)
    return {"code": result["code"], "heavy": result["heavy"]}


def test_help_loads_nothing_heavy(tmp_path: Path) -> None:
    assert imports(["--help"], tmp_path) == {"code": 0, "heavy": []}


@pytest.mark.parametrize("args", [["jobs", "list"], ["queues", "list"], ["jobs", "--help"]])
def test_plain_commands_skip_textual_and_pool(args: list[str], tmp_path: Path) -> None:
    db = tmp_path / "q.db"
    for setup in (["db", "migrate"], ["jobs", "enqueue", "mail.send"]):
        assert probe(["--dsn", f"sqlite:///{db}", *setup], tmp_path)["code"] == 0
    result = probe(["--dsn", f"sqlite:///{db}", *args], tmp_path)
    assert result["code"] == 0
    heavy = result["heavy"]
    assert isinstance(heavy, list) and "textual" not in heavy and "psycopg_pool" not in heavy
    assert "dbos" not in heavy and "sqlalchemy" not in heavy
    assert "tabulate" not in heavy  # a test dependency only: qctl lays tables out itself
    assert result["gc"] is True
    if args[-1] == "list":  # a read: the operations layer is for the verbs that act
        assert result["ops"] == []


def test_postgres_command_skips_pool(tmp_path: Path, pg_schema: str) -> None:
    from tests.conftest import PG_DSN

    result = probe(["--dsn", PG_DSN, "--schema", pg_schema, "db", "status"], tmp_path)
    heavy = result["heavy"]
    assert isinstance(heavy, list) and "psycopg_pool" not in heavy and "textual" not in heavy


def test_dbos_reads_skip_dbos(tmp_path: Path) -> None:
    """Reading a DBOS system database is qctl's own SQL over the toolkit: DBOS (and
    SQLAlchemy) load only for an action, through DBOSClient, and azync's store never."""
    from tests.dbos.fixtures import make_sqlite_system_db

    db = make_sqlite_system_db(tmp_path / "dbos.sqlite")
    for args in (["workflows", "list"], ["queues", "list"], ["db", "status"], ["--help"]):
        result = imports(["--dsn", f"sqlite:///{db}", *args], tmp_path)
        assert result == {"code": 0, "heavy": []}, (args, result)


def test_the_operations_layer_imports_no_front_end_nor_driver() -> None:
    """qctl.systems.azync.ops is imported on every write: no typer, textual or Rich, no database
    driver (the store it is handed brings its own)."""
    code = (
        "import json, pkgutil, importlib, sys, qctl.systems.azync.ops\n"
        "for m in pkgutil.iter_modules(qctl.systems.azync.ops.__path__):\n"
        "    importlib.import_module(f'qctl.systems.azync.ops.{m.name}')\n"
        "heavy = {'typer', 'click', 'textual', 'rich', 'psycopg', 'psycopg_pool', 'dbos',"
        " 'sqlalchemy', 'sqlite3'}\n"
        "print(json.dumps(sorted({n.split('.')[0] for n in sys.modules} & heavy)))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == []


BOTH_WAYS = """
import json, sys
via, out, sys.argv = sys.argv[1], sys.argv[2], ["qctl", *json.loads(sys.argv[3])]
try:
    if via == "launch":
        from qctl.cli.launch import run
        run()
    else:
        from qctl.cli.main import app
        app()
except SystemExit as exc:
    with open(out, "w") as f:
        json.dump([exc.code, "typer" in sys.modules], f)
"""


def both_ways(
    args: list[str], tmp_path: Path, **env: str
) -> list[tuple[subprocess.CompletedProcess[str], list[Any]]]:
    """``qctl ARGS`` through the console script (``qctl.cli.launch``) and through the
    command tree (``qctl.cli.main``): each run's output, and its exit code and whether
    it imported Typer."""
    base = {"XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin"}
    runs = []
    for via in ("launch", "main"):
        out = tmp_path / f"{via}.json"
        res = subprocess.run(
            [sys.executable, "-c", BOTH_WAYS, via, str(out), json.dumps(args)],
            capture_output=True,
            text=True,
            env={**base, **env},
            timeout=120,
        )
        runs.append((res, json.loads(out.read_text())))
    return runs


def test_the_dashboard_line_skips_typer_and_fails_alike(tmp_path: Path) -> None:
    """``qctl top`` starts without Typer (``qctl.cli.launch``), and a failure reads as it
    does through the command tree: same line, same code."""
    args = ["top", "--dsn", f"sqlite:///{tmp_path / 'none.db'}", "--refresh", "1"]
    (launched, how), (tree, tree_how) = both_ways(args, tmp_path)
    assert how == [tree_how[0], False]
    assert launched.stderr == tree.stderr
    assert launched.stderr.startswith("qctl: error: ")


@pytest.mark.parametrize(
    ("args", "columns"), [(["--help"], "80"), (["-h"], "200"), (["--help"], "79")]
)
def test_the_root_help_skips_typer_where_it_writes_typer_s_text(
    args: list[str], columns: str, tmp_path: Path
) -> None:
    """``qctl --help`` prints the generated help without Typer at 80 columns or more (click
    wraps at 80 there, so Typer's text is the same), byte for byte what the command tree
    writes; narrower, Typer writes it."""
    (launched, how), (tree, tree_how) = both_ways(args, tmp_path, COLUMNS=columns)
    assert launched.stdout == tree.stdout and launched.stdout.startswith("Usage: qctl ")
    assert how == [0, columns == "79"]
    assert tree_how == [0, True]


@pytest.mark.parametrize(
    "args", [["--help"], ["jobs", "list"], ["jobs", "list", "-o", "jsonl"], ["jobs", "--help"]]
)
def test_a_reader_that_went_away_ends_qctl_quietly_with_0(args: list[str], tmp_path: Path) -> None:
    """``qctl jobs list | head``: once the reader has what it wanted and closes the pipe,
    qctl stops without a message and exits 0 (a ``set -o pipefail`` script goes on)."""
    import os

    env = {"XDG_DATA_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin"}
    qctl = [sys.executable, "-m", "qctl"]
    subprocess.run([*qctl, "db", "migrate"], env=env, check=True, capture_output=True)
    for n in range(3):
        subprocess.run(
            [*qctl, "jobs", "enqueue", f"k{n}"], env=env, check=True, capture_output=True
        )
    read, write = os.pipe()
    os.close(read)  # the reader is gone before qctl writes a byte
    try:
        done = subprocess.run(
            [*qctl, *args], env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=60
        )
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr and "Traceback" not in done.stderr
