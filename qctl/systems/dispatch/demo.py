"""The dispatch demo's workload: a producer and stand-in workers on a dispatch schema.

dispatch's Go runtime cannot ship with qctl, so the workers are labelled stand-ins that
run dispatch v0.1.0's own worker statements (``queries/demo.sql``: its dequeue, heartbeat,
settle and DLQ push) from Python: what qctl then shows and operates is what a dispatch
fleet leaves. Jobs are enqueued as dispatch's EnqueueJob writes them (``demo.sql``
``enqueue_job``). No typer, no textual: ``cli/demo.py`` runs it.
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
"""How often an attempt fails; a job with no retries left goes to the DLQ."""


@dataclass
class Workload:
    """``start()`` runs a producer and ``workers`` stand-in workers until ``stop()``."""

    db: Database
    speed: float = 1.0
    workers: int = 2
    seed: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        rng = random.Random(self.seed)
        self._threads = [threading.Thread(target=self._produce, args=(rng,), daemon=True)]
        self._threads += [
            threading.Thread(target=self._work, args=(random.Random(rng.random()),), daemon=True)
            for _ in range(self.workers)
        ]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(10)

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

    def _work(self, rng: random.Random) -> None:
        q = reads.queries("demo.sql")
        while not self._stop.wait(0.3 / self.speed):
            with self.db.transaction():
                jobs = self.db.all(q.dequeue, {"queues": list(QUEUES), "limit": 2})
            for job in jobs:
                self.db.execute(q.heartbeat, {"id": job["id"]})
                self._settle(q, job, failed=rng.random() < FAIL_RATE)

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
