"""``--reason`` on every write of every system: shown in the help of each verb that
writes, and recorded in the audit trail, which lists writes by when they started."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer._click.core import Command
from typer._click.types import FloatParamType, IntParamType, IntRange
from typer._types import TyperChoice
from typer.core import TyperGroup
from typer.testing import CliRunner

from qctl import systems
from qctl.cli.main import app, build
from qctl.core import audit
from qctl_store.types import DAGParams, DAGTask
from tests.cli.conftest import Run

LONG_RUNNING = {"watch", "top", "demo", "metrics"}
"""Reads that run until stopped: never invoked here."""
UNREACHABLE = "postgresql://nobody@127.0.0.1:1/none"
"""Where reads fail at once; a write is refused in read-only mode before any I/O."""
SAMPLES = {
    "DURATION": "1h",
    "INSTANT": "-1h",
    "KEY=VALUE": "k=v",
    "N": "1",
    "SECONDS": "1",
}


def verbs() -> Iterator[tuple[str, list[str], Command]]:
    """(system, command path, command) of every verb of every system."""

    def walk(command: Command, path: list[str]) -> Iterator[tuple[list[str], Command]]:
        if isinstance(command, TyperGroup):
            for name in command.list_commands(None):  # type: ignore[arg-type]
                sub = command.get_command(None, name)  # type: ignore[arg-type]
                assert sub is not None
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    for system in systems.systems():
        for noun, entry in system.commands.items():
            if noun not in LONG_RUNNING:
                for path, command in walk(build(noun, entry), [noun]):
                    yield system.name, path, command


def sample(param: Any) -> str:
    """A value the parameter's type accepts (what it means is not checked before a
    write's read-only refusal)."""
    if isinstance(param.type, TyperChoice):
        return str(param.type.choices[0])
    if isinstance(param.type, IntRange | IntParamType | FloatParamType):
        return str(param.type.min or 1) if isinstance(param.type, IntRange) else "1"
    return SAMPLES.get(str(param.metavar), "0123456789abcdef")


def line(command: Command) -> list[str]:
    """Its arguments and required options, with sample values."""
    args: list[str] = []
    for p in command.params:
        if p.param_type_name == "argument":
            args += [sample(p)] * (1 if p.nargs == 1 else 2)
        elif p.required:
            args += [p.opts[0]] + ([] if getattr(p, "is_flag", False) else [sample(p)])
    return args


def test_every_write_shows_reason() -> None:
    """A verb is a write when read-only mode refuses it before it reads anything; every
    such verb lists --reason in its help, and no read does."""
    writes, hidden = [], []
    for system, path, command in verbs():
        result = CliRunner().invoke(
            app, ["--read-only", "--system", system, "--dsn", UNREACHABLE, *path, *line(command)]
        )
        refused = result.exit_code == 4 and "read-only mode" in result.stderr
        [reason] = [p for p in command.params if "--reason" in getattr(p, "opts", [])]
        if refused:
            writes.append(f"{system} {' '.join(path)}")
            if reason.hidden:
                hidden.append(writes[-1])
    assert not hidden, f"writes whose help lacks --reason: {hidden}"
    named = {"azync dags signal", "azync workflows signal", "azync jobs enqueue"}
    named |= {"azync events publish", "azync subscribers register", "dbos workflows cancel"}
    assert named <= set(writes)


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "qctl" / "audit.jsonl"


def test_writes_that_neither_ask_nor_dry_run_record_their_reason(
    run: Run, st: Any, kind: str, log: Path
) -> None:
    run_params = DAGParams(name="d", tasks=[DAGTask(key="a", kind=kind, signal_name="go")])
    st.create_dag(run_params)
    dag = run_params.id
    writes = [
        ["jobs", "enqueue", kind],
        ["events", "publish", f"{kind}.happened"],
        ["subscribers", "register", f"{kind}.happened", kind],
        ["dags", "signal", str(dag), "go"],
        ["dags", "pause", str(dag)],  # its own --reason, shown on the run
    ]
    for n, args in enumerate(writes):
        result = run(*args, "--reason", f"INC-{n}")
        assert result.exit_code == 0, result.output
    assert [(e["verb"], e["reason"]) for e in map(json.loads, log.read_text().splitlines())] == [
        (" ".join(args[:2]), f"INC-{n}") for n, args in enumerate(writes)
    ]
    assert st.get_dag(dag).failure_reason == "INC-4"


def test_audit_lists_writes_by_when_they_started(log: Path, run: Run) -> None:
    """A long write's line is appended when it ends, after the lines of writes that
    started later: the trail lists it by its start."""
    where = audit.where("azync", None, "sqlite:///q.db", "", None)
    for verb, started in [
        ("jobs retry", "2026-01-01T00:00:02.000000Z"),
        ("maintain", "2026-01-01T00:00:00.000000Z"),  # ran for hours, written last
        ("jobs delete", "2026-01-01T00:00:03.000000Z"),
        ("dags cancel", "2026-01-01T00:00:01.000000Z"),
    ]:
        audit.append(audit.Entry("cli", verb, where, time=started), print)
    listed = json.loads(run("audit", "-o", "json").stdout)
    assert [e["verb"] for e in listed] == ["jobs delete", "jobs retry", "dags cancel", "maintain"]
    assert [e["verb"] for e in json.loads(run("audit", "-n", "1", "-o", "json").stdout)] == [
        "jobs delete"
    ]
