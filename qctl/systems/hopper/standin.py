"""A stand-in for hopper's Go client, for `qctl demo --system hopper` and the tests:
hopper's schema and hopper's own statements, run from Python because no hopper Go process
can run here (the Go module proxy refuses github.com/parallelworks/hopper).

``install`` writes hopper's schema version 8 from ``schema_5fd71c6.sql`` (hoppermigrate's
migrations 001..008 at commit 5fd71c6, reproduced) as hoppermigrate's Apply does: one
transaction per version, then its ``hopper_schema`` row. ``StandIn`` inserts through
hopper's SQL producer function (``hopper_insert``) and claims, finalizes, leases and
leads through the statements of ``queries/standin.sql``, transcribed from
``driver/internal/pgsql``. Two things differ from hopper: ``claim`` can require a
metadata mark (the demo on a schema it shares claims only the jobs it inserted), and
``pump`` delivers a consumer's whole delta at once. No typer, no textual.
"""

from __future__ import annotations

import json
import re
import uuid
from functools import cache
from importlib.resources import files
from typing import Any

from qctl.core.demo import claimed
from qctl.systems.hopper.actions import CHANNEL_DONE, CHANNEL_INSERT
from qctl.systems.hopper.reads import queries

SCHEMA_FILE = "schema_5fd71c6.sql"


@cache
def migrations() -> dict[int, str]:
    """Version -> its script, from the ``-- version: N name`` sections."""
    text = files("qctl.systems.hopper").joinpath(SCHEMA_FILE).read_text()
    parts = re.split(r"^-- version: (\d+) \w+$", text, flags=re.M)
    return {int(v): body for v, body in zip(parts[1::2], parts[2::2], strict=True)}


def install(conn: Any, schema: str, upto: int = 8) -> None:
    """hopper's schema at version ``upto`` in ``schema`` (created when absent) over an
    autocommit psycopg connection, each version applied and recorded in one transaction
    with the schema as its search_path, as hoppermigrate's MigrationApply does."""
    from psycopg import sql

    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    for version, script in sorted(migrations().items()):
        if version > upto:
            break
        with conn.transaction():
            conn.execute("SELECT set_config('search_path', %s, true)", [f'"{schema}"'])
            conn.execute(script)
            conn.execute("INSERT INTO hopper_schema (version) VALUES (%s)", [version])


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value)


