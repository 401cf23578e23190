"""qctl against a running DBOS application, on PostgreSQL and SQLite: reads of what the
application wrote, and every action's effect as the application's executor sees it.

The application starts once per backend (module-scoped); each test starts workflows of
its own through ``DBOSClient.enqueue``. The vacuum test runs last: it deletes every
finished workflow.
"""

from __future__ import annotations

import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from prometheus_client.openmetrics.parser import text_string_to_metric_families

from qctl.systems.dbos import actions, reads
from qctl.systems.dbos.database import Database
from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, delayed, wait_for


def status(run: Run, wf_id: str) -> dict[str, Any]:
    result: dict[str, Any] = data(run("workflows", "show", wf_id, "-o", "json"))
    return result


def finished(run: Run, wf_id: str, want: str = "SUCCESS", timeout: float = 30) -> dict[str, Any]:
    result: dict[str, Any] = wait_for(
        lambda: (s := status(run, wf_id))["status"] == want and s, timeout=timeout
    )
    return result


def rows(app: App, sql: str, *params: Any) -> list[dict[str, Any]]:
    db = Database(app.url)
    try:
        return db.all(sql, params)
    finally:
        db.close()


def test_detected_and_status(run: Run, dbos_app: App) -> None:
    record = data(run("db", "status", "-o", "json"))
    assert (record["context"], record["system"]) == ("", "dbos")
    # the same word azync's db status uses for the same backend
    assert record["backend"] == ("postgres" if dbos_app.url.startswith("postgresql") else "sqlite")
    assert record["schema"] == ("dbos" if record["backend"] == "postgres" else None)
    assert 114 <= record["migration_version"] <= 125
    result = run("jobs", "list")
    assert result.exit_code == 2
    assert "DBOS databases have no jobs; see `qctl workflows`" in result.output
    assert run("db", "migrate").exit_code == 2
    # azync's flags meet the same refusal, not an unknown-option error.
    refused = run("db", "migrate", "--dry-run", "-o", "json")
    assert refused.exit_code == 2 and "qctl never migrates a DBOS" in refused.output


def test_show_decodes_what_the_application_wrote(run: Run, dbos_app: App) -> None:
    ok = dbos_app.enqueue("checkout", "o-1", 12)
    bad = dbos_app.enqueue("failing", 7)
    wf = finished(run, ok)
    assert wf["name"] == "checkout" and wf["executor_id"] == "qctl-demo-executor"
    assert wf["app_version"] == "v1" and wf["queue_name"] == "work"
    assert wf["input"] == {
        "serialization": "py_pickle",
        "value": {"args": ["o-1", 12], "kwargs": {}},
    }
    assert wf["output"]["value"]["paid"] == {"charged": 12, "currency": "EUR", "ok": True}
    assert [s["function_name"] for s in wf["steps"]] == [
        "charge",
        "reserve",
        "ship",
        "DBOS.setEvent",
    ]
    assert wf["events"][0]["key"] == "progress"
    assert wf["events"][0]["value"]["value"] == {"order": "o-1", "stage": "done"}

    failed = finished(run, bad, "ERROR")
    assert failed["error"]["value"]["$class"] == "__main__.CardDeclined"
    assert failed["error"]["value"]["text"] == "CardDeclined('card declined for 7')"
    table = run("workflows", "show", bad)
    assert "CardDeclined('card declined for 7')" in table.stdout
    steps = run("workflows", "steps", bad)
    assert "charge" in steps.stdout and "CardDeclined('card declined for 7')" in steps.stdout
    # the step timings are dates in a table, headed so; JSON keeps DBOS's epoch ms
    header = steps.stdout.splitlines()[0].split()
    assert header[:4] == ["FUNCTION_ID", "FUNCTION_NAME", "STARTED_AT", "COMPLETED_AT"]
    assert re.search(r"\bcharge\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s", steps.stdout)
    assert isinstance(failed["steps"][0]["started_at_epoch_ms"], int)
    assert run("workflows", "events", ok, "-o", "json").exit_code == 0
    # the list's machine forms carry output and error as show does; its table does not
    listed = {
        w["workflow_id"]: w
        for w in data(
            run("workflows", "list", "--name", "checkout", "--name", "failing", "-o", "json")
        )
    }
    assert listed[ok]["output"] == wf["output"] and listed[ok]["error"] is None
    assert listed[bad]["error"] == failed["error"] and listed[bad]["output"] is None
    csv_rows = run("workflows", "list", "--prefix", bad, "-o", "csv").stdout.splitlines()
    assert csv_rows[0].endswith(",output,error")
    assert csv_rows[1].endswith(",CardDeclined('card declined for 7')")
    assert "OUTPUT" not in run("workflows", "list", "--prefix", bad).stdout


def test_child_workflow_and_prefix(run: Run, dbos_app: App) -> None:
    parent = dbos_app.enqueue("parent", 3)
    wf = finished(run, parent)
    assert wf["output"]["value"] == 7
    assert [c["workflow_id"] for c in wf["children"]] == [f"{parent}-child"]
    assert wf["steps"][0]["child_workflow_id"] == f"{parent}-child"
    child = status(run, f"{parent}-child")
    assert child["parent_workflow_id"] == parent
    listed = data(run("workflows", "list", "--parent", parent, "-o", "json"))
    assert [r["workflow_id"] for r in listed] == [f"{parent}-child"]

    def ids(*args: str) -> list[str]:
        rows = data(run("workflows", "list", "--prefix", parent, *args, "-o", "json"))
        return [r["workflow_id"] for r in rows]

    assert ids("--has-parent") == [f"{parent}-child"]
    assert ids("--no-parent") == [parent]
    # dequeued_at: when the queue started it (DBOS's started_at_epoch_ms)
    started = datetime.fromtimestamp(wf["dequeued_at"] / 1000, UTC).isoformat()
    assert parent in ids("--dequeued-after", started)
    assert parent not in ids("--dequeued-before", started)
    # A whole id wins over a prefix; a unique prefix resolves, and so does one that
    # matches a parent and its children (the parent); an unknown id is not found.
    assert status(run, parent)["workflow_id"] == parent
    assert status(run, f"{parent}-chi")["workflow_id"] == f"{parent}-child"
    assert status(run, parent[:-2])["workflow_id"] == parent
    assert run("workflows", "show", "no-such-workflow").exit_code == 3


