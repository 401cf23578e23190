"""DBOSClient's other writes through qctl on a running DBOS application, PostgreSQL and
SQLite: a message to a workflow waiting in recv, attributes, schedules created and
deleted, a queue's limits."""

from __future__ import annotations

from typing import Any

from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, wait_for


def show(run: Run, wf_id: str) -> dict[str, Any]:
    result: dict[str, Any] = data(run("workflows", "show", wf_id, "-o", "json"))
    return result


def test_send_reaches_a_workflow_waiting_in_recv(run: Run, dbos_app: App) -> None:
    waiting = dbos_app.enqueue("awaits_message", 60.0)
    wait_for(lambda: show(run, waiting)["status"] == "PENDING")
    message = '{"approved": true, "by": "ops"}'
    dry = data(
        run("workflows", "send", waiting, message, "--topic", "go", "--dry-run", "-o", "json")
    )
    assert dry["dry_run"] is True
    assert data(run("workflows", "messages", waiting, "-o", "json")) == []
    assert run("workflows", "send", waiting, "x", root=["--read-only"]).exit_code == 4
    sent = run(
        "workflows", "send", waiting[:-2], message, "--topic", "go", "--idempotency-key", "k1"
    )
    assert sent.exit_code == 0, sent.output
    wait_for(lambda: show(run, waiting)["status"] == "SUCCESS")
    assert show(run, waiting)["output"]["value"] == {"approved": True, "by": "ops"}
    # Finished: nothing would ever receive it.
    assert run("workflows", "send", waiting, "again").exit_code == 3
    # An idempotency key sends once.
    other = dbos_app.enqueue("awaits_message", 60.0)
    for _ in range(2):
        assert (
            run(
                "workflows", "send", other, "hi", "--topic", "none", "--idempotency-key", "k2"
            ).exit_code
            == 0
        )
    assert len(data(run("workflows", "messages", other, "-o", "json"))) == 1
    assert run("workflows", "send", "no-such-workflow", "x").exit_code == 3
    assert run("workflows", "cancel", other, "--yes").exit_code == 0
    dbos_app.client.send(other, "bye", "go")  # woken: its thread ends with the test


