"""oban-py's environment (qctl/systems/oban/obanpy.py; the partner's is tests/oban/obanpy_env.py):
which interpreter it takes, when a built environment is reused, and what ``make harness``
and ``.ci/run`` say without one."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from qctl.systems.oban import obanpy
from tests.oban import obanpy_env


def fake_python(tmp_path: Path, version: str) -> str:
    """An executable that answers the version probe as Python ``version`` would."""
    path = tmp_path / f"python{version}"
    path.write_text(f"#!/bin/sh\necho {version.replace('.', ' ')}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_an_interpreter_older_than_3_12_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("QCTL_OBANPY_PYTHON", fake_python(tmp_path, "3.11"))
    monkeypatch.delenv("QCTL_REQUIRE_OBAN", raising=False)
    assert obanpy.interpreter() is None
    assert obanpy_env.main(["--check"]) == 1
    assert capsys.readouterr().err == f"tests/oban: {obanpy_env.MISSING}\n"
    assert obanpy_env.main([]) == 0  # make harness: nothing to build, no failure
    monkeypatch.setenv("QCTL_REQUIRE_OBAN", "1")
    assert obanpy_env.main([]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_a_built_environment_is_reused_only_while_it_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = fake_python(tmp_path, "3.12")
    monkeypatch.setenv("QCTL_OBANPY_PYTHON", python)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    monkeypatch.setattr(obanpy_env, "VENV", venv)
    assert obanpy_env.ready() is None  # no stamp: a build stopped part-way
    stamp = {"requirement": obanpy.REQUIREMENT, "interpreter": python}
    (venv / obanpy.STAMP).write_text(json.dumps(stamp))
    assert obanpy_env.ready() == venv / "bin" / "python"
    (venv / obanpy.STAMP).write_text(json.dumps({**stamp, "requirement": "oban==0.6.0"}))
    assert obanpy_env.ready() is None
    (tmp_path / "other").mkdir()
    other = fake_python(tmp_path / "other", "3.13")
    (venv / obanpy.STAMP).write_text(json.dumps({**stamp, "interpreter": other}))
    assert obanpy_env.ready() is None
