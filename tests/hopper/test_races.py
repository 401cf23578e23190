"""qctl acting while a fleet of hopper workers claims and finalizes (the stand-in client,
in hopper's own claim and finalize SQL, one connection per worker): qctl never
finalizes a job a worker holds, so no worker's finalize is ever fenced, no job is in
the live table and history at once or in history twice, and every job ends in
history."""

from __future__ import annotations

import random
import threading
import uuid

from qctl.core import verbs
from qctl.core.errors import WrongState
from qctl.core.verbs import Selection
from qctl.systems.hopper import actions
from qctl.systems.hopper.database import Database
from tests.conftest import PG_DSN, raw_pg
from tests.hopper.worker import Worker

JOBS = 200
WORKERS = 3


def test_cancel_and_retry_beside_a_working_fleet(hopper: Worker, pg_schema: str) -> None:
    ids = [hopper.insert("fleet.job", {"n": i}, queue="fleet-q") for i in range(JOBS)]
    stop = threading.Event()
    fenced: list[uuid.UUID] = []
    failures: list[BaseException] = []

    def work(n: int) -> None:
        w = Worker(pg_schema)
        try:
            client = w.register(f"fleet-{n}")
            rng = random.Random(n)
            idle = 0
            while idle < 20:
                claimed = w.claim("fleet-q", client, limit=4)
                idle = 0 if claimed else idle + 1
                if not claimed and not stop.is_set():
                    idle = 0
                for job in claimed:
                    state = rng.choice(["completed", "completed", "discarded"])
                    if not w.finalize(
                        job, client, state, error="x" if state != "completed" else None
                    ):
                        fenced.append(job)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
        finally:
            w.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(WORKERS)]
    for t in threads:
        t.start()
    db = Database(PG_DSN, pg_schema)
    acted = {"cancelled": 0, "retried": 0, "skipped": 0, "nothing": 0}
    try:
        rng = random.Random(7)
        for _ in range(60):
            # by filter over the whole queue, or by ids a few at a time
            picked = Selection.of_ids([str(j) for j in rng.sample(ids, 5)])
            retry = rng.random() < 0.5
            verb = actions.RETRY if retry else actions.CANCEL
            chosen = picked if rng.random() < 0.5 else Selection(filter={"queues": ["fleet-q"]})
            try:
                result = verbs.run(db, verb, verbs.plan(db, verb, chosen, "test"))
            except WrongState:  # nothing the verb takes, as planned
                acted["nothing"] += 1
                continue
            acted["retried" if retry else "cancelled"] += result.done
            acted["skipped"] += sum(result.skipped.values())
    finally:
        stop.set()
        db.close()
        for t in threads:
            t.join(60)
    assert not failures, failures
    assert fenced == []  # no worker lost a job it held to qctl
    assert acted["cancelled"] > 0 and acted["retried"] > 0
    with raw_pg(pg_schema) as c:
        live = c.execute("SELECT count(*) FROM hopper_jobs WHERE queue = 'fleet-q'").fetchone()
        twice = c.execute(
            "SELECT id FROM hopper_job_history WHERE queue = 'fleet-q'"
            " GROUP BY id HAVING count(*) > 1"
        ).fetchall()
        both = c.execute(
            "SELECT j.id FROM hopper_jobs j JOIN hopper_job_history h USING (id)"
        ).fetchall()
        done = c.execute(
            "SELECT count(DISTINCT id) FROM hopper_job_history WHERE queue = 'fleet-q'"
        ).fetchone()
    assert twice == [] and both == []
    assert live == (0,) and done == (JOBS,)
