"""A stand-in for oban-py's producers on the signal channel, for tests without the real
partner: one thread LISTENs on ``<prefix>.oban_signal`` and does to the ``oban_producers``
rows what oban-py 0.7.0's producers do to their own (``_producer.py`` ``_on_signal``:
pause and resume write ``meta.paused``; ``oban.py`` ``_on_signal``: scale writes
``meta.local_limit``), matching ``queue`` and ``ident`` as they do. It records every
pkill it hears. ``sync()`` returns once every signal sent before it was handled
(PostgreSQL delivers notifications in commit order)."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import psycopg

from qctl.systems.oban.database import payload_text
from tests.conftest import PG_DSN


class Producers:
    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.channel = f"{schema}.oban_signal"
        self.pkills: list[int] = []
        self._seen: set[str] = set()
        self._cond = threading.Condition()
        self._stop = False
        self._conn = psycopg.connect(PG_DSN, autocommit=True)
        self._conn.execute(f'SET search_path TO "{schema}"')
        self._conn.execute(
            psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(self.channel))
        )
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def start(self, queue: str, node: str = "web.1", name: str = "Oban", **meta: Any) -> str:
        """A producer row as oban-py's insert_producer.sql writes it."""
        id_ = str(uuid.uuid4())
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(
                f'INSERT INTO "{self.schema}".oban_producers (uuid, name, node, queue, meta)'
                " VALUES (%s, %s, %s, %s, %s)",
                (id_, name, node, queue, json.dumps({"local_limit": 10, "paused": False, **meta})),
            )
        return id_

    def _run(self) -> None:
        while not self._stop:
            # Gathered first: the connection is not free while notifies() waits.
            for note in list(self._conn.notifies(timeout=0.2)):
                text = payload_text(note.payload)  # oban-py's own are base64 of gzip
                if text is not None:
                    self._handle(json.loads(text))

    def _handle(self, payload: dict[str, Any]) -> None:
        action = payload.get("action")
        if action == "sync":
            with self._cond:
                self._seen.add(payload["token"])
                self._cond.notify_all()
            return
        if action == "pkill":
            self.pkills.append(int(payload["job_id"]))
            return
        change = {"pause": {"paused": True}, "resume": {"paused": False}}.get(str(action))
        if action == "scale":
            change = {"local_limit": payload["limit"]}
        if change is None:
            return
        ident = payload.get("ident", "any")
        self._conn.execute(
            "UPDATE oban_producers SET meta = meta || %s::jsonb"
            " WHERE (%s = '*' OR queue = %s) AND (%s = 'any' OR name || '.' || node = %s)",
            (
                json.dumps(change),
                payload.get("queue", "*"),
                payload.get("queue", "*"),
                ident,
                ident,
            ),
        )

    def sync(self) -> None:
        token = uuid.uuid4().hex
        with psycopg.connect(PG_DSN, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_notify(%s, %s)",
                (self.channel, json.dumps({"action": "sync", "token": token})),
            )
        with self._cond:
            assert self._cond.wait_for(lambda: token in self._seen, timeout=10), "no sync"

    def close(self) -> None:
        self._stop = True
        self._thread.join(timeout=5)
        self._conn.close()
