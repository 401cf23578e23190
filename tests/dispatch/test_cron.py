"""``qctl cron enable|disable|delete`` on entries dispatch's engine registered: only the
enabled column changes (dispatch's API writes the whole row back), never while the
scheduler holds an entry's fire lock; dry runs and read-only write nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from qctl.systems.dispatch.actions import HOLD, HOLD_BY
from tests.conftest import raw_pg
from tests.dispatch.conftest import Run, data, row, snapshot
from tests.go.harness import Harness, HarnessError


def _cron(dispatch: Harness, qctl: Run, name: str) -> str:
    dispatch.call("cron", name=name, schedule="*/5 * * * *", job_name="tick", queue="cron-q")
    [entry] = [c for c in data(qctl("cron", "list", "-o", "json")) if c["name"] == name]
    return str(entry["id"])


def test_disable_and_enable_write_only_enabled(
    dispatch: Harness, pg_schema: str, qctl: Run
) -> None:
    cron_id = _cron(dispatch, qctl, "every-five")
    before = row(pg_schema, "dispatch_cron_entries", cron_id)
    assert data(qctl("cron", "disable", "every-five", "--dry-run", "-o", "json"))["dry_run"]
    assert row(pg_schema, "dispatch_cron_entries", cron_id) == before
    assert qctl("cron", "disable", "every-five").exit_code == 4  # no --yes off a terminal

    done = data(qctl("cron", "disable", "every-five", "--yes", "-o", "json"))
    assert (done["ids"], done["done"]) == ([cron_id], 1) and "dry_run" not in done
    after = row(pg_schema, "dispatch_cron_entries", cron_id)
    assert after["enabled"] is False and after["updated_at"] > before["updated_at"]
    # The entry's fire lock, held for a while in qctl's name (see the scheduler tests).
    assert after["locked_by"] == HOLD_BY
    assert after["locked_until"] == after["updated_at"] + HOLD
    moved = ("enabled", "updated_at", "locked_by", "locked_until")
    same = {k for k in before if k not in moved}
    assert {k: after[k] for k in same} == {k: before[k] for k in same}
    again = qctl("cron", "disable", cron_id, "--yes")
    assert again.exit_code == 3 and "already disabled" in again.output
    assert data(qctl("cron", "enable", cron_id, "--yes", "-o", "json"))["ids"] == [cron_id]
    enabled = row(pg_schema, "dispatch_cron_entries", cron_id)
    assert enabled["enabled"] is True
    assert (enabled["locked_by"], enabled["locked_until"]) == (None, None)  # released
    # dispatch's engine registering the entry again (on the application's next start)
    # finds it and leaves it as it is.
    dispatch.call("cron", name="every-five", schedule="*/5 * * * *", job_name="tick")
    assert row(pg_schema, "dispatch_cron_entries", cron_id)["enabled"] is True


def test_refused_while_the_scheduler_fires_it(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    cron_id = _cron(dispatch, qctl, "firing")
    assert dispatch.call("cron_lock", id=cron_id, limit=60)["acquired"] is True
    before = snapshot(pg_schema)
    for verb in ("disable", "delete"):
        refused = qctl("cron", verb, "firing", "--yes")
        assert refused.exit_code == 3 and "firing now" in refused.output
    assert snapshot(pg_schema) == before


def test_delete_and_read_only(dispatch: Harness, pg_schema: str, qctl: Run) -> None:
    cron_id = _cron(dispatch, qctl, "to-delete")
    before = snapshot(pg_schema)
    for verb in ("disable", "delete"):
        assert qctl("cron", verb, cron_id, "--yes", root=("--read-only",)).exit_code == 4
    assert qctl("cron", "delete", cron_id, "--dry-run", "-o", "json").exit_code == 0
    assert snapshot(pg_schema) == before
    assert data(qctl("cron", "delete", "to-delete", "--yes", "-o", "json"))["ids"] == [cron_id]
    with raw_pg(pg_schema) as c:
        gone = c.execute("SELECT 1 FROM dispatch_cron_entries WHERE id = %s", (cron_id,))
        assert gone.fetchone() is None
    assert qctl("cron", "delete", "to-delete", "--yes").exit_code == 3


def test_dispatch_scheduler_cannot_take_the_leadership_on_postgres(dispatch: Harness) -> None:
    """A fact about dispatch v0.1.0 that the cron verbs are read against: only the
    leader fires entries (cron/scheduler.go tick), and the PostgreSQL store's
    AcquireLeadership fails on its own leader check, so no entry fires on PostgreSQL."""
    worker = dispatch.call("worker", hostname="would-lead", queues=["cron-q"], limit=1)["id"]
    with pytest.raises(HarnessError, match="model must be a struct"):
        dispatch.call("lead", worker_id=worker)


def _jobs_named(schema: str, name: str) -> int:
    with raw_pg(schema) as c:
        found = c.execute("SELECT count(*) FROM dispatch_jobs WHERE name = %s", (name,))
        return int((found.fetchone() or (0,))[0])


@pytest.fixture
def scheduler(dispatch: Harness) -> Iterator[Harness]:
    """dispatch's own cron scheduler (cron/scheduler.go, in the harness), leading."""
    dispatch.call("sched_start")
    yield dispatch
    dispatch.call("sched_stop")


