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


def test_every_pausing_system_has_the_same_command() -> None:
    assert len(PAUSING) >= 2
    for verb in ("pause", "resume"):
        first = params(PAUSING[0], verb)
        assert ("--match",) in first and ("--plan",) in first and ("--dry-run",) in first
        for system in PAUSING[1:]:
            assert params(system, verb) == first, (system.name, verb)


@pytest.mark.parametrize("name", [s.name for s in systems() if not pauses(s)])
@pytest.mark.parametrize("verb", ["pause", "resume"])
def test_a_system_that_cannot_pause_says_so(name: str, verb: str) -> None:
    done = CliRunner().invoke(app, ["--system", name, "queues", verb, "mail", "--yes"])
    assert done.exit_code == 2, done.output
    [line] = done.stderr.splitlines()
    assert f"queues {verb}: " in line and "cannot pause a queue" in line
    assert done.stdout == ""