def test_list_filters_and_keyset_paging(run: Run, dbos_app: App) -> None:
    ids = [dbos_app.enqueue("checkout", f"p-{i}", i, id=f"page-{i:02d}") for i in range(5)]
    for wf_id in ids:
        finished(run, wf_id)
    first = data(run("workflows", "list", "--prefix", "page-", "-n", "2", "-o", "json"))
    assert len(first) == 2
    page = run("workflows", "list", "--prefix", "page-", "-n", "2", "-o", "json")
    cursor = page.stderr.split("--after ")[1].strip()
    second = data(
        run("workflows", "list", "--prefix", "page-", "-n", "2", "--after", cursor, "-o", "json")
    )
    third = data(
        run(
            "workflows",
            "list",
            "--prefix",
            "page-",
            "-n",
            "2",
            "--after",
            run("workflows", "list", "--prefix", "page-", "-n", "2", "--after", cursor)
            .stderr.split("--after ")[1]
            .strip(),
            "-o",
            "json",
        )
    )
    seen = [r["workflow_id"] for r in first + second + third]
    assert sorted(seen) == sorted(ids) and len(set(seen)) == 5
    created = [r["created_at"] for r in first + second + third]
    assert created == sorted(created, reverse=True)  # newest first
    assert (
        data(run("workflows", "list", "--prefix", "page-", "--status", "ERROR", "-o", "json")) == []
    )
    assert (
        len(
            data(
                run(
                    "workflows",
                    "list",
                    "--prefix",
                    "page-",
                    "--name",
                    "checkout",
                    "--application-version",
                    "v1",
                    "--executor",
                    "qctl-demo-executor",
                    "--not-forked",
                    "--created-after",
                    "-1h",
                    "-o",
                    "json",
                )
            )
        )
        == 5
    )
    csv = run("workflows", "list", "--prefix", "page-", "-o", "csv").stdout.splitlines()
    assert csv[0].split(",")[:3] == ["workflow_id", "status", "name"] and len(csv) == 6
    assert run("workflows", "list", "--status", "BOGUS").exit_code == 2
    assert run("workflows", "list", "--after", "not-a-cursor").exit_code == 2


def test_attribute_and_completed_filters(run: Run, dbos_app: App) -> None:
    tagged = dbos_app.enqueue("checkout", "a-1", 2)
    other = dbos_app.enqueue("checkout", "a-2", 2)
    first = finished(run, tagged)
    finished(run, other)
    dbos_app.client.update_workflow_attributes(tagged, {"tenant": "acme", "tier": 2})
    by_attr = data(run("workflows", "list", "--attribute", "tenant=acme", "-o", "json"))
    assert [r["workflow_id"] for r in by_attr] == [tagged]
    assert by_attr[0]["attributes"] == {"tenant": "acme", "tier": 2}
    both = data(
        run(
            "workflows", "list", "--attribute", "tenant=acme", "--attribute", "tier=2", "-o", "json"
        )
    )
    assert [r["workflow_id"] for r in both] == [tagged]
    assert data(run("workflows", "list", "--attribute", "tier=3", "-o", "json")) == []
    assert run("workflows", "list", "--attribute", "novalue").exit_code == 2
    after = datetime.fromtimestamp(first["completed_at"] / 1000, UTC).isoformat()
    window = data(
        run("workflows", "list", "--completed-after", after, "--name", "checkout", "-o", "json")
    )
    ids = {r["workflow_id"] for r in window}
    assert tagged in ids and all(r["completed_at"] >= first["completed_at"] for r in window)
    before = data(
        run("workflows", "list", "--completed-before", after, "--prefix", tagged, "-o", "json")
    )
    assert before == []


def test_counts_by_status(run: Run, dbos_app: App) -> None:
    rows = {r["status"]: r for r in data(run("workflows", "counts", "-o", "json"))}
    assert set(rows) == {
        "PENDING", "ENQUEUED", "DELAYED", "SUCCESS", "ERROR", "CANCELLED",
        "MAX_RECOVERY_ATTEMPTS_EXCEEDED",
    }  # fmt: skip
    exact = rows["ERROR"]["count"]
    assert exact == len(
        data(run("workflows", "list", "--status", "ERROR", "-n", "1000", "-o", "json"))
    )
    assert rows["ERROR"]["estimated"] is False
    assert rows["SUCCESS"]["estimated"] is dbos_app.url.startswith("postgresql")


