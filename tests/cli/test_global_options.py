"""Root options anywhere on the line, as kubectl and the Temporal CLI take them: before
the group, between group and verb, after the verb, mixed; ``-o`` before the command
too. Every group, both backends. The embedded default database is made unusable, so a
command that ignored ``--dsn`` would fail; ``--read-only`` is checked by a write that
must be refused in every position, ``--schema`` by ``db status``. ``watch``, ``top`` and
``demo`` run until stopped: their change stream ends at once and their dashboard is
replaced by one that records what it was started on, so each returns after parsing the
line and opening the database it names."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app, arrange
from qctl_kit.streams import Subscription
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import JobSearch
from tests.cli.conftest import enqueue

Check = Callable[[Any], object]

# One read-only invocation per group (the verb and its own arguments), checked on its
# JSON. watch, top and demo (LONG_RUNNING) take no -o.
GROUPS: list[tuple[list[str], list[str]]] = [
    (["db", "status"], []),
    (["jobs", "list"], ["--kind", "KIND"]),
    (["dags", "list"], []),
    (["events", "list"], []),
    (["subscribers", "list"], []),
    (["queues", "list"], []),
    (["workflows", "list"], []),
    (["vacuum", "completed"], ["--retention", "1d", "--dry-run"]),
    (["replay"], ["--dry-run"]),
    (["nuke"], ["--source", "queue", "--dry-run"]),
]


def positions(
    command: list[str], own: list[str], root: list[str], out: tuple[str, ...] = ("-o", "json")
) -> dict[str, list[str]]:
    group, verb = command[0], command[1:]
    return {
        "before": [*root, *out, *command, *own],
        "between": [group, *root, *out, *verb, *own],
        "after": [*command, *own, *root, *out],
        "mixed": [root[0], root[1], group, *out, *verb, *root[2:], *own],
    }


@pytest.fixture
def no_embedded_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded default database cannot be opened: its directory is a file."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocker))


def stable(value: Any) -> Any:
    """The output without what moves between two calls (ages, like the oldest pending)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if "age" not in k}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(app, args)


@pytest.mark.usefixtures("no_embedded_default")
@pytest.mark.parametrize(("command", "own"), GROUPS, ids=[" ".join(c) for c, _ in GROUPS])
def test_root_options_work_in_every_position(
    db_args: list[str], st: Any, kind: str, command: list[str], own: list[str]
) -> None:
    enqueue(st, kind)
    own = [kind if a == "KIND" else a for a in own]
    root = [*db_args, "--read-only"]
    results = {}
    for where, args in positions(command, own, root).items():
        result = invoke(args)
        assert result.exit_code == 0, (where, args, result.stderr)
        results[where] = stable(json.loads(result.stdout))
    first = next(iter(results.values()))
    assert all(r == first for r in results.values()), "every position means the same"
    if command == ["jobs", "list"]:
        assert [r["kind"] for r in first] == [kind], "the --dsn database was listed"
    if command == ["db", "status"] and st.backend == "postgres":
        assert first["schema"] == db_args[db_args.index("--schema") + 1]


@pytest.mark.usefixtures("no_embedded_default")
def test_read_only_anywhere_refuses_a_write(db_args: list[str], st: Any, kind: str) -> None:
    root = [*db_args, "--read-only"]
    for where, args in positions(["jobs", "enqueue"], [kind], root).items():
        result = invoke(args)
        assert result.exit_code == 4, (where, result.stdout, result.stderr)
        assert "read-only" in result.stderr
    assert st.search_jobs(JobSearch(kind=kind)) == []


def test_equals_forms_and_the_end_of_options() -> None:
    assert arrange(["jobs", "list", "--dsn=D", "-ojson", "--schema", "s"]) == [
        "--dsn=D",
        "--schema",
        "s",
        "jobs",
        "list",
        "-ojson",
    ]
    # After "--" nothing is an option; in `context` the verb's own --dsn is left to it.
    assert arrange(["jobs", "list", "--", "--dsn", "x"]) == ["jobs", "list", "--", "--dsn", "x"]
    assert arrange(["context", "add", "c", "--dsn"]) == ["context", "add", "c", "--dsn"]


@pytest.mark.parametrize("option", ["--dsn", "--schema", "--context", "--system"])
@pytest.mark.parametrize("before", [["jobs", "list"], ["db", "status"], ["jobs"], []])
def test_a_root_option_ending_the_line_needs_a_value(option: str, before: list[str]) -> None:
    result = invoke([*before, option])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"qctl: error: {option} needs a value"]


