"""Root options anywhere on the line, as kubectl and the Temporal CLI take them: before
the group, between group and verb, after the verb, mixed; ``-o`` before the command
too. Every group, both backends. The embedded default database is made unusable, so a
command that ignored ``--dsn`` would fail; ``--read-only`` is checked by a write that
must be refused in every position, ``--schema`` by ``db status``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app, arrange
from qctl_store.types import JobSearch
from tests.cli.conftest import enqueue

Check = Callable[[Any], object]

# One read-only invocation per group (the verb and its own arguments), checked on its
# JSON. watch, top and demo run until stopped and take no -o; they parse the same line.
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


def positions(command: list[str], own: list[str], root: list[str]) -> dict[str, list[str]]:
    out = ["-o", "json"]
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
    # After "--" nothing is an option; a root option without its value stays for click.
    assert arrange(["jobs", "list", "--", "--dsn", "x"]) == ["jobs", "list", "--", "--dsn", "x"]
    assert arrange(["jobs", "list", "--dsn"]) == ["jobs", "list", "--dsn"]


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
