"""The tests' hopper client: the package's stand-in (``qctl.systems.hopper.standin``,
hopper's own SQL) on the test database, and one helper the tests share."""

from __future__ import annotations

import uuid
from typing import Any

from qctl.systems.hopper.standin import StandIn
from tests.conftest import PG_DSN


class Worker(StandIn):
    """The stand-in on a test schema, claiming every job (no mark)."""

    def __init__(self, schema: str) -> None:
        super().__init__(PG_DSN, schema)

    def dead(
        self, kind: str, queue: str, client: int, error: str = "boom", **opts: Any
    ) -> uuid.UUID:
        """A job hopper's worker ran and discarded (out of attempts)."""
        job = self.insert(kind, {"k": kind}, queue=queue, max_attempts=1, **opts)
        assert self.claim(queue, client) == [job]
        assert self.finalize(job, client, "discarded", error=error)
        return job

    def pause(self, queue: str, resume: bool = False) -> None:
        """Pause (or resume) one queue as hopper's own QueuePause / QueueResume do
        (driver/internal/pgsql/cluster.go setPaused, then NOTIFY hopper_control), in one
        transaction: another operator's hopper, for the tests."""
        with self.conn.transaction():
            if resume:
                self.conn.execute(
                    "INSERT INTO hopper_queues (name) VALUES (%s)"
                    " ON CONFLICT (name) DO UPDATE SET paused_at = NULL, updated_at = now()",
                    [queue],
                )
            else:
                self.conn.execute(
                    "INSERT INTO hopper_queues (name, paused_at) VALUES (%s, now())"
                    " ON CONFLICT (name) DO UPDATE"
                    " SET paused_at = coalesce(hopper_queues.paused_at, now()), updated_at = now()",
                    [queue],
                )
            action = "resume" if resume else "pause"
            self.conn.execute("SELECT pg_notify('hopper_control', %s)", [f"{action}:{queue}"])
