"""The Oban demo's workload: a producer of jobs on oban-py's schema, worked by real
oban-py nodes (``obanpy_node.py``, in oban-py's own Python 3.12 environment: ``obanpy``)
or, without one, by stand-in nodes running oban-py's own statements (``queries/demo.sql``:
fetch, ack, producers, leader) in Python threads, labelled as such
(``qctl-demo-stand-in-N``).

Each stand-in node runs a producer per queue, with its limit and pause in its
``oban_producers`` row, and answers Oban's signal channel as oban-py's producers do
(``_producer.py`` ``_on_signal``: pause, resume, pkill; ``oban.py``: scale), matching the
signal's queue and ``ident``. Every job the demo inserts carries ``MARK_KEY`` with the
run's id in its meta; the stand-ins stage and fetch every job of a schema the demo created
(``lead``), only those on one it shares (``qctl.core.demo.claimed``). Its args say what a
real node's worker does with it (``obanpy_node.Work``). No typer, no textual:
``cli/demo.py`` runs it.
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qctl.core.demo import claimed, ended, handed
from qctl.systems.oban import reads
from qctl.systems.oban.database import payload_text

MARK_KEY = "qctl_demo"
QUEUES = {"default": 5, "mailers": 3, "media": 2}
"""Each queue and its producers' limit."""
WORKERS = {
    "default": ("MyApp.Workers.CacheWarm", "MyApp.Workers.Thumbnail"),
    "mailers": ("MyApp.Workers.Welcome", "MyApp.Workers.Digest"),
    "media": ("MyApp.Workers.Transcode",),
}
FAIL_RATE = 0.15
"""How often a stand-in fails an attempt."""
ERRORS = ("timeout talking to the upstream", "connection reset by peer")
APPLICATION = "qctl-demo-obanpy"
"""The real nodes' connections' application name."""
LONGEST = 8.0
"""Seconds the longest of the demo's jobs takes on a real node at speed 1."""
START_TIMEOUT = 60.0
"""Seconds a real node may take to start (import oban-py, connect, start its queues)."""
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
    """``start()`` runs a producer of jobs and ``nodes`` nodes until ``stop()``: real
    oban-py nodes run by ``python`` (oban-py's environment's, their output in ``logs``),
    else stand-ins (the first one the leader when ``lead``)."""

    dsn: str
    schema: str
    mark: dict[str, str] = field(default_factory=new_mark)
    speed: float = 1.0
    nodes: int = 2
    lead: bool = False
    seed: int | None = None
    python: Path | None = None
    logs: Path | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _procs: dict[str, subprocess.Popen[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def node_names(self) -> list[str]:
        kind = "stand-in" if self.python is None else "obanpy"
        return [f"qctl-demo-{kind}-{i + 1}" for i in range(self.nodes)]

    def start(self) -> None:
        """Raises ``RuntimeError`` (one line) when a real node does not start: none is
        left running."""
        rng = random.Random(self.seed)
        produce = random.Random(rng.random())
        if self.python is not None:
            try:
                for name in self.node_names:
                    self._start_node(name)
            except RuntimeError:
                self.stop()
                raise
        else:
            for i, name in enumerate(self.node_names):
                node = Node(name)
                self._spawn(self._work, node, random.Random(rng.random()), self.lead and i == 0)
        self._spawn(self._produce, produce)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)
        for name, proc in self._procs.items():
            self._end_node(name, proc)
        self._procs.clear()

    def _start_node(self, name: str) -> None:
        """Starts a real node and waits for its ``ready``."""
        assert self.python is not None and self.logs is not None
        from importlib.resources import files

        program = files("qctl.systems.oban").joinpath("obanpy_node.py")
        log = self.logs / f"{name}.log"
        with log.open("w") as err:
            proc = subprocess.Popen(
                [str(self.python), str(program)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                start_new_session=True,  # stopped by the demo (stdin), not by a terminal's ^C
            )
        self._procs[name] = proc
        spec = {
            "dsn": self.dsn,
            "prefix": self.schema,
            "node": name,
            "queues": QUEUES,
            "workers": sorted({w for names in WORKERS.values() for w in names}),
            "application": APPLICATION,
            # A stopped node's unfinished jobs are orphans: rescued by the next run's
            # leader once they have run longer than any of the demo's jobs (``_args``).
            "lifeline": {"interval": 10.0, "rescue_after": 30.0 + LONGEST / self.speed},
        }
        if not handed(proc, spec, START_TIMEOUT):
            raise RuntimeError(f"oban-py node {name} did not start; see {log}")

    def _end_node(self, name: str, proc: subprocess.Popen[str]) -> None:
        """Closes its stdin (the node then stops as oban-py does on shutdown)."""
        code = ended(proc, 15)
        if code != 0:
            where = self.logs / f"{name}.log" if self.logs else "its log"
            self.errors.append(f"oban-py node {name} exited with {code}; see {where}")

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
                # media's long jobs come less often: its two slots per node keep up
                queue = rng.choices(list(QUEUES), weights=(3, 2, 1))[0]
                worker = rng.choice(WORKERS[queue])
                conn.execute(
                    q.insert_job,
                    {
                        "queue": queue,
                        "worker": worker,
                        "args": json.dumps(self._args(queue, rng)),
                        "meta": json.dumps(self.mark),
                        "max_attempts": rng.choice((1, 3, 5)),
                        "priority": rng.choice((0, 0, 0, 1, 2)),
                        "tags": [queue, worker.rsplit(".", 1)[-1].lower()],
                        "delay": rng.choice((0, 0, 0, 5)),
                        "channel": f"{self.schema}.oban_insert",
                    },
                )

    def _args(self, queue: str, rng: random.Random) -> dict[str, Any]:
        """What a real node's worker does with the job (``obanpy_node.Work``): media's
        take long enough to cancel or pause them running; some fail once or twice, some
        on every attempt, some snooze first, a few cancel themselves."""
        args: dict[str, Any] = {"id": rng.randrange(1, 10_000)}
        slow = LONGEST if queue == "media" else LONGEST / 3
        args["seconds"] = round(rng.uniform(0.125, 1.0) * slow / self.speed, 2)
        fails = rng.choices((0, 1, 2, 99), weights=(80, 10, 5, 5))[0]
        if fails:
            args["fails"] = fails
            args["error"] = rng.choice(ERRORS)
        if rng.random() < 0.05:
            args["snooze"] = 5
        elif rng.random() < 0.03:
            args["cancel"] = "the upload it was for is gone"
        return args

    def _work(self, node: Node, rng: random.Random, lead: bool) -> None:
        q = reads.queries("demo.sql")
        mark = claimed(self.mark, self.lead)
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
                        text = payload_text(note.payload)  # oban-py's: base64 of gzip
                        try:
                            payload = json.loads(text) if text is not None else {}
                        except ValueError:
                            continue
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

    def _fetch(self, conn: Any, node: Node, rng: random.Random, mark: str | None) -> None:
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
                    "error": rng.choice(ERRORS),
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
