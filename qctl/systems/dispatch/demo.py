"""The dispatch demo's workload: a producer and stand-in workers on a dispatch schema.

dispatch's Go runtime cannot ship with qctl, so the workers are labelled stand-ins that
run dispatch v0.1.0's own worker statements (``queries/demo.sql``: its dequeue, heartbeat,
settle and DLQ push; the cluster's registration and leadership; the cron scheduler's
fire; a workflow run's checkpoints) from Python: what qctl then shows and operates is
what a dispatch fleet leaves, on every screen of the dashboard. Jobs are enqueued as
dispatch's EnqueueJob writes them (``demo.sql`` ``enqueue_job``). No typer, no textual:
``cli/demo.py`` runs it.
"""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from typing import Any

from qctl.systems.dispatch import reads
from qctl.systems.dispatch.actions import new_id
from qctl.systems.dispatch.database import ZERO_WORKER_ID, Database
from qctl_kit.sqlfile import Queries

QUEUES = ("default", "emails", "reports")
NAMES = {
    "default": ("thumbnail.render", "cache.warm"),
    "emails": ("email.send", "email.digest"),
    "reports": ("report.build",),
}
FAIL_RATE = 0.15
"""How often an attempt fails (or a workflow run); a job with no retries left goes to
the DLQ."""
CRONS = (
    ("demo.digest", "@every 20s", "email.digest", "emails"),
    ("demo.cache-warm", "@every 30s", "cache.warm", ""),
)
"""The demo's cron entries: name, schedule, job, queue ("": the scheduler's default)."""
FLOW = ("order.fulfil", ("reserve", "charge", "ship"))
"""The demo's workflow: its name and steps, one checkpoint each."""
LEASE = "15 seconds"
"""How long the leadership and a cron fire's lock are held (renewed while it works)."""


