"""The River demo's workload: a producer of jobs on River's schema, worked by River's own
clients (the Go program ``riverdemo/``, built by ``riverclients``) or, without them, by
labelled stand-ins: River's own statements run from Python.

``install`` writes River's schema (``schema_v0.51.2.sql``: line main at version 8, as
rivermigrate leaves it) into a schema the demo created. ``Workload`` runs a producer
that inserts jobs, and either River's clients (ids ``qctl-demo-river-N``, in one
``riverdemo`` process) or stand-in clients (ids ``qctl-demo-stand-in-N``) that register
their queues, fetch, work and settle jobs, schedule the ones whose time came, and
elect a leader, each through the statements of ``queries/standin.sql``, which name the
River query they follow. Every job the demo inserts carries ``MARK_KEY`` with the run's
id in its metadata, and args that say what River's client does with it
(``riverdemo/main.go`` demoArgs). On a schema it created (``lead``) it takes the
leadership and its stand-ins fetch and schedule every job, whoever inserted it; on one
shared with real River clients they fetch and schedule only its run's, and it touches no
job it did not insert. A paused queue is not fetched from.
No typer, no textual: ``cli/demo.py`` runs it.
"""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

from qctl.core.demo import claimed, ended, handed
from qctl.systems.river.reads import queries

SCHEMA_FILE = "schema_v0.51.2.sql"
MARK_KEY = "qctl_demo"
QUEUES = ("default", "emails", "reports")
KINDS = {
    "default": ("thumbnail_render", "cache_warm"),
    "emails": ("email_send", "email_digest"),
    "reports": ("report_build",),
}
ERRORS = ("demo: upstream timed out after 30s", "demo: card declined for 4242", "demo: smtp 451")
FAIL_RATE = 0.15
"""How often an attempt fails; a job out of attempts is discarded."""
WORK = (0.2, 2.0)
"""Seconds a stand-in client works a job, at the lowest and highest: River records a
client only in the jobs it runs (``attempted_by``), so the clients are seen at work."""
MAX_WORKERS = 3
"""Jobs a client works at once per queue (River's ``QueueConfig.MaxWorkers``)."""
LONGEST = 8.0
"""Seconds the longest of the demo's jobs (reports) takes on River's clients at speed 1:
long enough to cancel one running or pause its queue."""
APPLICATION = "qctl-demo-river"
"""River's clients' connections' application name."""
START_TIMEOUT = 60.0
"""Seconds River's clients may take to start (connect, start their producers)."""
LEADER_TTL = 15.0
"""Seconds a leader's lease lasts unless renewed (elector.go's TTL: its interval, 5s,
plus its padding, 10s)."""


def install(conn: Any, schema: str) -> None:
    """River's schema in ``schema`` over an autocommit psycopg connection, in one
    transaction with the schema as its search_path."""
    script = files("qctl.systems.river").joinpath(SCHEMA_FILE).read_text()
    with conn.transaction():
        conn.execute("SELECT set_config('search_path', %s, true)", [f'"{schema}"'])
        conn.execute(script)


def retry_delay(attempt: int) -> float:
    """River's default retry policy's delay before the next attempt, attempt⁴ seconds
    (retry_policy.go DefaultClientRetryPolicy, its jitter left out)."""
    return float(attempt**4)


