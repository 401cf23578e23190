"""The command line's side of azync's manager guards and of typo refusals: one line on
stderr, naming the verb to use instead (a job verb's targets passed over, exit 3 when
nothing is left; a refused source, exit 2) or the name that matched nothing (exit 3);
nothing written."""

from __future__ import annotations

from typing import Any

from qctl_store.types import (
    DAGParams,
    DAGState,
    DAGTask,
    DequeueParams,
    JobState,
    OnFailurePolicy,
    ScheduleOperationParams,
    Source,
    WorkflowStartParams,
)
from tests.cli.conftest import Run, enqueue, make_dead
from tests.conformance.helpers import lease_one, token, unique


def test_job_verbs_on_a_dag_task_name_the_dag_verb(run: Run, st: Any, kind: str) -> None:
    p = DAGParams(
        name=unique("dag"),
        tasks=[DAGTask("a", kind, max_attempts=1)],
        on_failure=OnFailurePolicy.SUSPEND,
    )
    st.create_dag(p)
    job = lease_one(st, Source.DAG, kind)
    st.dead(job.id, token(job), "boom")
    st.apply_failure_policy()
    for args, verb in [
        (["jobs", "retry", str(job.id), "--yes"], "dags retry"),
        (["jobs", "archive", str(job.id), "--yes"], "dags cancel"),
        (["jobs", "delete", str(job.id), "--state", "dead", "--yes"], "dags cancel"),
        (["jobs", "retry", "--all-dead", "--source", "dag", "--yes"], "dags retry"),
        # A filter that matches only DAG tasks says so too (before: "retried 0", no hint).
        (["jobs", "retry", "--all-dead", "--kind", kind, "--yes"], "dags retry"),
    ]:
        res = run(*args)
        assert res.exit_code == 3, (args, res.stderr)
        assert res.stdout == "" and res.stderr.count("\n") == 1
        assert f"skipped 1 (1 dag task: use {verb})" in res.stderr, res.stderr
    res = run("jobs", "vacuum-dead", "--older-than", "0", "--source", "dag", "--yes")
    assert res.exit_code == 2 and res.stdout == "" and res.stderr.count("\n") == 1
    assert "use `qctl vacuum dags" in res.stderr, res.stderr
    assert st.find_job(job.id).state == JobState.DEAD


def test_a_state_refusal_says_why(run: Run, st: Any, kind: str) -> None:
    (job_id,) = enqueue(st, kind)
    job = lease_one(st, Source.QUEUE, kind)
    st.ack(job.id, token(job))
    res = run("jobs", "pause", str(job_id)[:8], "--yes")
    assert res.exit_code == 3
    assert res.stderr == "qctl: error: nothing to pause: skipped 1 (1 succeeded)\n"


def test_typos_exit_3(run: Run, st: Any, kind: str) -> None:
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind)])
    st.create_dag(p)
    res = run("dags", "signal", str(p.id), "wrongname")
    assert res.exit_code == 3 and "waits for a signal named 'wrongname'" in res.stderr
    res = run("replay", "--subscriber", "nosuch", "--yes")
    assert res.exit_code == 3 and "no subscriber named 'nosuch'" in res.stderr
    res = run("replay", "--subscriber", "nosuch", "--dry-run")
    assert res.exit_code == 3


def test_dry_run_says_so_in_every_format(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 1)
    for fmt in ("json", "jsonl", "csv"):
        res = run("jobs", "retry", "--all-dead", "--kind", kind, "--dry-run", "-o", fmt)
        assert res.exit_code == 0
        if fmt == "csv":
            header, row = res.stdout.splitlines()
            assert "dry_run" in header.split(",") and row.split(",")[-1] == "true"
        else:
            assert '"dry_run": true' in res.stdout
    table = run("jobs", "retry", "--all-dead", "--kind", kind, "--dry-run")
    assert table.stdout.startswith("dry run: jobs retry will reset to pending now")
    assert "1 azync job (1 dead); nothing was changed" in table.stdout.splitlines()[0]
    nothing = run("jobs", "retry", "--all-dead", "--kind", kind + "_none", "--dry-run")
    assert nothing.exit_code == 3 and nothing.stderr == "qctl: error: nothing to retry\n"


def test_vacuum_dry_run_says_so_in_csv(run: Run, kind: str) -> None:
    res = run("vacuum", "dead", "--older-than", "0", "--kind", kind, "--dry-run", "-o", "csv")
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0] == "table,would_remove,older_than,dry_run"
    assert lines[1:] == [
        "dead.queue,0,0,true",
        "dead.event,0,0,true",
        "dead.dag,0,0,true",
        "dead.workflow,0,0,true",
    ]
    assert all(line.endswith(",true") for line in lines[1:])


def test_irreversible_dag_and_workflow_verbs_need_yes(run: Run, st: Any, kind: str) -> None:
    """dags retry and workflows resolve confirm like every irreversible verb: off a
    terminal they refuse without --yes (exit 4), and --dry-run writes nothing."""
    p = DAGParams(name=unique("dag"), tasks=[DAGTask("a", kind)])
    st.create_dag(p)
    assert run("dags", "pause", str(p.id), "--reason", "look").exit_code == 0
    refused = run("dags", "retry", str(p.id))
    assert refused.exit_code == 4 and "--yes" in refused.stderr
    dry = run("dags", "retry", str(p.id), "--dry-run", "-o", "json")
    assert dry.exit_code == 0 and '"dry_run": true' in dry.stdout
    assert st.get_dag(p.id).state == DAGState.PAUSED
    assert run("dags", "retry", str(p.id), "--yes").exit_code == 0
    assert st.get_dag(p.id).state == DAGState.RUNNING

    wf = WorkflowStartParams(name=unique("wf"), version="v1", input={})
    st.start_workflow(wf)
    op_kind = f"op_{kind}"
    op_id = st.schedule_operation(ScheduleOperationParams(workflow_id=wf.id, kind=op_kind))
    (op,) = st.dequeue_batch(Source.WORKFLOW, DequeueParams(kind=op_kind, limit=1))
    st.mark_uncertain(op.id, op.lease_token, "timeout")
    refused = run("workflows", "resolve", str(op_id), "fail")
    assert refused.exit_code == 4
    dry = run("workflows", "resolve", str(op_id), "fail", "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.startswith("dry run: would resolve")
    assert st.find_job(op_id).state == JobState.UNCERTAIN
    named = run("workflows", "resolve", str(wf.id), "fail", "--yes")
    assert named.exit_code == 2 and str(op_id) in named.stderr
    assert run("workflows", "resolve", str(op_id), "fail", "--yes").exit_code == 0
    assert st.list_history(wf.id)[-1].type == "OperationFailed"
