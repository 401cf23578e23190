"""``dags compensate`` and ``dags cancel`` on the command line: the dry run and the
question name the tasks they cancel and leave running; what would strand a saga is one
line on stderr, exit 2, nothing written, unless ``--force``."""

from __future__ import annotations

from typing import Any

from qctl_store.types import DAGState, JobState, Source
from tests.cli.conftest import Run
from tests.conformance.helpers import lease_one
from tests.ops.test_saga_guards import compensating, saga


def test_compensate_dry_run_lists_the_tasks(run: Run, st: Any) -> None:
    dag_id, p = saga(st)
    lease_one(st, Source.DAG, f"{p}_b")
    res = run("dags", "compensate", str(dag_id), "--dry-run")
    assert res.exit_code == 2 and res.stdout == "" and res.stderr.count("\n") == 1
    assert "task(s) b (active) are running" in res.stderr and "--force" in res.stderr
    res = run("dags", "compensate", str(dag_id), "--dry-run", "--force")
    assert res.exit_code == 0, res.stderr
    assert "cancels c; leaves running b; inserts compensations comp:a" in res.stdout
    assert st.get_dag(dag_id).state == DAGState.RUNNING


def test_cancel_of_a_compensating_saga_needs_force(run: Run, st: Any, tty: None) -> None:
    dag_id, _p = compensating(st)
    res = run("dags", "cancel", str(dag_id), "--yes")
    assert res.exit_code == 2 and "comp:a (blocked), comp:b (pending)" in res.stderr
    assert st.get_dag(dag_id).state == DAGState.COMPENSATING
    res = run("dags", "cancel", str(dag_id), "--force", input="y\n")
    assert res.exit_code == 0, res.stderr
    assert "cancels comp:a, comp:b; leaves running no task?" in res.stderr + res.stdout
    assert {t.state for t in st.dag_tasks(dag_id) if t.task_key.startswith("comp:")} == {
        JobState.CANCELLED
    }
