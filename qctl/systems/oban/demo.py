"""The Oban demo's workload: a producer of jobs and stand-in Oban nodes on oban-py's
schema, running oban-py's own statements (``queries/demo.sql``: fetch, ack, producers,
leader) in Python threads. oban-py needs Python 3.12 and is not a dependency of qctl, so
the nodes are labelled stand-ins (``qctl-demo-stand-in-N``).

Each node runs a producer per queue, with its limit and pause in its ``oban_producers``
row, and answers Oban's signal channel as oban-py's producers do (``_producer.py``
``_on_signal``: pause, resume, pkill; ``oban.py``: scale), matching the signal's queue and
``ident``. Every job the demo inserts carries ``MARK_KEY`` with the run's id in its meta,
and the nodes fetch only those. No typer, no textual: ``cli/demo.py`` runs it.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from qctl.systems.oban import reads

MARK_KEY = "qctl_demo"
QUEUES = {"default": 5, "mailers": 3, "media": 2}
"""Each queue and its producers' limit."""
WORKERS = {
    "default": ("MyApp.Workers.CacheWarm", "MyApp.Workers.Thumbnail"),
    "mailers": ("MyApp.Workers.Welcome", "MyApp.Workers.Digest"),
    "media": ("MyApp.Workers.Transcode",),
}
FAIL_RATE = 0.15
REFRESH = 15.0
"""Seconds between a node's refreshes of its producers (oban-py ``_refresher.py``'s
default interval): their ``updated_at``, which a stopped node's rows stop advancing."""


def new_mark() -> dict[str, str]:
    return {MARK_KEY: uuid.uuid4().hex[:12]}


