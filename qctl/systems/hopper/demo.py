"""The hopper demo's workload: producers, stand-in workers and a stand-in leader on a
hopper schema (version 8), through ``standin.StandIn`` (hopper's own SQL: the
``hopper_insert`` producer function, its claim, finalize, lease and leader statements).

hopper's Go runtime cannot ship with qctl, so the workers are labelled stand-ins
(hostname ``qctl-demo-stand-in-N``, ``info.stand_in``). Every job the demo inserts,
workflows and batch callbacks included, carries ``MARK_KEY`` with the run's id in its
metadata. On a schema it created (``lead``) it takes the leader lease and its workers
claim every job, whoever inserted it; on one it shares with a real fleet they claim only
jobs with its run's mark, and it touches no row it did not create. It removes its client
leases when it stops. No typer, no textual: ``cli/demo.py`` runs it.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from qctl.systems.hopper.standin import StandIn

MARK_KEY = "qctl_demo"
QUEUES = ("default", "emails", "reports")
KINDS = {
    "default": ("thumbnail.render", "cache.warm"),
    "emails": ("email.send", "email.digest"),
    "reports": ("report.build",),
}
FAIL_RATE = 0.15
"""How often an attempt fails; a job out of attempts is discarded (hopper's dead letter)."""
WORKFLOW_EVERY = 15
"""One workflow (a diamond with a callback) every this many inserts."""
LEASE_TTL = 15.0
"""hopper's client and leader lease TTL (config.go defaultTuning)."""


def new_mark() -> dict[str, str]:
    return {MARK_KEY: uuid.uuid4().hex[:12]}


@dataclass
class Workload:
    """``start()`` runs a producer and ``workers`` stand-in workers (the first one also
    the leader when ``lead``: the schema is the demo's own) until ``stop()``."""

    dsn: str
    schema: str
    mark: dict[str, str] = field(default_factory=new_mark)
    speed: float = 1.0
    workers: int = 2
    lead: bool = False
    seed: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def start(self) -> None:
        rng = random.Random(self.seed)
        self._threads = [threading.Thread(target=self._guard, args=(self._produce, rng))]
        self._threads += [
            threading.Thread(target=self._guard, args=(self._work, random.Random(rng.random()), n))
            for n in range(self.workers)
        ]
        for t in self._threads:
            t.daemon = True
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)

    def _guard(self, body: Any, *args: Any) -> None:
        """A thread's loop; its failure is kept for the summary, never a traceback."""
        try:
            body(*args)
        except Exception as exc:  # a lost connection, a dropped schema
            self.errors.append(f"{type(exc).__name__}: {exc}".splitlines()[0])
            self._stop.set()

    def _standin(self) -> StandIn:
        return StandIn(self.dsn, self.schema, self.mark, own=self.lead)

    def _produce(self, rng: random.Random) -> None:
        s = self._standin()
        try:
            n = 0
            while not self._stop.wait(0.2 / self.speed):
                n += 1
                if n % WORKFLOW_EVERY == 0:
                    self._workflow(s, n)
                    continue
                queue = rng.choice(QUEUES)
                opts: dict[str, Any] = {
                    "queue": queue,
                    "priority": rng.choice((1, 2, 2, 2, 3, 4)),
                    "max_attempts": rng.choice((1, 2, 3)),
                }
                if rng.random() < 0.1:
                    opts["scheduled_at"] = time.strftime(
                        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + rng.uniform(5, 60))
                    )
                s.insert(rng.choice(KINDS[queue]), {"n": rng.randrange(1000)}, **opts)
        finally:
            s.close()

    def _workflow(self, s: StandIn, n: int) -> None:
        """extract, then two transforms, then load; a callback once all are final."""
        callback = {"kind": "report.notify", "queue": "reports", "metadata": self.mark}
        s.workflow(
            "reports",
            ["report.extract", "report.transform", "report.transform", "report.load"],
            [(1, 0), (2, 0), (3, 1), (3, 2)],
            name=f"nightly-report-{n}",
            on_complete=callback,
        )

    def _work(self, rng: random.Random, number: int) -> None:
        s = self._standin()
        client = s.register(f"qctl-demo-stand-in-{number}", LEASE_TTL, {"stand_in": True})
        leading = False
        try:
            while not self._stop.wait(0.3 / self.speed):
                s.renew(client, LEASE_TTL)
                if self.lead and number == 0:
                    leading = s.lead(client, LEASE_TTL)
                for queue in QUEUES:
                    for job in s.claim(queue, client, limit=2):
                        self._settle(s, client, job, failed=rng.random() < FAIL_RATE)
        finally:
            if leading:
                s.resign(client)
            s.deregister(client)
            s.close()

    def _settle(self, s: StandIn, client: int, job: uuid.UUID, failed: bool) -> None:
        if not failed:
            s.finalize(job, client, "completed", output={"ok": True})
            return
        attempt, max_attempts = s.attempts(job)
        state = "discarded" if attempt >= max_attempts else "retryable"
        s.finalize(job, client, state, error="demo: upstream timed out", delay=2.0)