class StandIn:
    """One autocommit connection to a hopper schema, acting as hopper's client would.
    ``mark``: metadata every job it inserts carries and the only jobs it claims, unless
    the schema is the demo's ``own`` (``qctl.core.demo.claimed``)."""

    def __init__(
        self, dsn: str, schema: str, mark: dict[str, Any] | None = None, own: bool = False
    ) -> None:
        import psycopg
        from psycopg.rows import dict_row

        self.schema = schema
        self.mark, self.own = mark, own
        self.q = queries("standin.sql")
        self.conn = psycopg.connect(
            dsn,
            autocommit=True,
            row_factory=dict_row,
            options=f"-c search_path={schema}",
            application_name="qctl hopper stand-in",
        )

    def close(self) -> None:
        self.conn.close()

    def _one(self, query: str, params: dict[str, Any]) -> dict[str, Any]:
        row = self.conn.execute(query, params).fetchone()
        if row is None:
            raise LookupError("hopper stand-in: the statement returned no row")
        return dict(row)

    def _metadata(self, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        return {**(metadata or {}), **(self.mark or {})}

    def insert(self, kind: str, args: Any = None, **opts: Any) -> uuid.UUID:
        """``SELECT hopper_insert(kind, args, opts)``: hopper's SQL producer."""
        if self.mark:
            opts["metadata"] = self._metadata(opts.get("metadata"))
        row = self._one(
            self.q.insert, {"kind": kind, "args": _json(args or {}), "opts": _json(opts)}
        )
        return uuid.UUID(str(row["id"]))

    def register(self, hostname: str = "host", ttl: float = 60.0, info: Any = None) -> int:
        """A client lease; its id."""
        row = self._one(
            self.q.register, {"hostname": hostname, "ttl": ttl, "info": _json(info or {})}
        )
        return int(row["id"])

    def renew(self, client: int, ttl: float = 60.0) -> bool:
        return self.conn.execute(self.q.renew, {"id": client, "ttl": ttl}).rowcount == 1

    def deregister(self, client: int) -> None:
        self.conn.execute(self.q.deregister, {"id": client})

    def lead(self, client: int, ttl: float = 60.0) -> bool:
        """Take or renew the leader lease; False while another live client holds it."""
        return self.conn.execute(self.q.lead, {"id": client, "ttl": ttl}).fetchone() is not None

    def resign(self, client: int) -> None:
        self.conn.execute(self.q.resign, {"id": client})

    def claim(self, queue: str, client: int, limit: int = 1) -> list[uuid.UUID]:
        mark = claimed(self.mark, self.own)
        params = {"queue": queue, "by": client, "limit": limit, "mark": mark}
        return [uuid.UUID(str(r["id"])) for r in self.conn.execute(self.q.claim, params).fetchall()]

    def attempts(self, job: uuid.UUID) -> tuple[int, int]:
        """A live job's attempt and max_attempts ((0, 0) once it has left)."""
        row = self.conn.execute(self.q.attempt, {"id": job}).fetchone()
        return (int(row["attempt"]), int(row["max_attempts"])) if row else (0, 0)

    def finalize(
        self,
        job: uuid.UUID,
        client: int,
        state: str,
        error: str | None = None,
        output: Any = None,
        delay: float = 0.0,
    ) -> bool:
        """One result through hopper's finalize statement; False when fenced."""
        entry = {"attempt": self.attempts(job)[0], "error": error}
        params = {
            "id": job,
            "by": client,
            "state": state,
            "delay": delay,
            "error": _json(entry) if error else None,
            "output": _json(output),
            "done": CHANNEL_DONE,
            "insert": CHANNEL_INSERT,
        }
        return bool(self.conn.execute(self.q.finalize, params).fetchall())

    def workflow(
        self,
        queue: str,
        kinds: list[str],
        deps: list[tuple[int, int]],
        name: str | None = None,
        **callbacks: Any,
    ) -> tuple[uuid.UUID, list[uuid.UUID]]:
        """A workflow as flow.go WorkflowInsert writes it: the batch with its edges
        (``deps``: (job, the job it depends on) by position), the jobs (pending where
        they depend on another), the working set of edges."""
        meta = _json(self._metadata())
        with self.conn.transaction():
            ids = [
                uuid.UUID(str(r["id"]))
                for r in self.conn.execute(self.q.new_ids, {"n": len(kinds)}).fetchall()
            ]
            batch = self._one(
                self.q.insert_workflow,
                {
                    "name": name or f"wf-{queue}",
                    "total": len(kinds),
                    **{
                        k: _json(callbacks.get(k))
                        for k in ("on_success", "on_failure", "on_complete")
                    },
                    "metadata": meta,
                    "edges": _json([[str(ids[j]), str(ids[d])] for j, d in deps]),
                },
            )
            waiting = {j for j, _ in deps}
            for i, kind in enumerate(kinds):
                self.conn.execute(
                    self.q.insert_workflow_job,
                    {
                        "id": ids[i],
                        "kind": kind,
                        "queue": queue,
                        "state": "pending" if i in waiting else "available",
                        "batch_id": batch["id"],
                        "args": "{}",
                        "metadata": meta,
                    },
                )
            for j, d in deps:
                self.conn.execute(
                    self.q.insert_dep,
                    {"job_id": ids[j], "depends_on": ids[d], "on_failure": "cancel"},
                )
        return uuid.UUID(str(batch["id"])), ids

    def consumer(self, name: str, pattern: str, queue: str) -> None:
        """A stream consumer starting at the latest."""
        self.conn.execute(
            self.q.insert_consumer, {"name": name, "pattern": pattern, "queue": queue}
        )

    def append(self, topic: str, payload: Any) -> tuple[int, int]:
        """One event in a transaction of its own: its xid, seq."""
        row = self._one(self.q.append, {"topic": topic, "payload": _json(payload)})
        return int(row["xid"]), int(row["seq"])

    def pump(self, name: str) -> list[str]:
        """Deliver a consumer's whole delta and record the new snapshot as seen; the
        positions delivered, in order."""
        with self.conn.transaction():
            c = self._one(self.q.consumer_for_pump, {"name": name})
            now = self._one(self.q.snapshot, {})["s"]
            rows = self.conn.execute(self.q.pump, {**c, "now": now}).fetchall()
            self.conn.execute(self.q.pumped, {"seen": now, "name": name})
        return [r["position"] for r in rows]