LONG_RUNNING: list[tuple[list[str], list[str]]] = [
    (["watch"], ["--entity", "job"]),
    (["top"], ["--refresh", "5"]),
    (["demo"], ["--speed", "2", "--yes"]),  # the module's database holds jobs: demo asks
]


@pytest.fixture
def stopped_at_once(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``watch``'s change stream is closed from the start (as when the connection
    drops); ``top``'s and ``demo``'s dashboard records how it was started and quits.
    Returns those records."""

    def closed(self: Any) -> Subscription[Any]:
        stream: Subscription[Any] = Subscription(1)
        stream.close()
        return stream

    for cls in (PostgresStore, SqliteStore):
        monkeypatch.setattr(cls, "changes", closed)
    started: list[dict[str, Any]] = []

    def dashboard(store: Any, **options: Any) -> int:
        started.append({"backend": store.backend, **options})
        return 0

    monkeypatch.setattr("qctl.tui.app.run", dashboard)
    return started


@pytest.mark.usefixtures("no_embedded_default")
@pytest.mark.parametrize(("command", "own"), LONG_RUNNING, ids=[c[0] for c, _ in LONG_RUNNING])
def test_root_options_of_long_running_commands_in_every_position(
    db_args: list[str],
    st: Any,
    command: list[str],
    own: list[str],
    stopped_at_once: list[dict[str, Any]],
) -> None:
    # demo writes, so it runs without --read-only (its refusal is the write test's).
    root = db_args if command == ["demo"] else [*db_args, "--read-only"]
    lines = set()
    for place, args in positions(command, own, root, out=()).items():
        result = invoke(args)
        assert result.exit_code == 0, (place, args, result.stderr)
        if command == ["watch"]:
            lines.add(result.stderr.strip())
    if command == ["watch"]:
        # One line for every position: the database of --dsn (and --schema), read-only.
        (line,) = lines
        assert line.startswith("watching ") and line.endswith("[read-only] (Ctrl-C to stop)")
        assert db_args[1].split("?")[0] in line
    else:
        assert len(stopped_at_once) == 4
        assert all(s["backend"] == st.backend for s in stopped_at_once)
        locations = {s["location"] for s in stopped_at_once}
        assert len(locations) == 1 and db_args[1] in locations.pop()
        if command == ["top"]:
            assert all(s["read_only"] and s["poll_interval"] == 5 for s in stopped_at_once)


def test_a_mistyped_group_gets_a_suggestion() -> None:
    result = invoke(["jbos", "list"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "qctl: error: No such command 'jbos'. Did you mean 'jobs'? (see 'qctl --help')"
    ]
    assert "Did you mean 'dag'?" in invoke(["dga", "list"]).stderr  # the singular aliases too
    assert "Did you mean" not in invoke(["zzzz"]).stderr


def test_help_with_root_options_after_the_group() -> None:
    result = invoke(["jobs", "--dsn", f"sqlite:///{uuid.uuid4().hex}.db", "--help"])
    assert result.exit_code == 0 and "Usage: qctl jobs" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["db", "migrate"], ["db", "status"], ["jobs", "enqueue", "yes.kind"], ["queues", "list"]],
)
def test_every_verb_takes_yes(args: list[str], tmp_path: Path) -> None:
    """Scripts pass ``--yes`` to every verb alike: one that never asks ignores it (it is
    hidden from its help)."""
    dsn = ["--dsn", f"sqlite:///{tmp_path / 'yes.db'}"]
    CliRunner().invoke(app, [*dsn, "db", "migrate"])
    for flag in ("--yes", "-y"):
        result = CliRunner().invoke(app, [*dsn, *args, flag])
        assert result.exit_code == 0, result.output
    assert "--yes" not in CliRunner().invoke(app, [*dsn, *args, "--help"]).stdout


def test_version_prints_qctl_s_version_without_a_database() -> None:
    from qctl import __version__

    unreachable = ["--dsn", "postgresql://qctl@127.0.0.1:1/none?connect_timeout=1"]
    for args in (["version"], ["--version"]):
        result = CliRunner().invoke(app, [*unreachable, *args])
        assert (result.exit_code, result.stdout) == (0, f"qctl {__version__}\n")