def _due(dispatch: Harness, pg_schema: str, name: str, job_name: str) -> str:
    dispatch.call("cron", name=name, schedule="@every 1h", job_name=job_name)
    with raw_pg(pg_schema) as c:
        due = c.execute(
            "UPDATE dispatch_cron_entries SET next_run_at = now() - interval '1 minute'"
            " WHERE name = %s RETURNING id",
            (name,),
        )
        return str((due.fetchone() or ("",))[0])


def test_a_disable_between_the_schedulers_read_and_its_fire_is_undone(
    scheduler: Harness, pg_schema: str
) -> None:
    """Why qctl's disable takes the fire lock: a write of the enabled column alone, made
    after the scheduler read the entry (its tick lists every entry, then fires each due
    one), is written back over by the fire, which writes the whole entry it read."""
    cron_id = _due(scheduler, pg_schema, "undone", "undone.tick")
    assert {"name": "undone", "enabled": True} in scheduler.call("sched_pause")["entries"]
    with raw_pg(pg_schema) as c:
        c.execute("UPDATE dispatch_cron_entries SET enabled = false WHERE id = %s", (cron_id,))
    scheduler.call("sched_resume")
    assert row(pg_schema, "dispatch_cron_entries", cron_id)["enabled"] is True
    assert _jobs_named(pg_schema, "undone.tick") == 1


def test_disable_lasts_against_a_scheduler_that_read_the_entry_before(
    scheduler: Harness, pg_schema: str, qctl: Run
) -> None:
    """qctl's disable between the scheduler's read and its fire: the fire does not run
    (the entry's fire lock is qctl's), nothing is written back, and the scheduler's
    next read finds the entry disabled and skips it."""
    cron_id = _due(scheduler, pg_schema, "held", "held.tick")
    assert {"name": "held", "enabled": True} in scheduler.call("sched_pause")["entries"]
    done = data(qctl("cron", "disable", "held", "--yes", "-o", "json"))
    assert done["ids"] == [cron_id]
    scheduler.call("sched_resume")
    assert {"name": "held", "enabled": False} in scheduler.call("sched_pause")["entries"]
    scheduler.call("sched_resume")
    assert row(pg_schema, "dispatch_cron_entries", cron_id)["enabled"] is False
    assert _jobs_named(pg_schema, "held.tick") == 0
    # Enabled again by qctl, the entry is the scheduler's at once: it fires.
    assert data(qctl("cron", "enable", "held", "--yes", "-o", "json"))["ids"] == [cron_id]
    scheduler.call("sched_pause")
    scheduler.call("sched_resume")
    assert _jobs_named(pg_schema, "held.tick") == 1
    entry = row(pg_schema, "dispatch_cron_entries", cron_id)
    assert entry["enabled"] is True and entry["locked_by"] is None
