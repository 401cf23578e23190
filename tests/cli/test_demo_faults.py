"""Every system's demo on a PostgreSQL server that does not answer: one line naming the
server with its password redacted, exit 6 (unavailable), as every other command says it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.core.exits import ExitCode
from qctl.systems import systems

DOWN = "postgresql://qctl:s3cret@127.0.0.1:1/app"


@pytest.mark.parametrize("name", [s.name for s in systems() if s.demo])
def test_a_demo_on_an_unreachable_server_says_so_in_one_line(
    name: str, isolated_home: None
) -> None:
    result = CliRunner().invoke(
        app, ["--dsn", DOWN, "demo", "--system", name, "--no-tui", "--duration", "1s", "--yes"]
    )
    assert result.exit_code == ExitCode.UNAVAILABLE, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("qctl: error: PostgreSQL at postgresql://qctl:***@127.0.0.1:1/app ")
    assert "s3cret" not in result.output
