"""The partner's oban-py workers. Each records every execution it starts and ends in
``LOG`` (per job id and queue), so the tests can check that no job ran twice and how many
of a queue ran at once. Their names are what oban-py stores in ``oban_jobs.worker``:
``workers.Work``, ``workers.Hold``, ``workers.Fail``."""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from typing import Any

from oban import Cancel, worker


class Log:
    """Executions seen by this process: attempts started per job id, the jobs running per
    queue now, and the most that ran at once per queue since the last ``reset_peak``."""

    def __init__(self) -> None:
        self.started: Counter[int] = Counter()
        self.ended: Counter[int] = Counter()
        self.running: defaultdict[str, set[int]] = defaultdict(set)
        self.peak: Counter[str] = Counter()
        self.cancelled: set[int] = set()
        self.released: set[str] = set()

    def start(self, job: Any) -> None:
        self.started[job.id] += 1
        self.running[job.queue].add(job.id)
        self.peak[job.queue] = max(self.peak[job.queue], len(self.running[job.queue]))

    def end(self, job: Any) -> None:
        self.ended[job.id] += 1
        self.running[job.queue].discard(job.id)

    def reset_peak(self, queue: str) -> None:
        self.peak[queue] = len(self.running[queue])

    def report(self) -> dict[str, Any]:
        return {
            "started": {str(k): v for k, v in self.started.items()},
            "ended": {str(k): v for k, v in self.ended.items()},
            "running": {q: sorted(ids) for q, ids in self.running.items() if ids},
            "peak": dict(self.peak),
            "cancelled": sorted(self.cancelled),
        }


LOG = Log()


@worker(queue="default")
class Work:
    """Completes at once."""

    async def process(self, job: Any) -> None:
        LOG.start(job)
        await asyncio.sleep(0)
        LOG.end(job)


@worker(queue="default")
class Hold:
    """Runs until its queue is released (``release``) or oban-py cancels it (the ``pkill``
    signal sets the job's cancellation), which it answers with ``Cancel`` as a cooperative
    oban-py worker does."""

    async def process(self, job: Any) -> Cancel | None:
        LOG.start(job)
        try:
            while job.queue not in LOG.released:
                if job.cancelled():
                    LOG.cancelled.add(job.id)
                    return Cancel("cancelled through oban-py's signal")
                await asyncio.sleep(0.01)
            return None
        finally:
            LOG.end(job)


@worker(queue="default")
class Fail:
    """Raises on every attempt, so each one adds an entry to ``errors``."""

    async def process(self, job: Any) -> None:
        LOG.start(job)
        LOG.end(job)
        raise RuntimeError("partner failure")
