"""Shell completion from an Oban database, through the committed bash script: its queues
(those with live jobs or a producer) and its job ids by the digits typed, at most
``values.LIMIT``; nothing at all when the schema is not Oban's."""

from __future__ import annotations

from typing import Any

import psycopg

from qctl.systems.oban import values
from tests.cli.test_generated import bash_complete
from tests.conftest import PG_DSN
from tests.oban import ddl


def test_queues_and_job_ids(oban: psycopg.Connection[Any], pg_schema: str) -> None:
    oban.execute("DELETE FROM oban_jobs")
    oban.execute("SELECT setval(pg_get_serial_sequence('oban_jobs', 'id'), 1, false)")
    ids = ddl.insert(oban, "mail", 24) + ddl.insert(oban, "media", 1, state="scheduled")
    assert ids == list(range(1, 26))
    ddl.insert(oban, "gone", 1, state="completed")  # a queue with live jobs only
    root = ["qctl", "--dsn", PG_DSN, "--schema", pg_schema]
    assert bash_complete([*root, "jobs", "list", "--queue", "m"]) == ["mail", "media"]
    assert bash_complete([*root, "jobs", "retry", "--queue", "me"]) == ["media"]
    assert bash_complete([*root, "jobs", "show", "2"]) == ["2", *map(str, range(26, 19, -1))]
    assert bash_complete([*root, "jobs", "retry", "1"]) == ["1", *map(str, range(19, 9, -1))]
    newest = bash_complete([*root, "jobs", "cancel", ""])
    assert newest == [str(i) for i in range(26, 26 - values.LIMIT, -1)]
    for odd in ("x", "0", "1x", "99999999999999999999"):
        assert bash_complete([*root, "jobs", "show", odd]) == []


def test_nothing_outside_oban(oban: psycopg.Connection[Any]) -> None:
    root = ["qctl", "--dsn", PG_DSN, "--system", "oban", "--schema", "no_such_schema"]
    assert bash_complete([*root, "jobs", "show", "1"]) == []
    assert bash_complete([*root, "jobs", "list", "--queue", ""]) == []