class StandIn:
    """One autocommit connection to a River schema, acting as River's client would;
    ``mark``: metadata every job it inserts carries and the only jobs it fetches and
    schedules, unless the schema is the demo's ``own`` (``qctl.core.demo.claimed``)."""

    def __init__(self, dsn: str, schema: str, mark: dict[str, str], own: bool = False) -> None:
        import psycopg
        from psycopg.rows import dict_row

        self.schema, self.mark = schema, mark
        self.claims = claimed(mark, own)
        self.q = queries("standin.sql")
        self.conn = psycopg.connect(
            dsn,
            autocommit=True,
            row_factory=dict_row,
            options=f"-c search_path={schema}",
            application_name="qctl river stand-in",
        )

    def close(self) -> None:
        self.conn.close()

    def channel(self, topic: str) -> str:
        return f"{self.schema}.{topic}"

    def insert(self, kind: str, args: Any, **opts: Any) -> int:
        scheduled = opts.get("scheduled_at")
        params = {
            "args": json.dumps(args),
            "kind": kind,
            "max_attempts": opts.get("max_attempts", 25),
            "metadata": json.dumps(self.mark),
            "priority": opts.get("priority", 1),
            "queue": opts.get("queue", "default"),
            "scheduled_at": scheduled,
            "state": "scheduled" if scheduled else "available",
            "tags": opts.get("tags", []),
            "insert_channel": self.channel("river_insert"),
        }
        row = self.conn.execute(self.q.insert_job, params).fetchone()
        assert row is not None
        return int(row["id"])

    def paused(self, queue: str, register: bool) -> bool:
        """Whether the queue is paused; ``register``: its row created or renewed first,
        as River's producer keeps it."""
        query = self.q.register_queue if register else self.q.queue_paused
        row = self.conn.execute(query, {"name": queue}).fetchone()
        return bool(row and row["paused"])

    def fetch(self, queue: str, client: str, n: int) -> list[dict[str, Any]]:
        params = {"queue": queue, "client": client, "max": n, "mark": self.claims}
        return list(self.conn.execute(self.q.fetch, params).fetchall())

    def complete(self, job: dict[str, Any], error: str | None = None) -> None:
        retry_at = datetime.now(UTC) + timedelta(seconds=retry_delay(int(job["attempt"])))
        params = {"id": job["id"], "failed": error is not None, "error": error or "",
                  "retry_at": retry_at}  # fmt: skip
        self.conn.execute(self.q.complete, params)

    def schedule(self) -> None:
        self.conn.execute(self.q.schedule, {"mark": self.claims})

    def elect(self, client: str) -> bool:
        self.conn.execute(self.q.expire_leader)
        row = self.conn.execute(self.q.elect, {"client": client, "ttl": LEADER_TTL}).fetchone()
        return bool(row and row["leading"])

    def resign(self, client: str) -> None:
        channel = self.channel("river_leadership")
        self.conn.execute(self.q.resign, {"client": client, "leadership_channel": channel})

    def counts(self) -> dict[str, int]:
        rows = self.conn.execute(self.q.job_counts, {"mark": json.dumps(self.mark)})
        return {r["state"]: int(r["n"]) for r in rows}


