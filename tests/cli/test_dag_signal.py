"""``dags signal`` says what the signal does: a waiting ``$signal`` task completed with
the payload, a ``$sleep`` timer woken, or the signal buffered; a finished run is refused
naming its state, and a refused name lists the run's signals apart from its timers.
On both backends (the module's database)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from qctl_store.types import KIND_SIGNAL, KIND_SLEEP, DAGDep, DAGParams, DAGTask, JobState
from tests.cli.conftest import Run
from tests.conformance.helpers import unique


def _run(st: Any, kind: str) -> DAGParams:
    """A run with a root ``$signal`` task (signal ``go``), a root ``$sleep`` timer
    (``nap``) and a task after the first, whose ``$signal`` (``later``) waits blocked."""
    p = DAGParams(
        name=unique("sig"),
        tasks=[
            DAGTask("gate", KIND_SIGNAL, signal_name="go"),
            DAGTask("nap", KIND_SLEEP, sleep_for=timedelta(hours=1)),
            DAGTask("work", kind),
            DAGTask("after", KIND_SIGNAL, signal_name="later"),
        ],
        deps=[DAGDep("work", "gate"), DAGDep("after", "work")],
    )
    st.create_dag(p)
    return p


def test_each_signal_says_what_it_did(run: Run, st: Any, kind: str) -> None:
    p = _run(st, kind)
    typo = run("dags", "signal", str(p.id), "nope")
    assert typo.exit_code == 3
    assert (
        "(its signals: go, later; its timers, which a signal of their name wakes early: nap)"
        in typo.stderr
    )
    sent = run("dags", "signal", str(p.id), "go", "--payload", '{"ok": 1}')
    assert sent.exit_code == 0, sent.output
    assert sent.stdout == (
        f"signal 'go' to DAG run {p.id} (running): completed its waiting task with the payload\n"
    )
    assert st.task_results(p.id)["gate"].result == {"ok": 1}
    woke = run("dags", "signal", str(p.id), "nap", "-o", "json")
    record = json.loads(woke.stdout)
    assert (record["delivered"], record["timer"], record["run_state"]) == (1, True, "running")
    said = run("dags", "signal", str(p.id), "nap").stdout
    assert "woke its $sleep timer now (the payload is not used)" in said
    buffered = run("dags", "signal", str(p.id), "later")
    assert "was buffered until a task of that name is ready" in buffered.stdout
    again = run("dags", "signal", str(p.id), "go")
    assert again.exit_code == 3
    assert "that takes signal 'go' has settled (gate succeeded)" in again.stderr


def test_a_finished_run_is_refused_naming_its_state(run: Run, st: Any, kind: str) -> None:
    p = _run(st, kind)
    assert run("dags", "cancel", str(p.id), "--yes").exit_code == 0
    refused = run("dags", "signal", str(p.id), "go")
    assert refused.exit_code == 3 and refused.stdout == ""
    assert refused.stderr == (
        f"qctl: error: DAG run {str(p.id)[:8]} is cancelled: a finished run takes no signal\n"
    )
    assert {t.task_key: t.state for t in st.dag_tasks(p.id)}["gate"] == JobState.CANCELLED
