"""Completion of what only the config file or the database knows, through the committed
scripts (which ask ``qctl`` for it): contexts, systems, the states of the system the
database holds, kinds and ids from the database, root options after the verb; nothing
at all when the database does not answer."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from qctl.systems import systems
from qctl_store import EnqueueParams, open_store
from tests.cli.test_generated import ROOT, bash_complete, need, with_qctl
from tests.conftest import PG_DSN
from tests.hopper.conftest import install

AZYNC_STATES = ["pending", "scheduled", "active", "dead", "paused", "succeeded"]


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment with a config file of two contexts and an empty data home."""
    config = tmp_path / "config" / "qctl" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[contexts.prod]\ndsn = "x.db"\n\n[contexts.dev]\ndsn = "y.db"\n')
    config.chmod(0o600)
    env = {**os.environ, "XDG_CONFIG_HOME": str(config.parent.parent)}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    for name in ("QCTL_DSN", "QCTL_CONTEXT", "QCTL_SYSTEM"):
        env.pop(name, None)
    return env


@pytest.fixture
def azync_db(tmp_path: Path) -> Iterator[str]:
    """An azync SQLite database holding jobs of two kinds."""
    dsn = f"sqlite:///{tmp_path / 'q.db'}"
    with open_store(dsn) as store:
        store.migrate()
        for kind in ("email.send", "report.build"):
            store.enqueue(EnqueueParams(kind=kind, id=uuid.UUID(int=len(kind))))
    yield dsn


def test_contexts_and_systems(home: dict[str, str]) -> None:
    assert bash_complete(["qctl", "--context", ""], home) == ["dev", "prod"]
    assert bash_complete(["qctl", "jobs", "list", "--context", "p"], home) == ["prod"]
    assert bash_complete(["qctl", "context", "use", ""], home) == ["dev", "prod"]
    assert bash_complete(["qctl", "--system", ""], home) == [s.name for s in systems()]
    assert bash_complete(["qctl", "context", "add", "x", "--system", "d"], home) == [
        "dbos",
        "dispatch",
    ]


def test_root_options_after_the_verb(home: dict[str, str]) -> None:
    assert "--dsn" in bash_complete(["qctl", "jobs", "list", "--d"], home)
    assert "--wide" in bash_complete(["qctl", "jobs", "list", "--w"], home)
    assert bash_complete(["qctl", "context", "add", "x", "--w"], home) == []


def test_kinds_and_ids_from_the_database(home: dict[str, str], azync_db: str) -> None:
    assert bash_complete(["qctl", "--dsn", azync_db, "jobs", "list", "--kind", ""], home) == [
        "email.send",
        "report.build",
    ]
    # The DSN after the verb, and its colons (bash splits words there) whole.
    words = ["qctl", "jobs", "retry", "--dsn", azync_db, "-k", "r"]
    assert bash_complete(words, home) == ["report.build"]
    ids = bash_complete(["qctl", "--dsn", azync_db, "jobs", "show", "0000"], home)
    assert len(ids) == 2 and all(i.startswith("00000000-") for i in ids)


def test_states_of_the_detected_system(home: dict[str, str], pg_schema: str) -> None:
    install(pg_schema)
    words = ["qctl", "--dsn", PG_DSN, "--schema", pg_schema, "jobs", "list", "--state", "r"]
    assert bash_complete(words, home) == ["running", "retryable"]
    azync = bash_complete(["qctl", "--dsn", "x.db", "jobs", "list", "--state", ""], home)
    assert azync[: len(AZYNC_STATES)] == AZYNC_STATES
    assert not (Path(home["XDG_DATA_HOME"]) / "qctl").exists(), "completion creates nothing"


def test_nothing_when_the_database_does_not_answer(home: dict[str, str]) -> None:
    """Nothing offered and nothing printed (no error line in the middle of the prompt)."""
    line = "qctl --dsn postgresql://u:secret@127.0.0.1:1/db jobs list --kind "
    done = subprocess.run(
        [sys.executable, "-m", "qctl"],
        env={**home, "COMP_LINE": line, "_QCTL_COMPLETE": "complete"},
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_fish_asks_qctl(home: dict[str, str]) -> None:
    need("fish")
    script = f"source {ROOT / 'completions' / 'qctl.fish'}; complete -C 'qctl --context '"
    out = subprocess.run(
        ["fish", "-c", script], capture_output=True, text=True, check=True, env=with_qctl(home)
    )
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["dev", "prod"]
