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
