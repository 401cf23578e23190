"""The real ``qctl`` executable in a pseudo-terminal: confirmation prompts and Ctrl-C."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pexpect
import pytest

from qctl_store.types import DequeueParams, EnqueueParams, JobSearch, JobState, Source
from tests.conftest import PG_DSN, StoreFactory

QCTL = str(Path(sys.executable).parent / "qctl")


@pytest.fixture(scope="module")
def root_args(module_db: tuple[str, str, Path]) -> list[str]:
    backend, schema, path = module_db
    if backend == "postgres":
        return ["--dsn", PG_DSN, "--schema", schema]
    return ["--dsn", f"sqlite:///{path}"]


def spawn(args: list[str], tmp_path: Path) -> pexpect.spawn:
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path),
        "NO_COLOR": "1",
    }
    return pexpect.spawn(QCTL, args, env=env, encoding="utf-8", timeout=60)


def finish(child: pexpect.spawn) -> tuple[int, str]:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus if child.exitstatus is not None else -child.signalstatus, child.before


def test_confirmation_no_then_yes(
    root_args: list[str], store_factory: StoreFactory, tmp_path: Path
) -> None:
    st: Any = store_factory()
    kind = f"pex_{uuid.uuid4().hex[:8]}"
    for _ in range(2):
        st.enqueue(EnqueueParams(kind=kind))
    for job in st.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=2)):
        st.dead(job.id, job.lease_token, "boom")
    args = [*root_args, "jobs", "retry", "--all-dead", "--kind", kind]

    child = spawn(args, tmp_path)
    child.expect(rf"Retry 2 azync jobs \(2 dead: {kind}\) on .*\? \[y/N\]: ")
    child.sendline("n")
    code, rest = finish(child)
    assert code == 4 and "declined" in rest and "Traceback" not in rest
    assert st.kind_depths(Source.QUEUE)[kind].dead == 2

    child = spawn(args, tmp_path)
    child.expect(r"\[y/N\]: ")
    child.sendline("y")
    code, rest = finish(child)
    assert code == 0 and "retried 2 azync jobs" in rest
    assert st.kind_depths(Source.QUEUE)[kind].dead == 0
    assert all(j.state == JobState.PENDING for j in st.search_jobs(JobSearch(kind=kind)))


def test_watch_exits_cleanly_on_ctrl_c(
    root_args: list[str], store_factory: StoreFactory, tmp_path: Path
) -> None:
    st: Any = store_factory()
    kind = f"pexw_{uuid.uuid4().hex[:8]}"
    child = spawn([*root_args, "watch"], tmp_path)
    child.expect("Ctrl-C to stop")
    child.expect('"entity": "reset"')
    st.enqueue(EnqueueParams(kind=kind))
    child.expect(f'"kind": "{kind}"')
    child.sendintr()
    code, rest = finish(child)
    assert code == 0
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest


def test_nuke_runs_only_once_the_name_is_typed(
    root_args: list[str],
    module_db: tuple[str, str, Path],
    store_factory: StoreFactory,
    tmp_path: Path,
) -> None:
    """In a real terminal: a wrong name typed at the nuke's question writes nothing (exit
    4); the name of the schema (the SQLite file's on SQLite) runs it."""
    st: Any = store_factory()
    backend, schema, path = module_db
    name = schema if backend == "postgres" else path.name
    kind = f"pexn_{uuid.uuid4().hex[:8]}"
    for _ in range(3):
        st.enqueue(EnqueueParams(kind=kind))

    def queued() -> int:
        return int(st.count_jobs(JobSearch(source=Source.QUEUE, kind=kind), exact=True)[0])

    child = spawn([*root_args, "nuke"], tmp_path)
    child.expect(r"NUKE every queue job \(\d+\), stats row and idempotency key on .*\?")
    child.expect(f"Type {name} to confirm: ")
    child.sendline(f"{name}_typo")
    code, rest = finish(child)
    assert code == 4 and "nothing was changed" in rest and "Traceback" not in rest
    assert queued() == 3

    child = spawn([*root_args, "nuke"], tmp_path)
    child.expect(f"Type {name} to confirm: ")
    child.sendline(name)
    code, rest = finish(child)
    assert code == 0 and "nuked queue in one transaction" in rest
    assert queued() == 0
