"""A connection to a River database, PostgreSQL (riverpgxv5) or a SQLite file
(riversqlite), gated on the migrations River's migrator recorded in ``river_migration``.

rivermigrate records one ``river_migration`` row per applied version and line
(``riverdriver/riverpgxv5/migration/main/005_migration_unique_client.up.sql`` gave the
table its ``line`` column). qctl knows line ``main``, versions 1 to 8 (River v0.51.2;
008 is a no-op on PostgreSQL, so a v0.40 to v0.47 schema at 007 has the same tables).
A schema lacking one of 1 to 7 is refused (exit 5): its tables are not what qctl reads
(``unique_states`` is 006's). A schema with versions or lines qctl does not know (a newer
River, or a River Pro line whose pilot may cancel or retry differently) is read but
never written (exit 5, both lists named). qctl never migrates River's schema and never
takes rivermigrate's lock.

riversqlite's line ``main`` has the same eight versions (its
``migration/main/00N_<name>.up.sql``): 007 turns args, metadata, tags, attempted_by and
errors into SQLite's binary JSONB, 008 gives river_job AUTOINCREMENT ids. Where the
SQLite library predates JSONB (3.45), the connection gets SQLite's own JSON functions
over it from ``qctl_kit.sqlite.jsonb``, so one statement reads the same on both.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from qctl.core.changes import RESET, Hint
from qctl.core.sqldb import HINT_BUFFER, LISTENING, POLL_SECONDS, SqlDatabase
from qctl_kit.errors import SchemaTooNew
from qctl_kit.sqlfile import Queries, load
from qctl_kit.streams import Subscription

LINE = "main"
KNOWN_VERSIONS: dict[int, str] = {
    1: "create_river_migration",
    2: "initial_schema",
    3: "river_job_tags_non_null",
    4: "pending_and_more",
    5: "migration_unique_client",
    6: "bulk_unique",
    7: "notification_outbox_sqlite_jsonb_and_sql_cleanup",
    8: "job_id_autoincrement",
}
"""``riverdriver/riverpgxv5/migration/main/00N_<name>.up.sql`` at River v0.51.2."""
REQUIRED = tuple(range(1, 8))
"""The versions every column qctl reads and writes needs (008 changes nothing on
PostgreSQL)."""
SUPPORTED = "River v0.40.0 to v0.51.2 (line main, versions 1..7 or 1..8; tested at v0.51.2)"


TOPICS: dict[str, str] = {
    "river_insert": "jobs",
    "river_control": "jobs",
    "river_leadership": "clients",
}
"""River's notification topics (``internal/notifier/notifier.go``), each with the kind
of row a notice on it says changed. A client sends ``river_insert`` (``{"queue": ...}``,
at most once per queue per FetchCooldown) when it inserts available jobs,
``river_control`` (``{"action": "cancel"|"pause"|"resume"|"metadata_changed",
"job_id", "queue"}``) from JobCancel and QueuePause/QueueResume/QueueUpdate, and
``river_leadership`` (``{"action": "resigned"|"request_resign", "leader_id"}``) from its
elector. Fetches, completions and snoozes send nothing: those are polled."""


OUTBOX_BATCH = 256
"""Notices read from River's SQLite outbox at once (riversqlite's listener's batch)."""


class UnsupportedSchema(SchemaTooNew):
    """The River schema is at versions qctl does not know; exit 5."""


@dataclass(frozen=True)
class SchemaState:
    """What ``river_migration`` says: the applied (line, version) pairs."""

    applied: tuple[tuple[str, int], ...]

    @property
    def main(self) -> tuple[int, ...]:
        return tuple(v for line, v in self.applied if line == LINE)

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(v for v in REQUIRED if v not in self.main)

    @property
    def unknown(self) -> tuple[str, ...]:
        """Versions of line main qctl does not know, and every version of another line."""
        return tuple(
            f"{line} {v}" for line, v in self.applied if line != LINE or v not in KNOWN_VERSIONS
        )

    @property
    def readable(self) -> bool:
        return not self.missing

    @property
    def supported(self) -> bool:
        """Read and written: every required version applied, nothing unknown."""
        return not self.missing and not self.unknown

    def refusal(self, writing: bool = False) -> str:
        found = ", ".join(f"{line} {v}" for line, v in self.applied) or "none"
        why = (
            f"versions not applied: main {', '.join(map(str, self.missing))}"
            if self.missing
            else f"migrations qctl does not know: {', '.join(self.unknown)}"
            " (a newer River or a River Pro line)"
        )
        refused = "qctl reads it but never writes to it" if writing else "refused"
        return (
            f"River schema at migrations {found}: {why}; qctl knows {SUPPORTED}; {refused},"
            " and never migrates a River database (River's migrator does: rivermigrate)"
        )


