"""One of the Oban demo's real nodes: oban-py's own ``Oban`` with the demo's queues, working
the jobs the demo inserts (``qctl.systems.oban.demo``). Run by the Python of oban-py's
environment (``obanpy.py``), never imported by qctl:

    python obanpy_node.py

It reads one JSON line on stdin (``dsn``, ``prefix``, ``node``, ``queues``, ``workers``,
``application``, ``lifeline``), starts the node, writes ``ready`` on stdout, and runs until stdin
closes; then it stops as an oban-py application does on shutdown. Each of the demo's
worker names is a worker here that does what its job's args ask (``Work``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from oban import Cancel, Oban, Snooze, worker
from psycopg_pool import AsyncConnectionPool

STEP = 0.1
"""Seconds between a running job's looks at its cancellation (oban-py's pkill signal)."""


class Work:
    """A demo job: on its first attempt snoozes ``snooze`` seconds when asked, then takes
    ``seconds`` (ended early by a cancel), raises ``error`` while its attempt is within
    ``fails``, and cancels itself with ``cancel`` as reason when that is given; each retry
    waits ``2 ** attempt`` seconds."""

    async def process(self, job: Any) -> Cancel | Snooze | None:
        args = job.args
        if args.get("snooze") and not job.meta.get("snoozed"):
            return Snooze(int(args["snooze"]))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + float(args.get("seconds", 0))
        while loop.time() < deadline:
            if job.cancelled():
                return Cancel("cancelled through Oban's pkill signal")
            await asyncio.sleep(STEP)
        if job.attempt <= int(args.get("fails", 0)):
            raise RuntimeError(args.get("error", "failed"))
        if args.get("cancel"):
            return Cancel(args["cancel"])
        return None

    def backoff(self, job: Any) -> int:
        return int(2**job.attempt)


def register(path: str) -> None:
    """``Work`` under the worker name ``path`` (module and class) the demo inserts."""
    module, _, name = path.rpartition(".")
    worker(queue="default")(type(name, (Work,), {"__module__": module, "__qualname__": name}))


async def main() -> None:
    spec = json.loads(sys.stdin.readline())
    for path in spec["workers"]:
        register(path)
    pool = AsyncConnectionPool(
        conninfo=spec["dsn"],
        kwargs={
            "application_name": spec["application"],
            "options": f"-csearch_path={spec['prefix']}",
        },
        min_size=1,
        max_size=10,
        open=False,
    )
    await pool.open()
    oban = Oban(
        pool=pool,
        prefix=spec["prefix"],
        node=spec["node"],
        queues=spec["queues"],
        lifeline=spec["lifeline"],
        shutdown_grace_period=1.0,
    )
    await oban.start()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    try:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        await oban.stop()
        await pool.close()


if __name__ == "__main__":
    asyncio.run(main())
