"""Executors of a running DBOS application, PostgreSQL and SQLite: the list, and the
recovery of a dead executor's PENDING workflows, which the live one then runs."""

from __future__ import annotations

import re
from typing import Any

from qctl.systems.dbos.app_process import AppProcess
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, wait_for


def show(run: Run, wf_id: str) -> dict[str, Any]:
    result: dict[str, Any] = data(run("workflows", "show", wf_id, "-o", "json"))
    return result


def strand(run: Run, dbos_app: App, executor_id: str) -> list[str]:
    """Workflows left PENDING on ``executor_id``, an executor killed while it ran them
    (waiting in recv): what a crashed host leaves."""
    doomed = AppProcess(dbos_app.url, "--executor", executor_id)
    stranded: list[str] = []
    try:
        for _ in range(10):  # both executors dequeue from the same queue
            ids = [dbos_app.enqueue("awaits_message", 300.0) for _ in range(4)]
            wait_for(lambda ids=ids: all(show(run, i)["status"] == "PENDING" for i in ids))
            stranded += [i for i in ids if show(run, i)["executor_id"] == executor_id]
            mine = [i for i in ids if i not in stranded]
            if mine:  # the live executor's: done with (woken, so its threads end)
                assert run("workflows", "cancel", *mine, "--yes").exit_code == 0
                for wf_id in mine:
                    dbos_app.client.send(wf_id, "bye", "go")
            if stranded:
                break
    finally:
        doomed.proc.kill()  # no shutdown: its workflows stay PENDING, as after a crash
        doomed.proc.wait()
    assert stranded
    for wf_id in stranded:
        dbos_app.client.send(wf_id, "hello", "go")
    return stranded


def ran_on_the_live_executor(run: Run, stranded: list[str]) -> None:
    for wf_id in stranded:
        wait_for(lambda wf_id=wf_id: show(run, wf_id)["status"] == "SUCCESS", timeout=30)
        row = show(run, wf_id)
        assert row["executor_id"] == "qctl-demo-executor"
        assert row["output"]["value"] == "hello"


def test_recover_a_dead_executors_pending_workflows(run: Run, dbos_app: App) -> None:
    stranded = strand(run, dbos_app, "doomed")
    listed = {e["executor_id"]: e for e in data(run("executors", "list", "-o", "json"))}
    assert listed["doomed"]["pending"] >= len(stranded)
    assert listed["doomed"]["app_versions"] == ["v1"]
    # Killed a moment ago: it could as well be alive, so it is refused, dry run included.
    for verb in (["--dry-run"], ["--yes"]):
        refused = run("executors", "recover", "doomed", *verb)
        assert refused.exit_code == 3, refused.output
        assert re.fullmatch(
            r"qctl: error: DBOS executor doomed was active \S+ ago \(within --idle-for"
            r" 5m\): it may be alive, and its workflows would run twice; wait, or use --force",
            refused.stderr.strip(),
        ), refused.stderr
    said = run("executors", "recover", "doomed", "--dry-run", "--idle-for", "1ms")
    assert re.search(r"of doomed \(last active \S+ ago\)", said.stdout), said.stdout
    dry = data(run("executors", "recover", "doomed", "--dry-run", "--force", "-o", "json"))
    assert dry["dry_run"] is True and set(stranded) <= set(dry["workflow_ids"])
    assert dry["by_version"] == {"v1": dry["count"]}
    assert isinstance(dry["last_active_at"]["doomed"], int)
    assert all(show(run, i)["status"] == "PENDING" for i in stranded)
    assert run("executors", "recover", "doomed", "--yes", root=["--read-only"]).exit_code == 4
    # no terminal: --yes needed
    assert run("executors", "recover", "doomed", "--force").exit_code == 4
    result = data(run("executors", "recover", "doomed", "--force", "--yes", "-o", "json"))
    assert result["count"] == dry["count"] and result["skipped"] == 0
    ran_on_the_live_executor(run, stranded)
    listed = {e["executor_id"]: e for e in data(run("executors", "list", "-o", "json"))}
    assert listed["qctl-demo-executor"]["completed"] >= len(stranded)
    assert listed.get("doomed", {"pending": 0})["pending"] == 0
    left = run("workflows", "list", "--executor", "doomed", "--status", "PENDING", "-o", "json")
    assert data(left) == []
    missing = run("executors", "recover", "nobody", "--yes")
    assert missing.exit_code == 3 and "no DBOS executor 'nobody'" in missing.output


def test_dashboard_lists_executors_and_recovers_one(run: Run, dbos_app: App) -> None:
    from textual.widgets import DataTable

    from qctl.tui.app import QctlTop
    from tests.dbos.test_top import cells, confirm, dashboard, tab
    from tests.tui.helpers import until

    stranded = strand(run, dbos_app, "crashed")

    async def scenario(app: QctlTop, pilot: Any) -> None:
        await tab(app, pilot, "5")
        await until(pilot, lambda: "crashed" in cells(app, "dbos-executors"), 15)
        row = cells(app, "dbos-executors")["crashed"]
        assert int(row[1]) >= len(stranded)
        t = app.screen.query_one("#dbos-executors", DataTable)
        t.move_cursor(row=list(cells(app, "dbos-executors")).index("crashed"))
        await pilot.press("X")
        question = await confirm(app, pilot)
        assert f"re-enqueue {row[1]} PENDING workflow(s) of DBOS executor crashed" in question
        assert re.search(r"executor crashed \(last active \S+ ago; only if it is dead\)", question)
        await until(pilot, lambda: any("recovered" in n.message for n in app._notifications), 15)

    dashboard(dbos_app, scenario)
    ran_on_the_live_executor(run, stranded)
