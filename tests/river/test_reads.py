"""qctl's reads of a River database River's own client wrote: keyset pages by id in
every output format, a job's decoded columns and attempt history, database text
sanitised before a terminal and exact in JSON."""

from __future__ import annotations

import json

from tests.go.harness import Harness
from tests.river.conftest import Run, check_contains_filters, check_finalized_order, data, job


def test_keyset_pages_in_every_format(river: Harness, qctl: Run) -> None:
    ids = river.call("insert", queue="paged", n=5)["ids"]
    first = qctl("jobs", "list", "--queue", "paged", "-n", "2", "-o", "json")
    assert [j["id"] for j in data(first)] == sorted(ids, reverse=True)[:2]
    cursor = first.stderr.split("--after ")[1].split()[0]
    rest = data(qctl("jobs", "list", "--queue", "paged", "--after", cursor, "-o", "json"))
    assert [j["id"] for j in rest] == sorted(ids, reverse=True)[2:]
    lines = qctl("jobs", "list", "--queue", "paged", "-o", "jsonl").stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == sorted(ids, reverse=True)
    csv = qctl("jobs", "list", "--queue", "paged", "-o", "csv").stdout.splitlines()
    assert csv[0].startswith("id,state,queue,kind") and len(csv) == 6
    table = qctl("jobs", "list", "--queue", "paged")
    assert table.exit_code == 0 and "available" in table.stdout
    bad = qctl("jobs", "list", "--after", "x")
    assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1


def test_show_decodes_and_sanitises(river: Harness, qctl: Run) -> None:
    note = "\x1b[31mred\x1b]0;title\x07"
    [id_] = river.call(
        "insert", queue="shown", note=note, unique=True, tags=["t-1"], metadata={"k": "v"}
    )["ids"]
    river.call("cancel", id=id_)
    shown = data(qctl("jobs", "show", str(id_), "-o", "json"))
    assert shown["args"] == {"mode": "ok", "note": note}  # exact in JSON
    assert shown["metadata"]["k"] == "v" and "cancel_attempted_at" in shown["metadata"]
    assert shown["tags"] == ["t-1"] and len(shown["unique_key"]) == 64
    assert "cancelled" not in shown["unique_states"] and "available" in shown["unique_states"]
    table = qctl("jobs", "show", str(id_))
    assert table.exit_code == 0 and "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert job(river, id_)["state"] == shown["state"] == "cancelled"
    missing = qctl("jobs", "show", "999999")
    assert missing.exit_code == 3 and "no job '999999'" in missing.stderr


def test_priority_and_tag_filters(river: Harness, qctl: Run) -> None:
    """River UI's filters: --priority (any of those given) and --tag (every one given,
    River's TagsAll), on the listing, the triage and a bulk verb's selection alike."""
    urgent = river.call("insert", queue="filtered", priority=1, tags=["red", "eu-west"])["ids"]
    tagged = river.call("insert", queue="filtered", priority=3, tags=["red"])["ids"]
    river.call("insert", queue="filtered", priority=3, tags=["blue"])

    def ids(*args: str) -> list[int]:
        rows = data(qctl("jobs", "list", "--queue", "filtered", *args, "-o", "json"))
        return sorted(j["id"] for j in rows)

    assert ids("--priority", "1") == urgent
    assert ids("--tag", "red") == sorted(urgent + tagged)
    assert ids("--tag", "red", "--tag", "eu-west") == urgent
    assert ids("--priority", "3", "--tag", "red") == tagged
    plan = data(
        qctl("jobs", "cancel", "--queue", "filtered", "--tag", "red", "--dry-run", "-o", "json")
    )
    assert sorted(int(i) for i in plan["ids"]) == sorted(urgent + tagged), plan
    groups = data(qctl("jobs", "errors", "--state", "available", "--tag", "eu-west", "-o", "json"))
    assert [g["newest"] for g in groups] == urgent
    for bad in (["--priority", "5"], ["--priority", "x"]):
        result = qctl("jobs", "list", *bad)
        assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, bad


def test_queues_show(river: Harness, qctl: Run) -> None:
    river.call("queues_create", queues=["shown-q"])
    river.call("pause", queue="shown-q")
    river.call("insert", queue="shown-q", n=2)
    [cancelled] = river.call("insert", queue="shown-q")["ids"]
    river.call("cancel", id=cancelled)
    shown = data(qctl("queues", "show", "shown-q", "-o", "json"))
    assert (shown["queue"], shown["metadata"], shown["available"], shown["cancelled"]) == (
        "shown-q", {}, 2, 1
    )  # fmt: skip
    assert shown["paused_at"] and shown["oldest_available_age"] is not None
    listed = {q["queue"]: q for q in data(qctl("queues", "list", "-o", "json"))}["shown-q"]
    same = [k for k in listed if k != "oldest_available_age"]
    assert {k: shown[k] for k in same} == {k: listed[k] for k in same}
    unregistered = data(qctl("queues", "show", "paged", "-o", "json"))  # jobs, no row
    assert unregistered["paused_at"] is None and unregistered["available"] == 5
    table = qctl("queues", "show", "shown-q")
    assert table.exit_code == 0 and "available" in table.stdout
    missing = qctl("queues", "show", "nosuch")
    assert missing.exit_code == 3 and "no queue 'nosuch'" in missing.stderr


def test_args_and_metadata_filters(river: Harness, qctl: Run) -> None:
    check_contains_filters(river, qctl, postgres=True)


def test_finalized_jobs_list_newest_finalized_first(river: Harness, qctl: Run) -> None:
    check_finalized_order(river, qctl)
