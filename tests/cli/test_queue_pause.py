"""``qctl queues pause|resume`` is one command on every system: where the system can
pause a queue, the verb engine's command with the same arguments and options on each;
where it cannot, a usage error (exit 2) saying so and what to do instead, nothing
written. The systems are read from the registry; each pausing system's rows are the
verb contract suite's (``tests/systems/test_verbs.py``)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems import System, load, systems


def pauses(system: System) -> bool:
    return bool(system.verbs) and any(v.title == "queues pause" for v in load(system.verbs))


def params(system: System, verb: str) -> list[tuple[str, ...]]:
    group = typer.main.get_command(load(f"{system.commands['queues'].module}:app"))
    command = group.commands[verb]  # type: ignore[attr-defined]
    return [tuple(p.opts) for p in command.params]


PAUSING = [s for s in systems() if pauses(s)]


NODE = [("--node",), ("--instance",)]
"""A system whose nodes answer one at a time (Oban) adds these two, and no other."""


def test_every_pausing_system_has_the_same_command() -> None:
    assert len(PAUSING) >= 2
    for verb in ("pause", "resume"):
        first = [p for p in params(PAUSING[0], verb) if p not in NODE]
        assert ("--match",) in first and ("--plan",) in first and ("--dry-run",) in first
        for system in PAUSING:
            own = params(system, verb)
            assert [p for p in own if p not in NODE] == first, (system.name, verb)
            assert sum(p in NODE for p in own) in (0, 2), (system.name, verb)


def test_an_instance_needs_its_node() -> None:
    done = CliRunner().invoke(
        app, ["--system", "oban", "queues", "pause", "mail", "--instance", "Oban", "--yes"]
    )
    assert done.exit_code == 2 and "--node" in done.stderr and done.stdout == ""


@pytest.mark.parametrize("name", [s.name for s in systems() if not pauses(s)])
@pytest.mark.parametrize("verb", ["pause", "resume"])
def test_a_system_that_cannot_pause_says_so(name: str, verb: str) -> None:
    done = CliRunner().invoke(app, ["--system", name, "queues", verb, "mail", "--yes"])
    assert done.exit_code == 2, done.output
    [line] = done.stderr.splitlines()
    assert f"queues {verb}: " in line and "cannot pause a queue" in line
    assert done.stdout == ""