@dataclass
class Node:
    """One stand-in node: its producers (queue → uuid, limit, paused) and running jobs
    (id → queue, attempted_at, attempt, max_attempts and when it finishes)."""

    name: str
    producers: dict[str, dict[str, Any]] = field(default_factory=dict)
    running: dict[int, dict[str, Any]] = field(default_factory=dict)
    killed: set[int] = field(default_factory=set)

    def answer(self, payload: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """Apply a signal as oban-py's producers do; the producer meta changes to record
        (uuid, meta)."""
        queue, ident = payload.get("queue", "*"), payload.get("ident", "any")
        if ident not in ("any", f"Oban.{self.name}"):
            return []
        action = payload.get("action")
        if action == "pkill":
            if payload.get("job_id") in self.running:
                self.killed.add(int(payload["job_id"]))
            return []
        changes = []
        for name, producer in self.producers.items():
            if queue not in ("*", name):
                continue
            if action in ("pause", "resume"):
                producer["paused"] = action == "pause"
                changes.append((producer["uuid"], {"paused": producer["paused"]}))
            elif action == "scale" and isinstance(payload.get("limit"), int):
                producer["local_limit"] = payload["limit"]
                changes.append((producer["uuid"], {"local_limit": payload["limit"]}))
        return changes


@dataclass
class Workload:
    """``start()`` runs a producer of jobs and ``nodes`` stand-in nodes (the first one the
    leader when ``lead``) until ``stop()``."""

    dsn: str
    schema: str
    mark: dict[str, str] = field(default_factory=new_mark)
    speed: float = 1.0
    nodes: int = 2
    lead: bool = False
    seed: int | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def start(self) -> None:
        rng = random.Random(self.seed)
        self._spawn(self._produce, random.Random(rng.random()))
        for i in range(self.nodes):
            node = Node(f"qctl-demo-stand-in-{i + 1}")
            self._spawn(self._work, node, random.Random(rng.random()), self.lead and i == 0)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)

    def _spawn(self, target: Any, *args: Any) -> None:
        def run() -> None:
            try:
                target(*args)
            except Exception as exc:  # shown when the demo ends
                self.errors.append(f"{type(exc).__name__}: {exc}")

        thread = threading.Thread(target=run, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _connect(self) -> Any:
        import psycopg

        conn = psycopg.connect(self.dsn, autocommit=True)
        conn.execute(f"SET search_path TO {psycopg.sql.Identifier(self.schema).as_string(conn)}")
        return conn

    def _produce(self, rng: random.Random) -> None:
        q = reads.queries("demo.sql")
        with self._connect() as conn:
            while not self._stop.wait(0.25 / self.speed):
                queue = rng.choice(list(QUEUES))
                conn.execute(
                    q.insert_job,
                    {
                        "queue": queue,
                        "worker": rng.choice(WORKERS[queue]),
                        "args": json.dumps({"id": rng.randrange(1, 10_000)}),
                        "meta": json.dumps(self.mark),
                        "max_attempts": rng.choice((1, 3, 5)),
                        "delay": rng.choice((0, 0, 0, 5)),
                        "channel": f"{self.schema}.oban_insert",
                    },
                )

    def _work(self, node: Node, rng: random.Random, lead: bool) -> None:
        q = reads.queries("demo.sql")
        mark = json.dumps(self.mark)
        with self._connect() as conn, self._connect() as listener:
            from psycopg import sql

            listener.execute(
                sql.SQL("LISTEN {}").format(sql.Identifier(f"{self.schema}.oban_signal"))
            )
            for queue, limit in QUEUES.items():
                node.producers[queue] = {
                    "uuid": str(uuid.uuid4()),
                    "local_limit": limit,
                    "paused": False,
                }
                meta = {"local_limit": limit, "paused": False}
                conn.execute(
                    q.insert_producer,
                    {"uuid": node.producers[queue]["uuid"], "node": node.name, "queue": queue,
                     "meta": json.dumps(meta)},
                )  # fmt: skip
            uuids = [p["uuid"] for p in node.producers.values()]
            refreshed = time.monotonic()
            try:
                while not self._stop.is_set():
                    if time.monotonic() - refreshed >= REFRESH / self.speed:
                        conn.execute(q.refresh_producers, {"uuids": uuids})
                        refreshed = time.monotonic()
                    for note in list(listener.notifies(timeout=0.2 / self.speed)):
                        try:
                            payload = json.loads(note.payload)
                        except ValueError:
                            continue  # oban-py's compressed payloads: not for the stand-in
                        for producer, change in node.answer(payload):
                            conn.execute(
                                q.update_producer, {"uuid": producer, "meta": json.dumps(change)}
                            )
                    if lead:
                        conn.execute(q.elect_leader, {"node": node.name})
                    conn.execute(q.stage_jobs, {"mark": mark})
                    self._ack(conn, node, rng)
                    self._fetch(conn, node, rng, mark)
            finally:
                conn.execute(q.rescue_jobs, {"ids": list(node.running)})
                conn.execute(q.delete_producers, {"uuids": uuids})

    def _fetch(self, conn: Any, node: Node, rng: random.Random, mark: str) -> None:
        q = reads.queries("demo.sql")
        for queue, producer in node.producers.items():
            mine = sum(1 for job in node.running.values() if job["queue"] == queue)
            demand = producer["local_limit"] - mine
            if producer["paused"] or demand <= 0:
                continue
            rows = conn.execute(
                q.fetch_jobs,
                {"queue": queue, "demand": demand, "mark": mark,
                 "attempted_by": [node.name, producer["uuid"]]},
            ).fetchall()  # fmt: skip
            for job_id, attempt, max_attempts, attempted_at in rows:
                finish = time.monotonic() + rng.uniform(0.5, 4.0) / self.speed
                node.running[int(job_id)] = {
                    "queue": queue,
                    "attempted_at": attempted_at,
                    "attempt": attempt,
                    "max_attempts": max_attempts,
                    "finish": finish,
                }

    def _ack(self, conn: Any, node: Node, rng: random.Random) -> None:
        q = reads.queries("demo.sql")
        now = time.monotonic()
        for job_id, job in list(node.running.items()):
            attempt = job["attempt"]
            error: dict[str, Any] | None = None
            if job_id in node.killed:
                state = "cancelled"
            elif job["finish"] > now:
                continue
            elif rng.random() < FAIL_RATE:
                state = "discarded" if attempt >= job["max_attempts"] else "retryable"
                error = {
                    "attempt": attempt,
                    "at": datetime.now(UTC).isoformat(),
                    "error": rng.choice(("** (RuntimeError) timeout", "connection reset")),
                }
            else:
                state = "completed"
            conn.execute(
                q.ack_job,
                {"id": job_id, "state": state, "attempted_at": job["attempted_at"],
                 "backoff": 2 ** attempt, "error": json.dumps([error]) if error else None},
            )  # fmt: skip
            node.running.pop(job_id)
            node.killed.discard(job_id)