def test_overview_kept_across_refreshes_equals_a_fresh_read(run: Run, dbos_app: App) -> None:
    """The dashboard's overview keeps the minutes it counted and recounts the last ones:
    what it shows after each refresh is what a fresh read shows, across minute
    boundaries, with completions written late relative to the clock, and as minutes
    leave the hour. The application's every-second schedule finishes workflows between
    two reads, so each comparison is retried."""
    db = Database(dbos_app.url)
    kept = reads.FinishedWindow()
    read_from: list[int] = []
    """Where the finished part of each read started (completed_at >=)."""
    all_rows = db.all

    def spy(sql: str, params: Any = ()) -> list[dict[str, Any]]:
        if "completed_at >=" in sql:
            read_from.append(params[0])
        return all_rows(sql, params)

    def figures(read: dict[str, Any]) -> tuple[Any, ...]:
        thr = sorted((r["bucket"], str(r["name"]), r["status"], r["n"]) for r in read["throughput"])
        return read["by_name"], read["by_queue"], thr, read["completed_last_window"]

    def same_as_fresh(now_ms: int) -> tuple[dict[str, Any], int]:
        """The kept read at ``now_ms`` and where it read from."""

        def once() -> tuple[dict[str, Any], int] | None:
            read_from.clear()
            read = reads.overview(db, now_ms, kept)
            fresh = reads.overview(db, now_ms)
            return (read, read_from[0]) if figures(read) == figures(fresh) else None

        result: tuple[dict[str, Any], int] = wait_for(once, timeout=10)
        return result

    db.all = spy  # type: ignore[method-assign]
    try:
        done = [dbos_app.enqueue("checkout", f"kept-{i}", 10) for i in range(3)]
        for wf_id in done:
            finished(run, wf_id)
        real = int(time.time() * 1000)
        first, _ = same_as_fresh(real)
        assert first["by_name"]["checkout"]["SUCCESS"] >= 3
        # 90 s ahead: the next completions are written late, in minutes already counted.
        ahead = real + 90_000
        minute = ahead // 60_000 * 60_000
        _, start = same_as_fresh(ahead)
        assert start >= minute - 4 * 60_000  # a few minutes, not the hour
        late = [dbos_app.enqueue("checkout", f"late-{i}", 10) for i in range(2)]
        for wf_id in late:
            finished(run, wf_id)
        finished(run, dbos_app.enqueue("failing", 8), "ERROR")
        after, start = same_as_fresh(ahead + 5_000)
        assert minute - 2 * 60_000 <= start <= ahead - 55_000  # the overlap before the last minute
        checkout = after["by_name"]["checkout"]["SUCCESS"]
        assert checkout >= first["by_name"]["checkout"]["SUCCESS"] + 2
        assert after["by_name"]["failing"]["ERROR"] >= 1
        # An hour on, minute by minute: the oldest minutes leave the window.
        for minutes in (59, 60, 61, 62):
            same_as_fresh(real + minutes * 60_000)
        gone, _ = same_as_fresh(real + 3 * 3_600_000)
        assert gone["completed_last_window"] == 0 and gone["throughput"] == []
    finally:
        db.close()


def test_queue_with_concurrency_limit(run: Run, dbos_app: App) -> None:
    first = dbos_app.enqueue("slow", 10, queue="limited")
    second = dbos_app.enqueue("slow", 1, queue="limited")
    wait_for(lambda: status(run, first)["status"] == "PENDING")
    queues = {q["queue_name"]: q for q in data(run("queues", "list", "-o", "json"))}
    assert queues["limited"]["concurrency"] == 1
    assert queues["limited"]["pending"] == 1 and queues["limited"]["enqueued"] == 1
    assert queues["limited"]["oldest_enqueued_at"] is not None
    shown = data(run("queues", "show", "limited", "-o", "json"))
    assert {w["workflow_id"] for w in shown["workflows"]} == {first, second}
    assert run("queues", "show", "nope").exit_code == 3
    finished(run, second)


