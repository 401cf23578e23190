"""``qctl nuke``: azync's reset (the queue source) by default, in one transaction; the
other sources only when named, with a dry run and a confirmation saying what breaks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from qctl.cli.main import app
from qctl_store.types import DAGParams, DAGTask, JobSearch, Source, WorkflowStartParams
from tests.cli.conftest import Run, enqueue, out_json
from tests.conformance.helpers import unique


def count(st: Any, source: Source, kind: str) -> int:
    return int(st.count_jobs(JobSearch(source=source, kind=kind), exact=True)[0])


def test_nuke_resets_the_queue_by_default_in_one_transaction(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2)
    dry = run("nuke", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "would delete" in dry.stdout and "queue job(s)" in dry.stdout
    assert "in one transaction" in dry.stdout
    plan = out_json(run("nuke", "--dry-run", "-o", "json"))
    assert plan["source"] == "queue" and plan["jobs"] >= 2 and plan["breaks"] is None
    done = run("nuke", "--yes")
    assert done.exit_code == 0, done.stderr
    assert "in one transaction" in done.stdout
    assert count(st, Source.QUEUE, kind) == 0


def test_nuke_of_another_source_says_what_breaks(run: Run, st: Any) -> None:
    task_kind = unique("nk_dag")
    dag = DAGParams(name=unique("nk"), tasks=[DAGTask("a", task_kind)])
    st.create_dag(dag)
    st.start_workflow(WorkflowStartParams(name=unique("nk_wf"), version="v1", input={}))
    dags = out_json(run("nuke", "--source", "dag", "--dry-run", "-o", "json"))
    assert "1 unfinished DAG run(s)" in dags["breaks"] and "never settle" in dags["breaks"]
    dry = run("nuke", "--source", "dag", "--dry-run")
    assert "1 unfinished DAG run(s)" in dry.stdout
    flows = out_json(run("nuke", "--source", "workflow", "--dry-run", "-o", "json"))
    assert "1 unfinished workflow execution(s)" in flows["breaks"]
    # Not "never wakes": azync's reconcilers revive them; the safe verb comes first.
    assert "reconciler" in flows["breaks"] and "runs again" in flows["breaks"]
    assert "cancel them first (`qctl workflows cancel ID`" in flows["breaks"]
    events = out_json(run("nuke", "--source", "event", "--dry-run", "-o", "json"))
    assert "replay" in events["breaks"]
    assert count(st, Source.DAG, task_kind) == 1, "dry runs delete nothing"
    done = run("nuke", "--source", "dag", "--yes")
    assert done.exit_code == 0, done.stderr
    assert "1 unfinished DAG run(s)" in done.stderr  # said even when --yes skips the question
    assert count(st, Source.DAG, task_kind) == 0


def test_nuke_asks_for_the_schema_or_file_name_typed(
    run: Run, st: Any, kind: str, module_db: tuple[str, str, Path], tty: None
) -> None:
    """On a terminal a nuke runs only once the operator typed the name of what it
    destroys (the schema on PostgreSQL, the file's name on SQLite): y, nothing, or
    another name declines and deletes nothing."""
    backend, schema, path = module_db
    name = schema if backend == "postgres" else path.name
    enqueue(st, kind, 2)
    dry = run("nuke", "--dry-run")
    assert dry.exit_code == 0 and (schema if schema else str(path)) in dry.stdout
    for answer in ("y", "", f"{name}x", "prod"):
        declined = run("nuke", input=f"{answer}\n")
        assert declined.exit_code == 4, declined.stderr
        assert f"Type {name} to confirm" in declined.stderr
        assert "nothing was changed" in declined.stderr and "Traceback" not in declined.stderr
        assert count(st, Source.QUEUE, kind) == 2
    done = run("nuke", input=f"{name}\n")
    assert done.exit_code == 0, done.stderr
    assert "NUKE every queue job" in done.stderr and "nuked queue" in done.stdout
    assert count(st, Source.QUEUE, kind) == 0


def test_nuke_on_a_context_asks_for_the_context_name(
    st: Any, kind: str, db_args: list[str], tty: None
) -> None:
    """Through a named context the operator types the context's name; --yes still
    answers for a script, and off a terminal nothing runs without it."""
    dsn, schema = db_args[1], db_args[3] if len(db_args) > 2 else ""
    add = ["context", "add", "staging", "--dsn", dsn, *(["--schema", schema] if schema else [])]
    assert CliRunner().invoke(app, add).exit_code == 0
    enqueue(st, kind, 1)
    on = ["--context", "staging", "nuke"]
    declined = CliRunner().invoke(app, on, input=f"{schema or 'qctl.db'}\n")
    assert declined.exit_code == 4 and "Type staging to confirm" in declined.stderr
    assert "context staging:" in declined.stderr  # the question names the target
    assert count(st, Source.QUEUE, kind) == 1
    done = CliRunner().invoke(app, on, input="staging\n")
    assert done.exit_code == 0, done.stderr
    assert count(st, Source.QUEUE, kind) == 0


def test_nuke_off_a_terminal_needs_yes(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 1)
    refused = run("nuke", input="anything\n")
    assert refused.exit_code == 4 and "pass --yes" in refused.stderr
    assert count(st, Source.QUEUE, kind) == 1
    assert run("nuke", "--yes").exit_code == 0
    assert count(st, Source.QUEUE, kind) == 0