@dataclass
class Workload:
    """``start()`` runs a producer and ``workers`` stand-in workers until ``stop()``."""

    db: Database
    speed: float = 1.0
    workers: int = 2
    seed: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _worker_ids: list[str] = field(default_factory=list)

    def start(self) -> None:
        rng = random.Random(self.seed)
        q = reads.queries("demo.sql")
        self._worker_ids = [new_id("wkr") for _ in range(self.workers)]
        with self.db.transaction():
            for n, worker_id in enumerate(self._worker_ids):
                self.db.execute(
                    q.register_worker,
                    {
                        "id": worker_id,
                        "hostname": f"demo-stand-in-{n + 1}",
                        "queues": list(QUEUES),
                        "concurrency": 2,
                        "metadata": json.dumps({"stand_in": "qctl demo"}),
                    },
                )
            for name, schedule, job_name, queue in CRONS:
                self.db.execute(
                    q.register_cron,
                    {
                        "id": new_id("cron"),
                        "name": name,
                        "schedule": schedule,
                        "job_name": job_name,
                        "queue": queue,
                        "payload": b"{}",
                    },
                )
        self._threads = [
            threading.Thread(target=self._produce, args=(rng,), daemon=True),
            threading.Thread(target=self._flows, args=(random.Random(rng.random()),), daemon=True),
        ]
        self._threads += [
            threading.Thread(
                target=self._work, args=(worker_id, random.Random(rng.random())), daemon=True
            )
            for worker_id in self._worker_ids
        ]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(10)
        q = reads.queries("demo.sql")
        with self.db.transaction():
            for worker_id in self._worker_ids:
                self.db.execute(q.deregister_worker, {"id": worker_id})

    def _produce(self, rng: random.Random) -> None:
        q = reads.queries("demo.sql")
        while not self._stop.wait(0.2 / self.speed):
            queue = rng.choice(QUEUES)
            with self.db.transaction():
                self.db.one(
                    q.enqueue_job,
                    {
                        "id": new_id(),
                        "name": rng.choice(NAMES[queue]),
                        "queue": queue,
                        "payload": json.dumps({"n": rng.randrange(1000)}).encode(),
                        "max_retries": rng.choice((0, 1, 3)),
                        "scope_app_id": "demo",
                        "scope_org_id": "",
                        "worker_id": ZERO_WORKER_ID,
                        "timeout": 30 * 10**9,
                    },
                )

    def _work(self, worker_id: str, rng: random.Random) -> None:
        q = reads.queries("demo.sql")
        while not self._stop.wait(0.3 / self.speed):
            self.db.execute(q.heartbeat_worker, {"id": worker_id})
            self._lead(q, worker_id)
            with self.db.transaction():
                jobs = self.db.all(q.dequeue, {"queues": list(QUEUES), "limit": 2})
            for job in jobs:
                self.db.execute(q.heartbeat, {"id": job["id"]})
                self._settle(q, job, failed=rng.random() < FAIL_RATE)

    def _lead(self, q: Queries, worker_id: str) -> None:
        """The cluster's leadership, and the leader's cron tick (cron/scheduler.go): each
        due entry fired under its lock, its job enqueued as the scheduler enqueues it."""
        with self.db.transaction():
            self.db.execute(q.clear_expired_leader)
            leads = self.db.one(q.claim_leadership, {"id": worker_id, "ttl": LEASE})
        if leads is None:
            return
        for entry in self.db.all(q.due_crons):
            with self.db.transaction():
                lock = {"id": entry["id"], "worker_id": worker_id, "ttl": LEASE}
                if self.db.one(q.acquire_cron_lock, lock) is None:
                    continue
                self.db.one(
                    q.enqueue_job,
                    {
                        "id": new_id(),
                        "name": entry["job_name"],
                        "queue": entry["queue"] or "default",
                        "payload": entry["payload"] or b"",
                        "max_retries": 3,
                        "scope_app_id": "",
                        "scope_org_id": "",
                        "worker_id": ZERO_WORKER_ID,
                        "timeout": 300 * 10**9,
                    },
                )
                every = str(entry["schedule"]).removeprefix("@every ")
                self.db.execute(q.cron_fired, {"id": entry["id"], "every": every})
                self.db.execute(q.release_cron_lock, lock)

    def _flows(self, rng: random.Random) -> None:
        """A workflow run now and then: started, a checkpoint per step, then completed or
        failed (the Workflows screen)."""
        q = reads.queries("demo.sql")
        name, steps = FLOW
        while not self._stop.wait(3 / self.speed):
            run_id = new_id("wfrun")
            order = {"order": rng.randrange(10_000)}
            self.db.execute(
                q.create_run, {"id": run_id, "name": name, "input": json.dumps(order).encode()}
            )
            failed = rng.random() < FAIL_RATE
            for step in steps[: rng.randrange(1, len(steps)) if failed else len(steps)]:
                if self._stop.wait(0.5 / self.speed):
                    break
                self.db.execute(
                    q.save_checkpoint,
                    {"id": new_id("ckpt"), "run_id": run_id, "step_name": step, "data": b"{}"},
                )
            self.db.execute(
                q.finish_run,
                {
                    "id": run_id,
                    "state": "failed" if failed else "completed",
                    "output": None if failed else json.dumps({"shipped": True}).encode(),
                    "error": "demo: payment declined" if failed else "",
                },
            )

    def _settle(self, q: Queries, job: dict[str, Any], failed: bool) -> None:
        retries = int(job["retry_count"]) + (1 if failed else 0)
        dead = failed and retries > int(job["max_retries"])
        state = ("failed" if dead else "retrying") if failed else "completed"
        error = "demo: upstream timed out" if failed else ""
        with self.db.transaction():
            self.db.execute(
                q.settle,
                {
                    "id": job["id"],
                    "state": state,
                    "retry_count": retries,
                    "last_error": error,
                    "backoff": "2 seconds",
                },
            )
            if dead:
                self.db.execute(
                    q.push_dlq,
                    {
                        "id": new_id("dlq"),
                        "job_id": job["id"],
                        "job_name": job["name"],
                        "queue": job["queue"],
                        "payload": job["payload"],
                        "error": error,
                        "retry_count": retries,
                        "max_retries": job["max_retries"],
                        "scope_app_id": job["scope_app_id"],
                        "scope_org_id": job["scope_org_id"],
                    },
                )
