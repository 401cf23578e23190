"""``qctl jobs`` on both backends: formats, filters, exit codes, confirmation,
--dry-run, --read-only and id prefixes."""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest

from qctl_kit.errors import NotFound
from qctl_store.postgres import PostgresStore
from qctl_store.sqlite import SqliteStore
from qctl_store.types import JobState, Source
from tests.cli.conftest import Run, enqueue, make_dead, out_json


def test_a_short_first_page_is_its_own_total(
    run: Run, st: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fewer jobs than the limit on the first page are all the matching ones: the table
    says so without counting; a full page still counts."""
    enqueue(st, kind, 3)
    for cls in (PostgresStore, SqliteStore):
        monkeypatch.setattr(cls, "count_jobs", lambda *a, **k: (7, True))
    assert "3 shown of 3 matching" in run("jobs", "list", "--kind", kind).stderr
    assert "3 shown of ~7 matching" in run("jobs", "list", "--kind", kind, "-n", "3").stderr


def test_list_formats(run: Run, st: Any, kind: str) -> None:
    ids = enqueue(st, kind, 3)
    table = run("jobs", "list", "--kind", kind)
    assert table.exit_code == 0, table.stderr
    assert all(str(i) in table.stdout for i in ids)
    assert "3 shown of 3 matching" in table.stderr

    rows = out_json(run("jobs", "list", "--kind", kind, "-o", "json"))
    assert {r["id"] for r in rows} == {str(i) for i in ids}
    assert rows[0]["state"] == "pending" and rows[0]["enqueued_at"].endswith("Z")
    assert "payload" not in rows[0]

    lines = run("jobs", "list", "--kind", kind, "-o", "jsonl").stdout.splitlines()
    assert len(lines) == 3 and all(json.loads(line)["kind"] == kind for line in lines)

    parsed = list(
        csv.DictReader(io.StringIO(run("jobs", "list", "--kind", kind, "-o", "csv").stdout))
    )
    assert len(parsed) == 3 and parsed[0]["kind"] == kind


def test_list_filters_and_pages(run: Run, st: Any, kind: str) -> None:
    enqueue(st, kind, 2, meta={"team": "red"})
    enqueue(st, kind, 1, meta={"team": "blue"})
    make_dead(st, kind + "_d", 2, error="Upstream TIMEOUT")
    red = out_json(run("jobs", "list", "--kind", kind, "--meta", "team=red", "-o", "json"))
    assert len(red) == 2
    dead = out_json(
        run(
            "jobs",
            "list",
            "--kind",
            kind + "_d",
            "--state",
            "dead",
            "--error",
            "timeout",
            "-o",
            "json",
        )
    )
    assert len(dead) == 2
    assert out_json(run("jobs", "list", "--kind", kind, "--state", "dead", "-o", "json")) == []

    first = run("jobs", "list", "--kind", kind, "--limit", "2", "-o", "json")
    assert len(json.loads(first.stdout)) == 2
    cursor = first.stderr.split("--after ")[1].split()[0]
    rest = out_json(
        run("jobs", "list", "--kind", kind, "--limit", "2", "--after", cursor, "-o", "json")
    )
    assert len(rest) == 1
    assert rest[0]["id"] not in {r["id"] for r in json.loads(first.stdout)}
    bad = run("jobs", "list", "--after", "not-a-cursor")
    assert bad.exit_code == 2 and "cursor" in bad.stderr


def test_show_and_attempts(run: Run, st: Any, kind: str) -> None:
    (ident,) = make_dead(st, kind, 1, error="kaput")
    shown = out_json(run("jobs", "show", str(ident), "-o", "json"))
    assert shown["job"]["id"] == str(ident) and shown["job"]["state"] == "dead"
    assert "payload" not in shown["job"]
    assert set(shown["timings"]) == {"queued_for", "ran_for"}
    assert [a["error"] for a in shown["attempts"]] == ["kaput"]
    with_payload = out_json(run("jobs", "show", str(ident), "--payload", "-o", "json"))
    assert with_payload["job"]["payload"] == {}
    table = run("jobs", "show", str(ident)[:8])
    assert table.exit_code == 0 and "kaput" in table.stdout and "queued_for" in table.stdout
    attempts = out_json(run("jobs", "attempts", str(ident), "-o", "json"))
    assert attempts[0]["attempt"] == 1 and attempts[0]["error"] == "kaput"


def test_prefix_resolution(run: Run, st: Any, kind: str) -> None:
    (ident,) = enqueue(st, kind, 1)
    assert out_json(run("jobs", "show", ident.hex[:10], "-o", "json"))["job"]["id"] == str(ident)
    short = run("jobs", "show", ident.hex[:5])
    assert short.exit_code == 2 and "too short" in short.stderr
    missing = run("jobs", "show", "ffffffff-ffff")
    assert missing.exit_code == 3
    whole_missing = run("jobs", "show", str(uuid.uuid4()))
    assert whole_missing.exit_code == 3 and whole_missing.stderr.count("\n") == 1
    # Two ids sharing a long prefix make it ambiguous.
    base = uuid.uuid4().hex[:12]
    a = uuid.UUID(base + "0" * 19 + "1")
    b = uuid.UUID(base + "0" * 19 + "2")
    enqueue(st, kind, 1, id=a)
    enqueue(st, kind, 1, id=b)
    amb = run("jobs", "show", base)
    assert amb.exit_code == 2 and "ambiguous" in amb.stderr
    assert str(a) in amb.stderr and str(b) in amb.stderr


def test_enqueue(run: Run, st: Any, kind: str) -> None:
    res = out_json(
        run(
            "jobs",
            "enqueue",
            kind,
            "--payload",
            '{"n": 1}',
            "--delay",
            "1h",
            "--max-attempts",
            "3",
            "--meta",
            "a=b",
            "-o",
            "json",
        )
    )
    job = st.get_job(Source.QUEUE, uuid.UUID(res["id"]))
    assert res["inserted"] is True
    assert job.state == JobState.SCHEDULED and job.payload == {"n": 1}
    assert job.max_attempts == 3 and job.meta == {"a": "b"}
    again = [
        run("jobs", "enqueue", kind, "--idempotency-key", "k1", "--ttl", "1h", "-o", "json")
        for _ in range(2)
    ]
    assert [json.loads(r.stdout)["inserted"] for r in again] == [True, False]
    text = run("jobs", "enqueue", kind, "--at", "+2h")
    assert text.exit_code == 0 and text.stdout.startswith("enqueued")
    for bad in (
        ["--payload", "{"],
        ["--delay", "soon"],
        ["--delay", "1h", "--at", "+1h"],
        ["--meta", "novalue"],
        ["--at", "tomorrow"],
    ):
        r = run("jobs", "enqueue", kind, *bad)
        assert r.exit_code == 2, bad
        assert r.stdout == "" and r.stderr.startswith("qctl: error:")
        assert "Traceback" not in r.stderr


def test_retry_by_id_and_state_errors(run: Run, st: Any, kind: str) -> None:
    ids = make_dead(st, kind, 2)
    refused = run("jobs", "retry", *(str(i) for i in ids))
    assert refused.exit_code == 4 and "--yes" in refused.stderr  # off a terminal
    res = run("jobs", "retry", *(str(i) for i in ids), "--yes")
    assert res.exit_code == 0 and "retried 2 azync jobs" in res.stdout
    assert all(str(i) in res.stdout for i in ids)
    assert all(st.get_job(Source.QUEUE, i).state == JobState.PENDING for i in ids)
    again = run("jobs", "retry", str(ids[0]), "--yes")
    assert again.exit_code == 3 and "nothing to retry: skipped 1 (1 pending)" in again.stderr
    usage = run("jobs", "retry")
    assert usage.exit_code == 2


def test_retry_all_dead(run: Run, st: Any, kind: str, tty: None) -> None:
    ids = make_dead(st, kind, 3)
    dry = out_json(run("jobs", "retry", "--all-dead", "--kind", kind, "--dry-run", "-o", "json"))
    assert dry == {
        "verb": "jobs retry",
        "system": "azync",
        "target": dry["target"],
        "selection": {"by": "filter", "kind": kind},
        "selected": 3,
        "will": dry["will"],
        "states": {"dead": 3},
        "skipped": {},
        "sample": dry["sample"],
        "caveats": [],
        "digest": dry["digest"],
        "ids": dry["ids"],
        "dry_run": True,
    }
    assert sorted(dry["ids"]) == sorted(str(i) for i in ids)
    assert len(dry["sample"]) == 3 and {j["label"] for j in dry["sample"]} == {kind}
    assert st.kind_depths(Source.QUEUE)[kind].dead == 3

    declined = run("jobs", "retry", "--all-dead", "--kind", kind, input="n\n")
    assert declined.exit_code == 4 and "declined" in declined.stderr
    assert st.kind_depths(Source.QUEUE)[kind].dead == 3

    done = run("jobs", "retry", "--all-dead", "--kind", kind, "--source", "queue", input="y\n")
    assert done.exit_code == 0 and "retried 3 azync jobs" in done.stdout
    assert st.kind_depths(Source.QUEUE)[kind].dead == 0


def test_retry_all_dead_by_filter_needs_yes_off_terminal(run: Run, st: Any, kind: str) -> None:
    disk = make_dead(st, kind, 2, error="disk full")
    make_dead(st, kind, 1, error="other")
    refused = run("jobs", "retry", "--all-dead", "--kind", kind, "--error", "disk")
    assert refused.exit_code == 4 and "--yes" in refused.stderr
    done = out_json(
        run("jobs", "retry", "--all-dead", "--kind", kind, "--error", "disk", "--yes", "-o", "json")
    )
    assert (done["done"], sorted(done["ids"])) == (2, sorted(str(i) for i in disk))
    assert st.kind_depths(Source.QUEUE)[kind].dead == 1


def test_single_job_actions(run: Run, st: Any, kind: str) -> None:
    (sched,) = enqueue(st, kind, 1, delay=timedelta(hours=1))
    assert run("jobs", "pause", str(sched), "--yes").exit_code == 0
    assert st.get_job(Source.QUEUE, sched).state == JobState.PAUSED
    assert run("jobs", "resume", str(sched), "--yes").exit_code == 0
    assert st.get_job(Source.QUEUE, sched).state == JobState.SCHEDULED
    res = out_json(run("jobs", "run-now", str(sched), "--yes", "-o", "json"))
    assert res == {
        "verb": "jobs run-now",
        "system": "azync",
        "target": res["target"],
        "selected": 1,
        "done": 1,
        "skipped": {},
        "batches": 1,
        "stopped_part_way": False,
        "ids": [str(sched)],
        "plan_digest": None,
        "error": None,
    }
    assert st.get_job(Source.QUEUE, sched).state == JobState.PENDING
    assert run("jobs", "run-now", str(sched), "--yes").exit_code == 3
    assert run("jobs", "archive", str(sched), "--yes").exit_code == 0
    assert st.get_job(Source.QUEUE, sched).state == JobState.DEAD
    assert run("jobs", "archive", str(sched), "--yes").exit_code == 3


def test_delete(run: Run, st: Any, kind: str, tty: None) -> None:
    ids = enqueue(st, kind, 3)
    wrong = run("jobs", "delete", str(ids[0]), "--state", "dead", "--yes")
    assert wrong.exit_code == 3 and "skipped 1 (1 pending)" in wrong.stderr
    settled = run("jobs", "delete", str(ids[0]), "--yes")  # by id: settled jobs only
    assert settled.exit_code == 3 and "skipped 1 (1 pending)" in settled.stderr
    dry = out_json(
        run("jobs", "delete", str(ids[0]), "--state", "pending", "--dry-run", "-o", "json")
    )
    assert (dry["ids"], dry["states"]) == ([str(ids[0])], {"pending": 1})
    assert run("jobs", "delete", str(ids[0]), "--state", "pending", input="n\n").exit_code == 4
    assert run("jobs", "delete", str(ids[0]), "--state", "pending", "--yes").exit_code == 0
    with pytest.raises(NotFound):
        st.get_job(Source.QUEUE, ids[0])
    dry_all = out_json(
        run(
            "jobs",
            "delete",
            "--all",
            "--state",
            "pending",
            "--kind",
            kind,
            "--dry-run",
            "-o",
            "json",
        )
    )
    assert sorted(dry_all["ids"]) == sorted(str(i) for i in ids[1:])
    done = out_json(
        run(
            "jobs",
            "delete",
            "--all",
            "--state",
            "pending",
            "--kind",
            kind,
            "--source",
            "queue",
            "--yes",
            "-o",
            "json",
        )
    )
    assert (done["done"], sorted(done["ids"])) == (2, sorted(str(i) for i in ids[1:]))
    assert run("jobs", "delete", "--all", "--kind", kind).exit_code == 2  # --state required
    active = run("jobs", "delete", "--all", "--kind", kind, "--state", "active", "--yes")
    assert active.exit_code == 2 and "does not delete active jobs" in active.stderr


def test_vacuum_dead(run: Run, st: Any, kind: str) -> None:
    make_dead(st, kind, 2)
    dry = out_json(
        run("jobs", "vacuum-dead", "--older-than", "0", "--kind", kind, "--dry-run", "-o", "json")
    )
    assert dry["count"] == 2
    assert run("jobs", "vacuum-dead", "--older-than", "0", "--kind", kind).exit_code == 4
    done = out_json(
        run("jobs", "vacuum-dead", "--older-than", "0", "--kind", kind, "--yes", "-o", "json")
    )
    assert done["count"] == 2


def test_read_only_refuses_every_write(run: Run, st: Any, kind: str) -> None:
    (dead,) = make_dead(st, kind, 1)
    writes = [
        ["jobs", "enqueue", kind],
        ["jobs", "retry", str(dead), "--yes"],
        ["jobs", "retry", "--all-dead", "--yes"],
        ["jobs", "delete", str(dead), "--state", "dead", "--yes"],
        ["jobs", "delete", "--all", "--state", "dead", "--yes"],
        ["jobs", "vacuum-dead", "--older-than", "0", "--yes"],
        ["jobs", "pause", str(dead), "--yes"],
        ["jobs", "archive", str(dead), "--yes"],
    ]
    for args in writes:
        r = run(*args, root=["--read-only"])
        assert r.exit_code == 4, (args, r.stderr)
        assert "read-only" in r.stderr
    assert st.get_job(Source.QUEUE, dead).state == JobState.DEAD
    assert run("jobs", "list", "--kind", kind, root=["--read-only"]).exit_code == 0
    dry = run("jobs", "retry", "--all-dead", "--kind", kind, "--dry-run", root=["--read-only"])
    assert dry.exit_code == 0


def test_singular_alias_is_hidden(run: Run, st: Any, kind: str) -> None:
    (dead,) = make_dead(st, kind, 1)
    assert run("job", "retry", str(dead), "--yes").exit_code == 0
    commands = [
        line.split()[0]
        for line in run("--help").stdout.splitlines()
        if line.startswith("  ") and line.split()
    ]
    assert "jobs" in commands and "job" not in commands and "dag" not in commands


def test_delete_by_id_passes_over_a_job_in_another_state(
    run: Run, st: Any, kind: str, tty: None
) -> None:
    pending, other = enqueue(st, kind, 2)
    run("jobs", "pause", str(other), "--yes")
    args = ["jobs", "delete", str(pending), str(other), "--state", "pending"]
    dry = out_json(run(*args, "--dry-run", "-o", "json"))
    assert (dry["ids"], dry["skipped"]) == ([str(pending)], {"paused": 1})
    declined = run(*args, input="n\n")
    assert declined.exit_code == 4 and "Delete 1 azync job (1 pending: " in declined.stderr
    done = out_json(run(*args, "--yes", "-o", "json"))
    assert (done["ids"], done["skipped"]) == ([str(pending)], {"paused": 1})
    assert st.get_job(Source.QUEUE, other).state == JobState.PAUSED


def test_show_as_csv_is_one_record(run: Run, st: Any, kind: str) -> None:
    (ident,) = make_dead(st, kind, 1)
    rows = list(csv.reader(io.StringIO(run("jobs", "show", str(ident), "-o", "csv").stdout)))
    assert len(rows) == 2 and len(rows[0]) == len(rows[1])
    record = dict(zip(*rows, strict=True))
    assert record["id"] == str(ident) and record["state"] == "dead" and "queued_for" in record


def test_empty_table_says_so_on_stderr(run: Run, kind: str) -> None:
    res = run("jobs", "list", "--kind", kind)
    assert res.exit_code == 0 and res.stdout == "" and "no rows" in res.stderr


def test_list_says_when_no_index_holds_the_listing(
    run: Run, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("qctl_store.postgres.admin.ESTIMATE_THRESHOLD", 0)  # "huge"
    paused = run("jobs", "list", "--state", "paused")
    assert paused.exit_code == 0, paused.stderr
    if backend == "postgres":  # no paused index until `qctl db tune`
        assert "reads the whole job table (`qctl db tune` adds one" in paused.stderr
        assert "reads the whole job table; try --state" in run("jobs", "list").stderr
    else:  # embedded tables stay small
        assert "whole job table" not in paused.stderr
    dead = run("jobs", "list", "--state", "dead").stderr
    assert "whole job table" not in dead
    if backend == "postgres":  # azync's dead index holds enqueue order, not failure order
        assert "it reads every dead job, sorted (`qctl db tune` adds one" in dead
    assert "no index" not in run("jobs", "list", "--state", "pending").stderr