def test_cancel_stops_at_next_step_and_resume_completes(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("slow", 15)
    wait_for(lambda: len(status(run, wf_id)["steps"]) >= 2)
    result = run("workflows", "cancel", wf_id, "--yes", "-o", "json")
    assert data(result)["ids"] == [wf_id]
    assert status(run, wf_id)["status"] == "CANCELLED"
    # A step is 0.4 s: the running one ends and no next one starts. Wait until the
    # count has held for three steps' time, then check that it holds.
    counts: list[int] = []

    def settled() -> bool:
        counts.append(len(status(run, wf_id)["steps"]))
        return len(counts) > 12 and len(set(counts[-12:])) == 1

    wait_for(settled, timeout=30)
    assert status(run, wf_id)["status"] == "CANCELLED"
    assert len(status(run, wf_id)["steps"]) == counts[-1] < 15
    # Cancelling again is refused with the status (nothing to cancel).
    again = run("workflows", "cancel", wf_id, "--yes", "-o", "json")
    assert again.exit_code == 3 and again.stdout == ""
    assert "nothing to cancel: skipped 1 (1 CANCELLED: already finished)" in again.stderr

    assert data(run("workflows", "resume", wf_id, "--yes", "-o", "json"))["done"] == 1
    done = finished(run, wf_id)
    assert done["executor_id"] == "qctl-demo-executor"
    assert done["output"]["value"] == sum(range(15))
    assert [s["function_id"] for s in done["steps"]] == list(range(1, 16))


def test_fork_copies_steps_before_n_and_runs_the_rest(run: Run, dbos_app: App) -> None:
    original = dbos_app.enqueue("checkout", "f-1", 30)
    finished(run, original)
    before = {s["function_id"]: s for s in status(run, original)["steps"]}
    forked = data(run("workflows", "fork", original, "--from-step", "3", "-o", "json"))
    # one id: the fork's own record, with the new workflow's id
    assert (forked["action"], forked["workflow_id"]) == ("fork", original)
    new = finished(run, forked["new_workflow_id"])
    assert new["forked_from"] == original
    assert status(run, original)["was_forked_from"] is True
    copied = {s["function_id"]: s for s in new["steps"]}
    # Steps 1 and 2 are copies (their recorded timings too); 3 on ran again.
    for n in (1, 2):
        assert copied[n]["output"] == before[n]["output"]
        assert copied[n]["started_at_epoch_ms"] == before[n]["started_at_epoch_ms"]
    assert copied[3]["started_at_epoch_ms"] > before[3]["completed_at_epoch_ms"]
    assert new["output"]["value"]["shipped"] == "shipped f-1"
    forks = data(
        run("workflows", "list", "--forked", "--prefix", forked["new_workflow_id"], "-o", "json")
    )
    assert len(forks) == 1
    assert run("workflows", "fork", original, "--from-step", "0").exit_code == 2


def test_fork_by_filter(run: Run, dbos_app: App) -> None:
    tag = f"forks{time.time_ns() % 10**8}-"
    originals = [dbos_app.enqueue("checkout", f"{tag}{i}", 3, id=f"{tag}{i}") for i in range(2)]
    for wf_id in originals:
        finished(run, wf_id)
    dry = data(
        run("workflows", "fork", "--prefix", tag, "--from-step", "2", "--dry-run", "-o", "json")
    )
    assert sorted(dry["ids"]) == sorted(originals) and dry["dry_run"] is True
    assert run("workflows", "fork", "--prefix", tag, "--from-step", "2").exit_code == 4
    assert run("workflows", "fork").exit_code == 2  # neither ids nor a filter
    done = data(
        run("workflows", "fork", "--prefix", tag, "--from-step", "2", "--yes", "-o", "json")
    )
    assert done["done"] == 2 and sorted(done["ids"]) == sorted(originals)
    new_ids = []
    for original in done["ids"]:
        [made] = status(run, original)["forks"]
        new_ids.append(made["workflow_id"])
        fork = finished(run, made["workflow_id"])
        assert fork["forked_from"] == original and fork["output"]["value"]["order"] == original
        assert (
            fork["steps"][0]["started_at_epoch_ms"]
            == status(run, original)["steps"][0]["started_at_epoch_ms"]
        ), "step 1 copied"
    assert run("workflows", "delete", *originals, *new_ids, "--yes").exit_code == 0


def rerun(
    run: Run, wf_id: str, before: dict[str, Any], step: int, want: str
) -> dict[str, Any] | None:
    """The workflow once it has finished (``want``) again with ``step`` run anew.

    Told by the step's start, never by ``updated_at``: on SQLite DBOS stamps that with
    whole seconds (``_now_ms_sql`` of dbos/_sys_db.py on Python < 3.12 is
    ``strftime('%s', 'now') * 1000``), so a re-run finishing within the second of the
    first run keeps its ``updated_at``, and a wait on it timed out (seen as a flaky
    SQLite rewind). Step timings are the application's clock, in milliseconds."""
    s = status(run, wf_id)
    old = {x["function_id"]: x for x in before["steps"]}[step]
    new = {x["function_id"]: x for x in s["steps"]}.get(step)
    fresh = new is not None and new["started_at_epoch_ms"] > old["completed_at_epoch_ms"]
    return s if s["status"] == want and fresh else None


def test_rewind_reruns_a_finished_workflow(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("failing", 3)
    first = finished(run, wf_id, "ERROR")
    pending = dbos_app.enqueue("slow", 40)
    wait_for(lambda: status(run, pending)["status"] == "PENDING")
    refused = run("workflows", "rewind", pending, "--yes")
    assert refused.exit_code == 3 and "nothing to rewind: skipped 1 (1 PENDING: not finished)" in (
        refused.output
    )
    assert run("workflows", "cancel", pending, "--yes").exit_code == 0
    # Onto the application's fast-polling queue: DBOS's internal queue, the default, can
    # sit idle for many seconds on a loaded machine.
    result = data(
        run(
            "workflows",
            "rewind",
            wf_id,
            "--from-step",
            "2",
            "--on-queue",
            "work",
            "--yes",
            "-o",
            "json",
        )
    )
    assert result["verb"] == "workflows rewind" and result["ids"] == [wf_id]
    rewound = status(run, wf_id)
    assert rewound["queue_name"] == "work"
    kept = [s for s in rewound["steps"] if s["function_id"] < 2]
    assert kept == first["steps"][:1], "step 1 keeps its recorded outcome"
    if rewound["status"] == "ENQUEUED":
        assert len(rewound["steps"]) == 1, "steps from 2 on are dropped"
    again = wait_for(lambda: rerun(run, wf_id, first, 2, "ERROR"), timeout=60)
    assert again["steps"][0]["started_at_epoch_ms"] == first["steps"][0]["started_at_epoch_ms"]


def test_set_delay_moves_a_delayed_workflow(run: Run, dbos_app: App) -> None:
    wf_id = f"delayed-{time.time_ns()}"
    dbos_app.client.enqueue(
        {
            "queue_name": "work",
            "workflow_name": "checkout",
            "workflow_id": wf_id,
            "delay_seconds": 3600,
        },
        "d-1",
        1,
    )
    assert status(run, wf_id)["status"] == "DELAYED"
    assert run("workflows", "set-delay", wf_id, "--delay", "1s").exit_code == 4  # no --yes
    result = data(run("workflows", "set-delay", wf_id, "--delay", "1s", "--yes", "-o", "json"))
    assert result["verb"] == "workflows set-delay" and result["ids"] == [wf_id]
    finished(run, wf_id, timeout=30)
    assert run("workflows", "set-delay", wf_id, "--delay", "1s", "--yes").exit_code == 3


def test_user_application_and_schedule_filters(run: Run, dbos_app: App) -> None:
    tag = f"who{time.time_ns() % 10**8}-"
    alice = delayed(dbos_app, f"{tag}alice", authenticated_user="alice")
    billing = delayed(dbos_app, f"{tag}billing", application_name="billing", app_version="v2")

    def ids(*args: str) -> list[str]:
        rows = data(run("workflows", "list", "--prefix", tag, *args, "-o", "json"))
        return sorted(r["workflow_id"] for r in rows)

    assert ids("--user", "alice") == [alice]
    assert ids("--user", "bob") == []
    assert data(run("workflows", "show", alice, "-o", "json"))["authenticated_user"] == "alice"
    # DBOS's ownership rule: an application's rows plus those no application claims.
    assert ids("--application-name", "billing") == [alice, billing]
    assert ids("--application-name", "other") == [alice]
    # one option, two spellings (--app-version: DBOS's field name), repeatable
    assert ids("--application-version", "v2") == [billing]
    assert ids("--application-version", "v3", "--app-version", "v2") == [billing]
    # Every bulk verb takes the same filters: --user selects one of the two here.
    dry = data(
        run("workflows", "delete", "--prefix", tag, "--user", "alice", "--dry-run", "-o", "json")
    )
    assert dry["ids"] == [alice]
    scheduled = wait_for(
        lambda: data(
            run("workflows", "list", "--schedule", "every-second", "-n", "3", "-o", "json")
        )
    )
    assert {r["name"] for r in scheduled} == {"every_second"}
    assert data(run("workflows", "list", "--schedule", "nope", "-o", "json")) == []
    assert data(run("workflows", "delete", "--prefix", tag, "--yes", "-o", "json"))["done"] == 2


def test_set_delay_and_rewind_by_filter(run: Run, dbos_app: App) -> None:
    tag = f"later{time.time_ns() % 10**8}-"
    waiting = [delayed(dbos_app, f"{tag}{i}") for i in range(3)]
    before = {w: status(run, w)["delay_until_epoch_ms"] for w in waiting}
    dry = data(
        run("workflows", "set-delay", "--prefix", tag, "--delay", "2h", "--dry-run", "-o", "json")
    )
    assert sorted(dry["ids"]) == sorted(waiting) and dry["dry_run"] is True
    assert {w: status(run, w)["delay_until_epoch_ms"] for w in waiting} == before
    assert run("workflows", "set-delay", "--prefix", tag, "--delay", "2h").exit_code == 4
    moved = data(
        run("workflows", "set-delay", "--prefix", tag, "--delay", "2h", "--yes", "-o", "json")
    )
    assert moved["done"] == 3
    for w in waiting:
        # an hour later than DBOS's delay of one hour, within a minute
        assert abs(status(run, w)["delay_until_epoch_ms"] - before[w] - 3_600_000) < 60_000
    # two of them now: they run on the application's executor
    now = data(run("workflows", "set-delay", *waiting[:2], "--delay", "0s", "--yes", "-o", "json"))
    assert sorted(now["ids"]) == sorted(waiting[:2])
    for w in waiting[:2]:
        finished(run, w)
    assert status(run, waiting[2])["status"] == "DELAYED"

    # Rewind by filter: the finished ones re-enqueued under their ids; the filter
    # selects only what rewind takes (finished workflows), so the DELAYED one is left.
    ran = {w: status(run, w) for w in waiting[:2]}
    result = data(
        run(
            "workflows", "rewind", "--prefix", tag, "--from-step", "3", "--on-queue", "work",
            "--yes", "-o", "json",
        )
    )  # fmt: skip
    assert sorted(result["ids"]) == sorted(waiting[:2]) and result["skipped"] == {}
    assert status(run, waiting[2])["status"] == "DELAYED"
    for w in waiting[:2]:
        again = wait_for(lambda w=w: rerun(run, w, ran[w], 3, "SUCCESS"), timeout=60)
        assert again["queue_name"] == "work"
        kept = [(x["function_id"], x["started_at_epoch_ms"]) for x in again["steps"][:2]]
        assert kept == [(x["function_id"], x["started_at_epoch_ms"]) for x in ran[w]["steps"][:2]]
    assert run("workflows", "delete", "--prefix", tag, "--yes").exit_code == 0


def test_streams_of_a_workflow(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("streaming", 2)
    finished(run, wf_id)
    streams = data(run("workflows", "streams", wf_id, "-o", "json"))
    assert [(s["key"], s["offset"], s["closed"]) for s in streams] == [
        ("progress", 0, False), ("progress", 1, False), ("progress", 2, False),
        ("progress", 3, True),
    ]  # fmt: skip
    assert streams[0]["value"] == {"serialization": "py_pickle", "value": {"done": 1, "of": 2}}
    assert streams[2]["value"] == {"serialization": "portable_json", "value": "last"}
    assert streams[3]["value"] is None
    table = run("workflows", "streams", wf_id).stdout
    assert "{'done': 2, 'of': 2}" in table and "'last'" in table
    assert data(run("workflows", "show", wf_id, "-o", "json"))["streams"] == streams
    assert run("workflows", "streams", "no-such-workflow").exit_code == 3


def test_custom_serializer_values_are_shown_raw(run: Run, dbos_app: App) -> None:
    """A workflow an application with its own serializer enqueued: its input is shown
    as stored, with the serializer's name, not decoded."""
    from dbos import DBOSClient, Serializer

    class Rot13(Serializer):
        def serialize(self, data: Any) -> str:
            import codecs
            import json

            return codecs.encode(json.dumps(data), "rot13")

        def deserialize(cls, serialized_data: str) -> Any:
            raise AssertionError("qctl must not deserialize")

        def name(self) -> str:
            return "acme_rot13"

    client = DBOSClient(system_database_url=dbos_app.url, serializer=Rot13())
    wf_id = f"custom-{time.time_ns()}"
    try:
        client.enqueue(
            {"queue_name": "work", "workflow_name": "checkout", "workflow_id": wf_id,
             "delay_seconds": 3600},
            "secret order", 1,
        )  # fmt: skip
    finally:
        client.destroy()
    # A schedule it created (for another application: this one's scheduler leaves it
    # alone): its context row names no serializer; shown raw, and trigger refuses it.
    client = DBOSClient(system_database_url=dbos_app.url, serializer=Rot13())
    try:
        client.create_schedule(
            schedule_name="rot13-yearly", workflow_name="every_second", schedule="0 0 0 1 1 *",
            context={"region": "eu"}, application_name="other-app",
        )  # fmt: skip
        sched = data(run("schedules", "show", "rot13-yearly", "-o", "json"))
        assert sched["context"]["serialization"] == "unnamed_serializer"
        assert "ertvba" in sched["context"]["value"]["raw"]  # rot13 of "region"
        assert "unnamed_serializer:'" in run("schedules", "show", "rot13-yearly").stdout
        refused = run("schedules", "trigger", "rot13-yearly")
        assert refused.exit_code == 2 and "not a pickle" in refused.output
    finally:
        client.delete_schedule("rot13-yearly")
        client.destroy()
    shown = status(run, wf_id)
    raw = shown["input"]["value"]
    assert shown["input"]["serialization"] == "acme_rot13"
    assert raw["$serializer"] == "acme_rot13" and "frperg beqre" in raw["raw"]
    table = run("workflows", "show", wf_id).stdout
    assert "acme_rot13:'" in table and "frperg beqre" in table
    assert run("workflows", "delete", wf_id, "--yes").exit_code == 0


def test_delete_removes_steps_inputs_outputs_events(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("checkout", "x-1", 5)
    finished(run, wf_id)
    tables = {
        "workflow_status": "workflow_uuid",
        "operation_outputs": "workflow_uuid",
        "workflow_input": "workflow_uuid",
        "workflow_output": "workflow_uuid",
        "workflow_events": "workflow_uuid",
        "workflow_events_history": "workflow_uuid",
    }

    def counts() -> dict[str, int]:
        return {
            t: rows(dbos_app, f"SELECT count(*) AS n FROM {{t}}{t} WHERE {c} = %s", wf_id)[0]["n"]
            for t, c in tables.items()
        }

    assert all(n > 0 for n in counts().values()), counts()
    assert run("workflows", "delete", wf_id).exit_code == 4  # no terminal, no --yes
    dry = data(run("workflows", "delete", wf_id, "--dry-run", "-o", "json"))
    assert dry["dry_run"] is True and dry["ids"] == [wf_id]
    assert counts()["workflow_status"] == 1
    assert data(run("workflows", "delete", wf_id, "--yes", "-o", "json"))["done"] == 1
    assert counts() == {t: 0 for t in tables}
    assert run("workflows", "show", wf_id).exit_code == 3


def test_bulk_by_filter(run: Run, dbos_app: App) -> None:
    tag = f"bulk{time.time_ns() % 10**8}-"
    blocker = dbos_app.enqueue("slow", 40, queue="limited")
    wait_for(lambda: status(run, blocker)["status"] == "PENDING")
    queued = [dbos_app.enqueue("slow", 1, queue="limited", id=f"{tag}{i}") for i in range(3)]
    assert run("workflows", "cancel").exit_code == 2  # neither ids nor a filter
    dry = data(run("workflows", "cancel", "--prefix", tag, "--dry-run", "-o", "json"))
    assert sorted(dry["ids"]) == sorted(queued) and dry["dry_run"] is True
    assert {status(run, w)["status"] for w in queued} == {"ENQUEUED"}
    # a table dry run reads as azync's: the sentence, then a sample of the targets
    table = run("workflows", "cancel", "--prefix", tag, "--dry-run")
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0] == (
        f"dry run: workflows cancel will {actions.CANCEL.effect}: 3 dbos workflows"
        " (3 ENQUEUED); nothing was changed"
    )
    assert lines[2].split() == ["ID", "STATE", "LABEL"]
    assert {line.split()[0] for line in lines[4:]} == set(queued)  # under the rule
    assert {status(run, w)["status"] for w in queued} == {"ENQUEUED"}
    assert run("workflows", "cancel", "--prefix", tag, "--max", "2", "--yes").exit_code == 2
    done = data(
        run("workflows", "cancel", "--prefix", tag, "--status", "ENQUEUED", "--yes", "-o", "json")
    )
    assert done["done"] == 3 and sorted(done["ids"]) == sorted(queued)
    assert {status(run, w)["status"] for w in queued} == {"CANCELLED"}
    assert run("workflows", "cancel", blocker, "--yes").exit_code == 0


def test_schedules(run: Run, dbos_app: App) -> None:
    schedules = data(run("schedules", "list", "-o", "json"))
    assert [s["schedule_name"] for s in schedules] == ["every-second"]
    assert schedules[0]["status"] == "ACTIVE" and schedules[0]["schedule"] == "* * * * * *"
    # The schedule fires every second: wait for its first run (this test may run first).
    fired = wait_for(
        lambda: data(
            run("workflows", "list", "--schedule", "every-second", "-n", "1", "-o", "json")
        )
    )
    assert fired[0]["name"] == "every_second" and fired[0]["schedule_name"] == "every-second"
    assert fired[0]["status"] in ("SUCCESS", "PENDING", "ENQUEUED")
    # LAST_FIRED_AT reads as every table's instants; JSON keeps DBOS's ISO text
    wait_for(lambda: data(run("schedules", "list", "-o", "json"))[0]["last_fired_at"])
    assert datetime.fromisoformat(data(run("schedules", "list", "-o", "json"))[0]["last_fired_at"])
    header, _, row = run("schedules", "list").stdout.splitlines()[:3]
    at = header.index("LAST_FIRED_AT")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row[at : at + 19])
    assert data(run("schedules", "pause", "every-second", "-o", "json"))["action"] == "pause"
    assert data(run("schedules", "show", "every-second", "-o", "json"))["status"] == "PAUSED"

    def listed(*args: str) -> list[str]:
        return [r["schedule_name"] for r in data(run("schedules", "list", *args, "-o", "json"))]

    assert listed("--status", "PAUSED") == ["every-second"] and listed("--state", "ACTIVE") == []
    assert listed("--name", "every_second", "--prefix", "every-") == ["every-second"]
    assert listed("--name", "checkout") == [] and listed("--prefix", "every_") == []
    assert run("schedules", "list", "--status", "RUNNING").exit_code == 2
    assert run("schedules", "pause", "every-second").exit_code == 3
    assert data(run("schedules", "resume", "every-second", "-o", "json"))["status"] == "PAUSED"
    refused = run("schedules", "resume", "every-second")  # ACTIVE again: nothing to resume
    assert refused.exit_code == 3
    assert "schedule every-second is ACTIVE; resume needs PAUSED" in refused.output
    assert run("schedules", "show", "nope").exit_code == 3

    # trigger: enqueued now as DBOS's scheduler would, and run by the application
    triggered = data(run("schedules", "trigger", "every-second", "-o", "json"))
    [wf_id] = triggered["workflow_ids"]
    assert wf_id.startswith("sched-every-second-trigger-")
    ran = finished(run, wf_id)
    assert ran["name"] == "every_second" and ran["input"]["value"]["args"][1] is None
    # backfill: the runs of a past window (the schedule fires every second)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    window = [start.isoformat(), (start + timedelta(seconds=3)).isoformat()]
    assert (
        run(
            "schedules", "backfill", "every-second", "--since", window[0], "--until", window[1]
        ).exit_code
        == 4
    )
    back = data(
        run(
            "schedules", "backfill", "every-second", "--since", window[0], "--until",
            window[1], "--yes", "-o", "json",
        )
    )  # fmt: skip
    assert len(back["workflow_ids"]) == 2  # seconds 1 and 2 of the window (exclusive)
    for wf in back["workflow_ids"]:
        finished(run, wf)
    again = data(
        run(
            "schedules", "backfill", "every-second", "--since", window[0], "--until",
            window[1], "--yes", "-o", "json",
        )
    )  # fmt: skip
    assert again["workflow_ids"] == [] and again["already_run"] == back["workflow_ids"]


def test_versions_list_and_set_latest(run: Run, dbos_app: App) -> None:
    versions = data(run("versions", "list", "-o", "json"))
    assert [v["version_name"] for v in versions] == ["v1"]
    # A second version, registered as DBOS registers an application's version at launch.
    dbos_app.client._sys_db.create_application_version("v0-rollback")
    try:
        # registered now, it is the latest: v1 first, then back
        assert run("versions", "set-latest", "v1", "--yes").exit_code == 0
        listed = [v["version_name"] for v in data(run("versions", "list", "-o", "json"))]
        assert listed == ["v1", "v0-rollback"]
        assert run("versions", "set-latest", "v0-rollback").exit_code == 4  # no terminal
        dry = data(run("versions", "set-latest", "v0-rollback", "--dry-run", "-o", "json"))
        assert dry["dry_run"] is True and dry["latest"] == "v1"
        assert data(run("versions", "list", "-o", "json"))[0]["version_name"] == "v1"
        done = run("versions", "set-latest", "v0-rollback", "--yes")
        assert done.exit_code == 0, done.output
        assert "made v0-rollback the latest DBOS application version" in done.stdout
        latest = data(run("versions", "list", "-o", "json"))[0]
        assert latest["version_name"] == "v0-rollback"
        assert dbos_app.client.get_latest_application_version()["version_name"] == "v0-rollback"
        unknown = run("versions", "set-latest", "v9", "--yes")
        assert unknown.exit_code == 3 and "no DBOS application version 'v9'" in unknown.output
    finally:
        # The application's own version latest again: its scheduler starts runs on it.
        assert run("versions", "set-latest", "v1", "--yes").exit_code == 0
    assert data(run("versions", "list", "-o", "json"))[0]["version_name"] == "v1"


def test_read_only_refuses_every_action(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("checkout", "r-1", 1)
    before = finished(run, wf_id)
    ro = ["--read-only"]
    for args in (
        ["workflows", "cancel", wf_id, "--yes"],
        ["workflows", "resume", wf_id, "--yes"],
        ["workflows", "delete", wf_id, "--yes"],
        ["workflows", "delete", "--name", "checkout", "--yes"],
        ["workflows", "fork", wf_id, "--from-step", "2"],
        ["workflows", "fork", "--name", "checkout", "--yes"],
        ["workflows", "rewind", wf_id, "--yes"],
        ["workflows", "set-delay", wf_id, "--delay", "1s", "--yes"],
        ["workflows", "set-delay", "--name", "checkout", "--delay", "1s", "--yes"],
        ["workflows", "rewind", "--name", "checkout", "--yes"],
        ["versions", "set-latest", "v1", "--yes"],
        ["schedules", "pause", "every-second"],
        ["schedules", "resume", "every-second"],
        ["schedules", "trigger", "every-second"],
        ["schedules", "backfill", "every-second", "--since", "-1m", "--yes"],
        ["vacuum", "workflows", "--older-than", "1ms", "--yes"],
    ):
        result = run(*args, root=ro)
        assert result.exit_code == 4, (args, result.output)
        assert "read-only" in result.output
    assert status(run, wf_id) == before
    # Reads still work read-only (the session itself is read-only too).
    assert run("workflows", "list", root=ro).exit_code == 0
    db = Database(dbos_app.url, read_only=True)
    try:
        import pytest

        from qctl_kit.errors import ReadOnly

        with pytest.raises(ReadOnly):
            db.execute("DELETE FROM {t}workflow_status WHERE workflow_uuid = %s", [wf_id])
    finally:
        db.close()


def test_vacuum_never_touches_unfinished_workflows(run: Run, dbos_app: App) -> None:
    running = dbos_app.enqueue("slow", 40, queue="limited")
    wait_for(lambda: status(run, running)["status"] == "PENDING")
    waiting = dbos_app.enqueue("slow", 1, queue="limited")
    # Enough finished workflows of its own for more than one batch of 3, whatever ran
    # before it.
    checkouts = [dbos_app.enqueue("checkout", f"v-{i}", 1) for i in range(1, 6)]
    for wf_id in checkouts:
        finished(run, wf_id)
    done = checkouts[0]
    time.sleep(0.05)
    dry = data(run("vacuum", "workflows", "--older-than", "1ms", "--dry-run", "-o", "json"))
    assert dry["dry_run"] is True and dry["count"] > 0
    result = data(
        run("vacuum", "workflows", "--older-than", "1ms", "--batch", "3", "--yes", "-o", "json")
    )
    assert result["count"] >= dry["count"] - 5 and result["batches"] >= 2
    assert status(run, running)["status"] == "PENDING"
    assert status(run, waiting)["status"] == "ENQUEUED"
    assert run("workflows", "show", done).exit_code == 3
    assert (
        rows(
            dbos_app,
            "SELECT count(*) AS n FROM {t}operation_outputs WHERE workflow_uuid = %s",
            done,
        )[0]["n"]
        == 0
    )
    assert run("vacuum", "workflows", "--older-than", "1ms", "--status", "PENDING").exit_code == 2
    assert run("workflows", "cancel", running, waiting, "--yes").exit_code == 0


def test_metrics_equal_the_dashboard_reads(run: Run, dbos_app: App) -> None:
    delayed(dbos_app, f"metrics-{uuid.uuid4().hex[:8]}")

    def rows() -> tuple[Any, Any]:
        db = Database(dbos_app.url)
        try:
            return reads.status_counts(db), reads.queue_stats(db)
        finally:
            db.close()

    # The live app may still finish earlier tests' workflows: compare a scrape taken
    # between two equal reads of the rows, so both saw the same database.
    for _ in range(20):
        before = rows()
        result = run("metrics")
        assert result.exit_code == 0, result.output
        if rows() == before:
            break
    else:
        raise AssertionError("the workflows never held still for a scrape")
    counts, queues = before
    found = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(result.stdout)
        for s in f.samples
    }
    for status, n in counts.counts.items():
        labels = {"status": status, "estimated": str(status in counts.estimated).lower()}
        assert found[("qctl_dbos_workflows", frozenset(labels.items()))] == n
    for status in ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"):
        failed = frozenset({"status": status}.items())
        assert found[("qctl_dbos_failed_workflows", failed)] == counts.counts.get(status, 0)
    work = next(q for q in queues if q["queue_name"] == "work")
    assert work["delayed"] >= 1
    for status in ("enqueued", "pending", "delayed"):
        labels = {"queue": "work", "status": status.upper()}
        assert found[("qctl_dbos_queue_workflows", frozenset(labels.items()))] == work[status]


def test_errors_groups_failed_workflows_by_error(run: Run, dbos_app: App) -> None:
    tag = f"errs{uuid.uuid4().hex[:6]}-"
    ids = [dbos_app.enqueue("failing", n, id=f"{tag}{i}") for i, n in enumerate([7, 8, 7])]
    for wf_id in ids:
        finished(run, wf_id, "ERROR")
    groups = data(run("workflows", "errors", "--prefix", tag, "-o", "json"))
    # one fingerprint: the amounts folded; the newest one's error is the sample
    assert [(g["count"], g["fingerprint"]) for g in groups] == [
        (3, "CardDeclined('card declined for <n>')")
    ]
    newest = groups[0]["workflow_id"]
    assert status(run, newest)["created_at"] == groups[0]["last_created_at"]
    amount = dict(zip(ids, [7, 8, 7], strict=True))[newest]
    assert groups[0]["error"]["value"]["text"] == f"CardDeclined('card declined for {amount}')"
    assert (groups[0]["name"], groups[0]["names"], groups[0]["status"]) == ("failing", 1, "ERROR")
    assert groups[0]["first_created_at"] <= groups[0]["last_created_at"]
    table = run("workflows", "errors", "--prefix", tag).stdout.splitlines()
    assert table[0].split()[:4] == ["COUNT", "STATUS", "NAME", "ERROR"]
    assert table[2].split()[:4] == ["3", "ERROR", "failing", "CardDeclined('card"]
    assert data(run("workflows", "errors", "--prefix", "nothing-", "-o", "json")) == []