def test_set_attributes(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("checkout", "attr-1", 1)
    wait_for(lambda: show(run, wf_id)["status"] == "SUCCESS")
    dry = data(run("workflows", "set-attributes", wf_id, "team=ops", "--dry-run", "-o", "json"))
    assert dry["after"] == {"team": "ops"} and show(run, wf_id)["attributes"] is None
    assert run("workflows", "set-attributes", wf_id, "team=ops", "tries=3").exit_code == 0
    assert run("workflows", "set-attributes", wf_id, "region=eu").exit_code == 0
    assert show(run, wf_id)["attributes"] == {"team": "ops", "tries": 3, "region": "eu"}
    found = data(run("workflows", "list", "--attribute", "team=ops", "-o", "json"))
    assert [w["workflow_id"] for w in found] == [wf_id]
    assert run("workflows", "set-attributes", wf_id, "only=1", "--replace").exit_code == 4
    assert run("workflows", "set-attributes", wf_id, "only=1", "--replace", "--yes").exit_code == 0
    assert show(run, wf_id)["attributes"] == {"only": 1}
    assert run("workflows", "set-attributes", wf_id, "bad").exit_code == 2
    assert run("workflows", "set-attributes", wf_id).exit_code == 2


def test_create_and_delete_a_schedule(run: Run, dbos_app: App) -> None:
    args = ["schedules", "create", "qctl-made", "--workflow", "every_second", "--cron"]
    assert run(*args, "not a cron").exit_code == 2
    assert run(*args, "* * * * * *", "--timezone", "Mars/Olympus").exit_code == 2
    dry = data(run(*args, "* * * * * *", "--dry-run", "-o", "json"))
    assert dry["dry_run"] is True
    assert run("schedules", "show", "qctl-made").exit_code == 3
    assert run(*args, "* * * * * *", "--timezone", "Europe/Paris").exit_code == 0
    row = data(run("schedules", "show", "qctl-made", "-o", "json"))
    assert (row["status"], row["cron_timezone"], row["workflow_name"]) == (
        "ACTIVE",
        "Europe/Paris",
        "every_second",
    )
    assert run(*args, "* * * * * *").exit_code == 2  # exists
    # The application's scheduler runs it.
    wait_for(
        lambda: data(run("workflows", "list", "--schedule", "qctl-made", "-o", "json")),
        timeout=30,
    )
    assert run("schedules", "delete", "qctl-made").exit_code == 4  # no terminal: --yes
    assert run("schedules", "delete", "qctl-made", "--yes").exit_code == 0
    assert run("schedules", "show", "qctl-made").exit_code == 3
    assert run("schedules", "delete", "qctl-made", "--yes").exit_code == 3


def test_queue_limits(run: Run, dbos_app: App) -> None:
    def queue(name: str) -> dict[str, Any]:
        return next(q for q in data(run("queues", "list", "-o", "json")) if q["queue_name"] == name)

    assert queue("limited")["concurrency"] == 1
    set_limits = ["queues", "set-limits", "limited"]
    dry = data(run(*set_limits, "--concurrency", "4", "--dry-run", "-o", "json"))
    assert dry["before"]["concurrency"] == 1 and dry["after"]["concurrency"] == 4
    assert queue("limited")["concurrency"] == 1
    table = run(*set_limits, "--concurrency", "0", "--dry-run").stdout
    assert "limited: concurrency: 1 → 0, stops new starts; nothing was changed" in table
    assert run(*set_limits, "--concurrency", "4", "--yes").exit_code == 0
    assert run(*set_limits, "--worker-concurrency", "2", "--yes").exit_code == 0
    assert (queue("limited")["concurrency"], queue("limited")["worker_concurrency"]) == (4, 2)
    assert run(*set_limits, "--worker-concurrency", "none", "--yes").exit_code == 0
    assert queue("limited")["worker_concurrency"] is None
    # DBOS's own checks, before anything is written.
    refused = run(*set_limits, "--worker-concurrency", "9", "--yes")
    assert (
        refused.exit_code == 2 and "greater than or equal to worker_concurrency" in refused.output
    )
    assert run(*set_limits, "--concurrency", "1", "--yes").exit_code == 0
    assert run("queues", "set-limits", "limited", "--rate-limit", "5", "--yes").exit_code == 2
    assert run("queues", "set-limits", "limited", "--concurrency", "x", "--yes").exit_code == 2
    assert run("queues", "set-limits", "limited", "--yes").exit_code == 2
    args = ["queues", "set-limits", "fresh", "--rate-limit", "5", "--rate-period", "2", "--yes"]
    assert run(*args).exit_code == 0
    fresh = queue("fresh")
    assert (fresh["registered"], fresh["rate_limit_max"], fresh["rate_limit_period_sec"]) == (
        True,
        5,
        2.0,
    )


def test_fork_with_its_id_and_timeout(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("checkout", "fork-1", 1)
    wait_for(lambda: show(run, wf_id)["status"] == "SUCCESS")
    new_id = f"{wf_id}-mine"
    args = ["workflows", "fork", wf_id, "--from-step", "2", "--forked-workflow-id", new_id]
    forked = data(run(*args, "--timeout", "1h", "-o", "json"))
    assert forked["new_workflow_id"] == new_id
    wait_for(lambda: show(run, new_id)["status"] == "SUCCESS")
    row = show(run, new_id)
    assert (row["forked_from"], row["workflow_timeout_ms"]) == (wf_id, 3_600_000)
    assert run(*args).exit_code == 2  # that id exists
    assert run(*args[:-1], f"{new_id}-2", "--timeout", "0s").exit_code == 2
    two = run("workflows", "fork", wf_id, new_id, "--forked-workflow-id", "x", "--yes")
    assert two.exit_code == 2 and "one fork" in two.output