@dataclass
class Workload:
    """``start()`` runs a producer and ``clients`` clients until ``stop()``: River's own,
    run by ``program`` (``riverdemo``, its output beside it: ``log``), else stand-ins
    (the first one also elects itself leader and the clients keep their queues' rows
    when ``lead``, the schema being the demo's; the first schedules the jobs whose time
    came)."""

    dsn: str
    schema: str
    speed: float = 1.0
    clients: int = 2
    lead: bool = False
    seed: int | None = None
    program: Path | None = None
    mark: dict[str, str] = field(default_factory=lambda: {MARK_KEY: uuid.uuid4().hex[:12]})
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)
    _proc: subprocess.Popen[str] | None = None

    @property
    def client_names(self) -> list[str]:
        if self.program is None:
            return [f"qctl-demo-stand-in-{n}" for n in range(self.clients)]
        return [f"qctl-demo-river-{n + 1}" for n in range(self.clients)]

    @property
    def log(self) -> Path | None:
        """River's clients' output, beside their program."""
        return None if self.program is None else self.program.parent / f"{APPLICATION}.log"

    def start(self) -> None:
        """Raises ``RuntimeError`` (one line) when River's clients do not start: none is
        left running."""
        rng = random.Random(self.seed)
        self._threads = [threading.Thread(target=self._guard, args=(self._produce, rng))]
        if self.program is not None:
            try:
                self._start_clients()
            except RuntimeError:
                self.stop()
                raise
        else:
            self._threads += [
                threading.Thread(
                    target=self._guard, args=(self._work, random.Random(rng.random()), n)
                )
                for n in range(self.clients)
            ]
        for t in self._threads:
            t.daemon = True
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            if t.ident is not None:
                t.join(30)
        if self._proc is not None:
            self._end_clients(self._proc)
            self._proc = None

    def _start_clients(self) -> None:
        """Starts River's clients and waits for their ``ready``."""
        assert self.program is not None and self.log is not None
        with self.log.open("w") as err:
            proc = subprocess.Popen(
                [str(self.program)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                start_new_session=True,  # stopped by the demo (stdin), not by a terminal's ^C
            )
        self._proc = proc
        spec = {
            "dsn": self.dsn,
            "schema": self.schema,
            "clients": self.client_names,
            "queues": dict.fromkeys(QUEUES, MAX_WORKERS),
            "application": APPLICATION,
        }
        if not handed(proc, spec, START_TIMEOUT):
            raise RuntimeError(f"River's clients did not start; see {self.log}")

    def _end_clients(self, proc: subprocess.Popen[str]) -> None:
        """Closes their stdin: River's clients then stop as on an application's shutdown."""
        code = ended(proc, 30)
        if code != 0:
            self.errors.append(f"River's clients exited with {code}; see {self.log}")

    def _guard(self, body: Any, *args: Any) -> None:
        """A thread's loop; its failure is kept for the summary, never a traceback."""
        try:
            body(*args)
        except Exception as exc:  # a lost connection, a dropped schema
            self.errors.append(f"{type(exc).__name__}: {exc}".splitlines()[0])
            self._stop.set()

    def _produce(self, rng: random.Random) -> None:
        s = StandIn(self.dsn, self.schema, self.mark)
        try:
            while not self._stop.wait(0.2 / self.speed):
                queue = rng.choice(QUEUES)
                later = datetime.now(UTC) + timedelta(seconds=rng.uniform(5, 60))
                s.insert(
                    rng.choice(KINDS[queue]),
                    self._args(queue, rng),
                    queue=queue,
                    priority=rng.choice((1, 2, 2, 2, 3, 4)),
                    max_attempts=rng.choice((1, 2, 3)),
                    scheduled_at=later if rng.random() < 0.1 else None,
                    tags=["demo"],
                )
        finally:
            s.close()

    def _args(self, queue: str, rng: random.Random) -> dict[str, Any]:
        """What River's client does with the job (``riverdemo/main.go`` demoArgs):
        reports take long enough to cancel or pause them running; some fail once or
        twice, some on every attempt, some snooze first, a few cancel themselves. The
        stand-ins fail at their own rate (``FAIL_RATE``)."""
        args: dict[str, Any] = {"n": rng.randrange(1000)}
        slow = LONGEST if queue == "reports" else LONGEST / 4
        args["seconds"] = round(rng.uniform(0.1, 1.0) * slow / self.speed, 2)
        fails = rng.choices((0, 1, 2, 99), weights=(80, 10, 5, 5))[0]
        if fails:
            args["fails"] = fails
            args["error"] = rng.choice(ERRORS)
        if rng.random() < 0.05:
            args["snooze"] = round(5 / self.speed, 2)
        elif rng.random() < 0.03:
            args["cancel"] = "demo: the upload it was for is gone"
        return args

    def _work(self, rng: random.Random, number: int) -> None:
        s = StandIn(self.dsn, self.schema, self.mark, own=self.lead)
        client = self.client_names[number]
        leading = False
        working: dict[str, list[tuple[float, dict[str, Any]]]] = {q: [] for q in QUEUES}
        """Per queue, the jobs being worked and when each is done (monotonic)."""
        try:
            while not self._stop.wait(0.3 / self.speed):
                if number == 0:  # leader or not, as its fetches (StandIn's ``own``)
                    leading = self.lead and s.elect(client)
                    s.schedule()
                now = time.monotonic()
                for queue in QUEUES:
                    for _, job in (w for w in working[queue] if w[0] <= now):
                        failed = rng.random() < FAIL_RATE
                        s.complete(job, rng.choice(ERRORS) if failed else None)
                    working[queue] = [w for w in working[queue] if w[0] > now]
                    free = MAX_WORKERS - len(working[queue])
                    if s.paused(queue, register=self.lead) or free <= 0:
                        continue  # paused: River's producer fetches nothing
                    working[queue] += [
                        (now + rng.uniform(*WORK) / self.speed, job)
                        for job in s.fetch(queue, client, free)
                    ]
        finally:
            for _, job in (w for jobs in working.values() for w in jobs):
                s.complete(job)  # River's graceful stop lets running jobs finish
            if leading:
                s.resign(client)
            s.close()