class Database(SqlDatabase):
    """A River database (PostgreSQL or SQLite), its migrations gated on opening unless
    ``gate`` is False (``db status`` reports what it finds instead); a write calls
    ``writable`` first."""

    label = "River"
    sqlite = True
    unsupported = UnsupportedSchema

    def __init__(self, dsn: str, schema: str = "", gate: bool = True, **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        self._feeds: list[tuple[Subscription[Hint], threading.Thread]] = []
        super().__init__(dsn, schema, **session)
        if self.postgres:
            # A listing's filters are "NULL or ..." parameters: planned for the values
            # given they fold away, while the generic plan a statement run five times
            # gets keeps them all and went parallel for a page of 50 (workers started for
            # tens of milliseconds at 10M jobs). JIT compiles for longer than any of
            # qctl's reads runs, as on hopper's and dispatch's sessions.
            self.all(
                "SELECT set_config('plan_cache_mode', 'force_custom_plan', false),"
                " set_config('jit', 'off', false)"
            )
        self.state = self._read_state()
        if gate and not self.state.readable:
            self.refuse(UnsupportedSchema(self.state.refusal()))

    def statements(self, capability: str) -> Queries:
        """The named statements of ``queries/<capability>.sql`` (PostgreSQL, riverpgxv5's
        schema) or ``queries/<capability>_sqlite.sql`` (riversqlite's)."""
        suffix = "" if self.postgres else "_sqlite"
        return load("qctl.systems.river.queries", f"{capability}{suffix}.sql")

    def now(self) -> Any:
        """The database's now: PostgreSQL's ``now()``; on SQLite the UTC wall clock River's
        SQLite statements use (``datetime('now', 'subsec')``)."""
        [row] = self.all(self.statements("reads").now)
        return row["now"] if self.postgres else instant(row["now"])

    def writable(self) -> None:
        """Refuse (exit 5) to write to a schema at migrations qctl does not know."""
        if not self.state.supported:
            raise UnsupportedSchema(self.state.refusal(writing=True))

    def channel(self, topic: str) -> str:
        """A River topic as River's listeners LISTEN on it and its clients NOTIFY it:
        ``<schema>.<topic>`` (riverpgxv5 ``Listener.Connect`` prefixes the connection's
        schema; ``pg_misc.sql`` PGNotifyMany the client's or ``current_schema()``), the
        bare topic where the session has no schema, and always on SQLite (riversqlite's
        outbox, ``river_notification``, holds the topic as River's client names it)."""
        return f"{self.schema}.{topic}" if self.schema else topic

    @property
    def control_channel(self) -> str:
        """River's control topic (``channel``): cancel, pause and resume go there."""
        return self.channel("river_control")

    def hint(self, channel: str, payload: str) -> Hint:
        """An insert names its queue, a cancel its job, a pause or resume its queue, a
        leadership notice no row; a payload qctl cannot read says its topic's kind
        changed."""
        topic = channel.rpartition(".")[2]
        kind = TOPICS.get(topic, "jobs")
        try:
            body = json.loads(payload)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return Hint(kind, bulk=True)
        named = body.get("queue")
        queue = named if isinstance(named, str) else ""
        if topic == "river_insert":
            return Hint("jobs", queue=queue, bulk=True)
        if topic == "river_control" and body.get("action") == "cancel":
            job = body.get("job_id")
            return Hint("jobs", ids=(str(job),), queue=queue) if job else Hint("jobs", bulk=True)
        if topic == "river_control" and queue:
            return Hint("queues", queue=queue)
        return Hint(kind, bulk=True)

    def listened(self) -> dict[str, str]:
        """River's topics on this schema (``TOPICS``), each with the kind of row a notice
        on it says changed; state changes River does not notify (fetches, completions,
        retries) are polled."""
        return {self.channel(topic): kind for topic, kind in TOPICS.items()}

    def notifications(
        self, channels: Sequence[str], timeout: float | None = None
    ) -> Iterator[tuple[str, str]]:
        """``SqlDatabase.notifications``; on SQLite River's outbox (``outbox``)."""
        if self.postgres:
            yield from super().notifications(channels, timeout)
            return
        waited = 0.0
        for notice in self.outbox(channels):
            if notice is not None:
                waited = 0.0
                yield notice
            elif timeout is not None and waited >= timeout:
                return
            else:
                waited += POLL_SECONDS

    def changes(self) -> Subscription[Hint] | None:
        """``SqlDatabase.changes``; on SQLite the hints of River's outbox (``outbox``),
        polled on a thread of their own until the subscription is closed or the database
        is."""
        if self.postgres:
            return super().changes()
        sub: Subscription[Hint] = Subscription(HINT_BUFFER, lambda: RESET)

        def poll() -> None:
            with contextlib.suppress(Exception):  # the database closed: the hints end
                for notice in self.outbox(list(self.listened())):
                    if sub.closed:
                        return
                    if notice is not None:
                        topic, payload = notice
                        sub.offer(RESET if topic == LISTENING else self.hint(topic, payload))

        thread = threading.Thread(target=poll, name="qctl-River-outbox", daemon=True)
        self._feeds.append((sub, thread))
        thread.start()
        return sub

    def outbox(self, topics: Sequence[str]) -> Iterator[tuple[str, str] | None]:
        """River's notifications on SQLite, polled as River's listener polls its outbox
        (``river_sqlite_listener.go``): ``(LISTENING, "")`` first, then each notice on
        ``topics`` added since (``(topic, payload)``), and None after each poll that found
        none (``POLL_SECONDS`` later)."""
        q = self.statements("reads")
        [row] = self.all(q.notification_last_id)
        last = int(row["id"])
        wanted = json.dumps(list(topics))
        yield LISTENING, ""
        while True:
            found = self.all(
                q.notifications_after, {"after": last, "topics": wanted, "max": OUTBOX_BATCH}
            )
            for notice in found:
                last = int(notice["id"])
                yield str(notice["topic"]), str(notice["payload"])
            if not found:
                time.sleep(POLL_SECONDS)
                yield None

    def close(self) -> None:
        """The outbox's hints stopped first (``changes``): no poll runs on a closed
        connection."""
        for sub, thread in self._feeds:
            sub.close()
            thread.join(timeout=2 * POLL_SECONDS)
        self._feeds.clear()
        super().close()

    def _connect_sqlite(self) -> Any:
        from qctl_kit.sqlite import jsonb

        conn = super()._connect_sqlite()
        jsonb.install(conn)
        return conn

    def _read_state(self) -> SchemaState:
        # Before 005 the table had no line: every row was line main
        # (005_migration_unique_client.up.sql copies them over as such).
        has_line = self.one(self.statements("reads").migration_has_line)
        line = "line" if has_line and has_line["n"] else "'main'"
        rows = self.all(f"SELECT {line} AS line, version FROM {{t}}river_migration ORDER BY 1, 2")
        return SchemaState(tuple((str(r["line"]), int(r["version"])) for r in rows))


def instant(value: Any) -> Any:
    """A River instant as read: PostgreSQL's timestamptz as psycopg gives it, riversqlite's
    text (UTC, ``YYYY-MM-DD HH:MM:SS[.fff]``, as River's timeString and SQLite's
    CURRENT_TIMESTAMP write it) as a UTC ``datetime``."""
    from qctl_kit.decode import from_sqlite_text

    return from_sqlite_text(value) if isinstance(value, str) else value
