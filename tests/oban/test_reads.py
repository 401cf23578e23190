"""qctl's reads of an Oban database in both flavours: keyset pages by id in every
output format, a job's decoded columns and attempt history, instants in UTC, database
text sanitised before a terminal and exact in JSON; Oban is PostgreSQL only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg

from tests.oban import ddl
from tests.oban.conftest import Run, data


def test_keyset_pages_in_every_format(oban: psycopg.Connection[Any], qctl: Run) -> None:
    ids = ddl.insert(oban, "paged", 5)
    newest = sorted(ids, reverse=True)
    first = qctl("jobs", "list", "--queue", "paged", "-n", "2", "-o", "json")
    assert [j["id"] for j in data(first)] == newest[:2]
    cursor = first.stderr.split("--after ")[1].split()[0]
    rest = data(qctl("jobs", "list", "--queue", "paged", "--after", cursor, "-o", "json"))
    assert [j["id"] for j in rest] == newest[2:]
    lines = qctl("jobs", "list", "--queue", "paged", "-o", "jsonl").stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == newest
    csv = qctl("jobs", "list", "--queue", "paged", "-o", "csv").stdout.splitlines()
    assert csv[0].startswith("id,state,queue,worker") and len(csv) == 6
    table = qctl("jobs", "list", "--queue", "paged")
    assert table.exit_code == 0 and "available" in table.stdout
    bad = qctl("jobs", "list", "--after", "x")
    assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1
    state = qctl("jobs", "list", "--state", "running")
    assert state.exit_code == 2 and "not an Oban job state" in state.stderr


def test_show_decodes_sanitises_and_gives_utc(oban: psycopg.Connection[Any], qctl: Run) -> None:
    note = "\x1b[31mred\x1b]0;title\x07"
    [id_] = ddl.insert(oban, "shown", args={"note": note}, tags=["t-1"], meta='{"k": "v"}')
    [claimed] = ddl.fetch(oban, "shown", node="web.7")
    assert claimed == id_
    ddl.fail(oban, id_, note)
    shown = data(qctl("jobs", "show", str(id_), "-o", "json"))
    assert shown["args"] == {"note": note} and shown["meta"] == {"k": "v"}  # exact in JSON
    assert shown["tags"] == ["t-1"] and shown["attempted_by"][0] == "web.7"
    assert shown["state"] == "retryable" and shown["attempt"] == 1
    assert [e["error"] for e in shown["errors"]] == [note] and shown["error_count"] == 1
    [stored] = oban.execute(
        "SELECT to_char(inserted_at, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') FROM oban_jobs WHERE id = %s",
        (id_,),
    ).fetchone()  # type: ignore[misc]
    assert shown["inserted_at"].startswith(stored) and shown["inserted_at"].endswith("Z")
    table = qctl("jobs", "show", str(id_))
    assert table.exit_code == 0 and "\x1b" not in table.stdout and "\x07" not in table.stdout
    errors = data(qctl("jobs", "errors", "--queue", "shown", "-o", "json"))
    assert [(e["id"], [a["error"] for a in e["attempts"]]) for e in errors] == [(id_, [note])]
    missing = qctl("jobs", "show", "999999")
    assert missing.exit_code == 3 and "no job '999999'" in missing.stderr


def test_queues_count_per_state(oban: psycopg.Connection[Any], qctl: Run) -> None:
    ddl.insert(oban, "counted", 3)
    ddl.fetch(oban, "counted")
    ddl.insert(oban, "counted", 1, state="completed", completed_at="2026-01-01")
    [queue] = [q for q in data(qctl("queues", "list", "-o", "json")) if q["queue"] == "counted"]
    assert (queue["available"], queue["executing"], queue["completed"]) == (2, 1, 1)
    from qctl.systems.oban import reads
    from qctl.systems.oban.database import Database
    from tests.conftest import PG_DSN

    db = Database(PG_DSN, str(oban.execute("SELECT current_schema()").fetchone()[0]))  # type: ignore[index]
    try:
        [live] = [q for q in reads.list_queues(db, live=True, cap=1) if q.queue == "counted"]
        assert (live.available, live.executing, live.capped) == (1, 1, ["available", "executing"])
        assert live.completed is None and live.oldest_available_age is not None
    finally:
        db.close()
    shown = data(qctl("queues", "show", "counted", "-o", "json"))
    assert shown["executing"] == 1
    assert qctl("queues", "show", "nowhere").exit_code == 3


def test_oban_is_postgres_only(tmp_path: Path, qctl: Run) -> None:
    from typer.testing import CliRunner

    from qctl.cli.main import app

    path = tmp_path / "oban.db"
    path.touch()
    for args in (["db", "status"], ["jobs", "list"]):
        result = CliRunner().invoke(app, ["--dsn", f"sqlite://{path}", "--system", "oban", *args])
        assert result.exit_code == 2 and "PostgreSQL only" in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_args_and_meta_filters(oban: psycopg.Connection[Any], qctl: Run) -> None:
    """``--args`` and ``--meta`` select the jobs whose columns contain the object given
    (PostgreSQL's @>, a nested value contained in part), on ``jobs list`` and a bulk
    verb's selection alike."""
    meta = '{"tenant": "acme", "n": 3, "deep": {"x": [1, 2]}}'
    [acme] = ddl.insert(oban, "contained", args={"user": 7, "mail": "a@x"}, meta=meta)
    [other] = ddl.insert(oban, "contained", args={"user": 8}, meta='{"tenant": "o", "n": 3}')
    [plain] = ddl.insert(oban, "contained", args={"user": 7})

    def ids(*args: str) -> list[int]:
        rows = data(qctl("jobs", "list", "--queue", "contained", *args, "-o", "json"))
        return sorted(j["id"] for j in rows)

    assert ids("--args", '{"user": 7}') == sorted([acme, plain])
    assert ids("--args", '{"user": 7}', "--meta", "tenant=acme") == [acme]
    assert ids("--meta", '{"n": 3}') == sorted([acme, other])
    assert ids("--meta", '{"n": "3"}') == []
    assert ids("--meta", '{"deep": {"x": [2]}}') == [acme]
    plan = data(
        qctl("jobs", "cancel", "--queue", "contained", "--args", '{"user": 7}',
             "--meta", '{"tenant": "acme"}', "--dry-run", "-o", "json")
    )  # fmt: skip
    assert [int(i) for i in plan["ids"]] == [acme], plan
    [(state,)] = oban.execute("SELECT state::text FROM oban_jobs WHERE id = %s", [acme]).fetchall()
    assert state == "available"  # a dry run
    for bad in (["--args", "[1]"], ["--meta", "{nope"], ["--args", "7"]):
        for verb in (["list"], ["retry", "--dry-run"]):
            result = qctl("jobs", *verb, *bad)
            assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, bad
