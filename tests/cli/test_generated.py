"""The committed completions and man page match the command tree, and work."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def need(tool: str) -> None:
    """Skip without ``tool`` on a developer's machine; in CI (``QCTL_REQUIRE_PG=1``, where
    ``.ci/run`` installs it) a missing tool fails instead of skipping silently."""
    if shutil.which(tool) is not None:
        return
    if os.environ.get("QCTL_REQUIRE_PG") == "1":
        pytest.fail(f"{tool} not installed (.ci/run installs it)")
    pytest.skip(f"{tool} not installed")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "generate_docs", ROOT / "scripts" / "generate_docs.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["generate_docs"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_current() -> None:
    stale = _generator().stale()
    assert not stale, f"stale generated files (run `make generate`): {stale}"


def with_qctl(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this one) where ``qctl`` runs this checkout's, as the scripts
    ask it for what only the database knows."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def bash_complete(words: list[str], env: dict[str, str] | None = None) -> list[str]:
    """What bash offers for the last of ``words`` (the one being typed)."""
    need("bash")
    line = " ".join(words)
    script = (
        f"source {ROOT / 'completions' / 'qctl.bash'}; "
        f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}; "
        f"COMP_LINE={shlex.quote(line)}; COMP_POINT={len(line)}; "
        '_qctl; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    out = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, check=True, env=with_qctl(env)
    )
    assert out.stderr == ""
    return out.stdout.split()


def test_bash_completion() -> None:
    need("bash")
    assert "jobs" in bash_complete(["qctl", ""]) and "job" not in bash_complete(["qctl", ""])
    assert bash_complete(["qctl", "jobs", "re"]) == ["retry", "resume"]
    assert "dead" in bash_complete(["qctl", "--dsn", "x", "jobs", "list", "--state", ""])
    assert bash_complete(["qctl", "jobs", "list", "-o", "js"]) == ["json", "jsonl"]
    assert "--all-dead" in bash_complete(["qctl", "jobs", "retry", "--"])


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shells_parse(shell: str) -> None:
    need(shell)
    path = ROOT / "completions" / f"qctl.{shell}"
    subprocess.run([shell, "-n", str(path)], check=True)


def test_man_page_renders() -> None:
    need("groff")
    page = ROOT / "man" / "qctl.1"
    out = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", str(page)], capture_output=True, text=True, check=True
    )
    assert out.stderr == "" and out.stdout.strip()
    source = page.read_text()
    for section in ("EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "COMMANDS"):
        assert f".SH {section}" in source
    assert ".SS qctl jobs retry" in source
    # Examples in verb help stay one command per line (click's \b paragraphs).
    assert ".nf\nExample:\n  qctl jobs retry \\-\\-kind email.send" in source
    assert "\b" not in source


def test_help_has_no_restructuredtext_markup() -> None:
    """Help is made from docstrings: their ``literals`` show as `literals`."""
    for path in [ROOT / "man" / "qctl.1", *(ROOT / "completions").iterdir()]:
        assert "``" not in path.read_text(), path


def test_root_help_lists_every_exit_code_qctl_chooses() -> None:
    """Every code but the signals' (130, 143: the shell's own convention)."""
    from qctl.core.exits import ExitCode

    text = " ".join((ROOT / "qctl" / "cli" / "help.txt").read_text().split())
    listed = text.split("Exit codes: ", 1)[1]
    assert [c for c in ExitCode if c < 128 and f"{c.value} " not in listed] == []


def test_readme_says_how_often_the_dbos_demo_polls() -> None:
    from qctl.systems.dbos.cli.demo import DEMO_POLL

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f'"polling every {DEMO_POLL:g}s" in `qctl demo --system dbos`' in readme


def test_check_mode_exit_code() -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_docs.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr


def test_zsh_registers_completion() -> None:
    need("zsh")
    path = ROOT / "completions" / "qctl.zsh"
    script = f"autoload -Uz compinit; compinit -u; source {path}; print -r -- $_comps[qctl]"
    out = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "_qctl"


def test_fish_completion() -> None:
    need("fish")
    path = ROOT / "completions" / "qctl.fish"
    script = f"source {path}; complete -C 'qctl jobs re'; complete -C 'qctl jobs list --state d'"
    out = subprocess.run(
        ["fish", "-c", script], capture_output=True, text=True, check=True, env=with_qctl()
    )
    words = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert words == ["resume", "retry", "dead"]
