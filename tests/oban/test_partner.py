"""The oban-py partner itself (oban-py 0.7.0 in its own Python 3.12 environment): it
installs oban-py's schema, inserts, works jobs within its queues' limits, and obeys pause,
resume, scale and cancel through oban-py's own API and signal channel. The runtime tests
beside it (test_runtime.py) rely on each of these."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import PG_DSN
from tests.oban.harness import Partner, executing_writes, until, watch_executing_writes
from tests.oban.schemas import ELIXIR_LATEST, elixir_statements, install_elixir

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def partner(pg_schema: str) -> Iterator[Partner]:
    p = Partner(PG_DSN, pg_schema)
    p.call("install")
    watch_executing_writes(PG_DSN, pg_schema)
    p.call("start", queues={"work": 2, "held": 1, "failing": 1, "paused": 1, "scaled": 1})
    yield p
    p.close()


def test_the_install_is_oban_py_s_own(partner: Partner, pg_schema: str) -> None:
    with psycopg.connect(PG_DSN) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s ORDER BY 1", (pg_schema,)
        ).fetchall()
    assert [t for (t,) in tables if t.startswith("oban_")] == [
        "oban_jobs",
        "oban_leaders",
        "oban_producers",
    ]


def test_jobs_are_worked_once_within_the_limit(partner: Partner) -> None:
    ids = partner.call("insert", worker="work", queue="work", n=20)["ids"]
    until(lambda: partner.counts("work") == {"completed": 20})
    runs = partner.runs()
    assert [runs["started"][i] for i in ids] == [1] * 20
    assert runs["peak"]["work"] <= 2


def test_a_failing_job_records_its_error(partner: Partner) -> None:
    [id_] = partner.call("insert", worker="fail", queue="failing", max_attempts=1)["ids"]
    until(lambda: partner.job(id_)["state"] == "discarded")
    [error] = partner.job(id_)["errors"]
    assert error["attempt"] == 1 and "partner failure" in error["error"]


def test_a_cancel_reaches_a_held_job_through_the_signal(partner: Partner, pg_schema: str) -> None:
    [id_] = partner.call("insert", worker="hold", queue="held")["ids"]
    until(lambda: id_ in partner.runs()["running"].get("held", []))
    assert partner.call("cancel", ids=[id_])["count"] == 1
    until(lambda: partner.job(id_)["state"] == "cancelled")
    assert id_ in partner.runs()["cancelled"]
    assert executing_writes(PG_DSN, pg_schema) == []  # oban-py's own writes are not counted


def test_a_paused_queue_fetches_nothing_until_resumed(partner: Partner) -> None:
    partner.call("pause", queue="paused")
    until(lambda: partner.call("check", queue="paused")["paused"])
    ids = partner.call("insert", worker="work", queue="paused", n=3)["ids"]
    woken = partner.runs()["woken"].get("paused", 0)
    # Three stager runs found the queue's jobs available and woke its producer.
    until(lambda: partner.runs()["woken"].get("paused", 0) >= woken + 3)
    assert partner.counts("paused") == {"available": 3}
    partner.call("resume", queue="paused")
    until(lambda: partner.counts("paused") == {"completed": 3})
    assert [partner.runs()["started"][i] for i in ids] == [1] * 3


def test_a_scaled_queue_runs_at_its_new_limit(partner: Partner) -> None:
    partner.call("scale", queue="scaled", limit=3)
    until(lambda: partner.call("check", queue="scaled")["limit"] == 3)
    partner.call("insert", worker="hold", queue="scaled", n=5)
    until(lambda: len(partner.runs()["running"].get("scaled", [])) == 3)
    partner.call("release", queue="scaled")
    until(lambda: partner.counts("scaled") == {"completed": 5})
    assert partner.runs()["peak"]["scaled"] == 3


def test_the_elixir_flavour_at_each_version(fresh_pg_schema: str) -> None:
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{fresh_pg_schema}"')
    install_elixir(PG_DSN, fresh_pg_schema, 12)
    with psycopg.connect(PG_DSN) as conn:
        comment, peers = conn.execute(
            "SELECT obj_description(%s::regclass, 'pg_class'), to_regclass(%s)",
            (f'"{fresh_pg_schema}".oban_jobs', f'"{fresh_pg_schema}".oban_peers'),
        ).fetchone()
    assert (comment, peers is not None) == ("12", True)
    last = elixir_statements("s", ELIXIR_LATEST)[-1]
    assert last == f"COMMENT ON TABLE \"s\".oban_jobs IS '{ELIXIR_LATEST}'"
    with pytest.raises(ValueError):
        elixir_statements("s", ELIXIR_LATEST + 1)


def test_a_write_to_an_executing_row_by_another_session_is_recorded(
    partner: Partner, pg_schema: str
) -> None:
    """The watch the runtime tests rely on sees a write that is not oban-py's."""
    [id_] = partner.call("insert", worker="hold", queue="held")["ids"]
    until(lambda: id_ in partner.runs()["running"].get("held", []))
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        table = f'"{pg_schema}".oban_jobs'
        conn.execute(f"UPDATE {table} SET meta = meta WHERE id = %s", (id_,))  # no change
        conn.execute(f"UPDATE {table} SET meta = meta || '{{\"x\": 1}}' WHERE id = %s", (id_,))
    assert executing_writes(PG_DSN, pg_schema) == [(id_, "UPDATE", "executing", "")]
    partner.call("cancel", ids=[id_])
    until(lambda: partner.job(id_)["state"] == "cancelled")
