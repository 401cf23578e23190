"""The oban-py partner: a real oban-py 0.7.0 application on one PostgreSQL schema (Oban's
prefix), driven by the tests over JSON lines on stdin and stdout, as ``tests/go``'s
programs are. Run by the Python of ``tests/oban/.venv-obanpy``:

    obanpyd.py DSN PREFIX

Each request is ``{"op": ..., ...}``; each answer ``{"ok": true, ...}`` or
``{"ok": false, "error": ...}``. Everything goes through oban-py's public API (its schema
install, ``Oban``, its workers, pause/resume/scale/cancel/retry/delete); the counts are the
query oban-py's own metrics report to Oban Web (``count_jobs.sql``). Its connections carry
``application_name=obanpy-partner``, so a test can tell Oban's writes from anyone else's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from datetime import datetime
from typing import Any
from urllib.parse import quote

from oban import Oban, telemetry
from oban.schema import install
from psycopg_pool import AsyncConnectionPool
from workers import LOG, Fail, Hold, Work

APPLICATION = "obanpy-partner"
NODE = "partner.1"
WORKERS = {"work": Work, "hold": Hold, "fail": Fail}
STATES = [
    "available",
    "scheduled",
    "suspended",
    "executing",
    "retryable",
    "completed",
    "discarded",
    "cancelled",
]


def plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [plain(v) for v in value]
    return value


class Partner:
    def __init__(self, dsn: str, prefix: str) -> None:
        # The search path too: oban-py's install looks for its enum in current_schema()
        # and creates oban_count_estimate there. oban-py writes the prefix into its SQL
        # unquoted (_query.py _load_file), so it is a plain lower-case identifier.
        sep = "&" if "?" in dsn else "?"
        options = quote(f"-csearch_path={prefix}")
        self.dsn = f"{dsn}{sep}application_name={APPLICATION}&options={options}"
        self.prefix = prefix
        self.pool: AsyncConnectionPool | None = None
        self.client: Oban | None = None  # client mode: inserts and the job API
        self.server: Oban | None = None  # server mode: queues, producers, leader
        # Per queue: stager runs that found it with available jobs (each wakes its
        # producer), and fetches its producer made.
        self.woken: Counter[str] = Counter()
        self.fetched: Counter[str] = Counter()
        telemetry.attach("partner", ["oban.stager.stage.stop", "oban.producer.get.stop"], self.on)

    def on(self, name: str, meta: dict[str, Any]) -> None:
        if name == "oban.stager.stage.stop":
            self.woken.update(meta.get("available_queues", []))
        else:
            self.fetched[meta["queue"]] += 1

    async def open(self) -> None:
        self.pool = AsyncConnectionPool(conninfo=self.dsn, min_size=1, max_size=10, open=False)
        await self.pool.open()
        self.client = Oban(pool=self.pool, prefix=self.prefix, name="client", node=NODE)

    async def close(self) -> None:
        await self.op_stop()
        if self.pool is not None:
            await self.pool.close()

    @property
    def oban(self) -> Oban:
        assert self.client is not None
        return self.server or self.client

    async def op_install(self) -> dict[str, Any]:
        await install(self.pool, prefix=self.prefix)
        return {}

    async def op_insert(
        self, worker: str = "work", queue: str = "default", n: int = 1, **fields: Any
    ) -> dict[str, Any]:
        args = fields.pop("args", {})
        jobs = [WORKERS[worker].new({**args, "n": i}, queue=queue, **fields) for i in range(n)]
        inserted = await self.oban.enqueue_many(jobs)
        return {"ids": [job.id for job in inserted]}

    async def op_start(self, queues: dict[str, int], stager: float = 0.1) -> dict[str, Any]:
        if self.server is None:
            self.server = Oban(
                pool=self.pool,
                prefix=self.prefix,
                node=NODE,
                queues=queues,
                stager={"interval": stager},
                shutdown_grace_period=1.0,
            )
            await self.server.start()
        return {}

    async def op_stop(self) -> dict[str, Any]:
        if self.server is not None:
            server, self.server = self.server, None
            LOG.released.update(q.queue for q in server.check_all_queues())
            await server.stop()
        return {}

    async def op_check(self, queue: str) -> dict[str, Any]:
        info = self.server.check_queue(queue) if self.server else None
        if info is None:
            return {"queue": None}
        return {
            "queue": info.queue,
            "limit": info.limit,
            "paused": info.paused,
            "running": info.running,
            "node": info.node,
            "uuid": info.uuid,
        }

    async def op_pause(self, queue: str) -> dict[str, Any]:
        await self.oban.pause_queue(queue)
        return {}

    async def op_resume(self, queue: str) -> dict[str, Any]:
        await self.oban.resume_queue(queue)
        return {}

    async def op_scale(self, queue: str, limit: int) -> dict[str, Any]:
        await self.oban.scale_queue(queue=queue, limit=limit)
        return {}

    async def op_cancel(self, ids: list[int]) -> dict[str, Any]:
        return {"count": await self.oban.cancel_many_jobs(ids)}

    async def op_retry(self, ids: list[int]) -> dict[str, Any]:
        return {"count": await self.oban.retry_many_jobs(ids)}

    async def op_delete(self, ids: list[int]) -> dict[str, Any]:
        return {"count": await self.oban.delete_many_jobs(ids)}

    async def op_get(self, id: int) -> dict[str, Any]:
        job = await self.oban.get_job(id)
        if job is None:
            return {"job": None}
        fields = ("id", "state", "queue", "worker", "attempt", "max_attempts", "args", "meta")
        row = {name: plain(getattr(job, name)) for name in fields}
        row["errors"] = plain(job.errors)
        row["attempted_by"] = plain(job.attempted_by)
        return {"job": row}

    async def op_counts(self, queue: str | None = None) -> dict[str, Any]:
        rows = await self.oban._query.count_jobs(STATES)
        counts: Counter[str] = Counter()
        for state, row_queue, count in rows:
            if queue is None or row_queue == queue:
                counts[state] += count
        return {"counts": dict(counts)}

    async def op_runs(self) -> dict[str, Any]:
        return {**LOG.report(), "woken": dict(self.woken), "fetched": dict(self.fetched)}

    async def op_reset_peak(self, queue: str) -> dict[str, Any]:
        LOG.reset_peak(queue)
        return {}

    async def op_release(self, queue: str) -> dict[str, Any]:
        LOG.released.add(queue)
        return {}

    async def op_hold(self, queue: str) -> dict[str, Any]:
        LOG.released.discard(queue)
        return {}


async def serve(partner: Partner) -> None:
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        request = json.loads(line)
        op = request.pop("op")
        try:
            answer = {"ok": True, **await getattr(partner, f"op_{op}")(**request)}
        except Exception as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


async def main(dsn: str, prefix: str) -> None:
    partner = Partner(dsn, prefix)
    await partner.open()
    try:
        await serve(partner)
    finally:
        await partner.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
