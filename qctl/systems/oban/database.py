"""A connection to an Oban database (PostgreSQL only), and what flavour of Oban made it.

One schema (Oban's prefix, ``public`` by default) holds ``oban_jobs`` for both flavours:

- **oban-py** (``oban`` on PyPI, ``oban/queries/install.sql``) adds ``oban_leaders`` and
  ``oban_producers`` and records no version; qctl knows the schema of oban-py 0.7.0 and
  checks the job states its enum holds.
- **Elixir Oban** (``lib/oban/migrations/postgres.ex``) records its migration version as
  the comment on ``oban_jobs`` and, from v11, keeps its peers in ``oban_peers``; qctl
  knows v11 to v15.

A schema qctl does not know (a newer version, a state it has never seen) is read but never
written (exit 5); one older than Elixir's v11 or missing ``oban_jobs``' columns is
refused. Oban stores UTC instants in ``timestamp without time zone`` columns: the reads
give them back as UTC. qctl never migrates an Oban database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from qctl.core.changes import Hint
from qctl.core.sqldb import SqlDatabase
from qctl_kit.dsn import is_postgres
from qctl_kit.errors import InvalidInput, SchemaTooNew

PY = "oban-py"
ELIXIR = "elixir"
PY_VERSION = "0.7.0"
"""The oban-py release whose ``install.sql`` qctl's statements were written against."""
ELIXIR_VERSIONS = range(11, 16)
"""Elixir Oban's migrations qctl knows (``lib/oban/migrations/postgres/v11.ex`` to
``v15.ex``): v11 adds ``oban_peers``, v12 drops the insert trigger, v13 and v15 add
indexes, v14 adds the ``suspended`` state."""
STATES = (
    "available",
    "scheduled",
    "suspended",
    "executing",
    "retryable",
    "completed",
    "discarded",
    "cancelled",
)
"""``oban_job_state``'s labels as oban-py 0.7.0 and Elixir v14 make them (``suspended``
is absent before Elixir's v14)."""
SUPPORTED = (
    f"oban-py {PY_VERSION}'s schema and Elixir Oban's migrations v11 to v15"
    " (tested on fixtures of both)"
)

STATE_SQL = """
SELECT
  (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
     WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
       AND c.relname IN ('oban_jobs', 'oban_leaders', 'oban_producers', 'oban_peers'))
    AS tables,
  (SELECT obj_description(c.oid, 'pg_class') FROM pg_class c
     WHERE c.relnamespace = n.oid AND c.relname = 'oban_jobs') AS comment,
  (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder) FROM pg_enum e
     JOIN pg_type t ON t.oid = e.enumtypid
     WHERE t.typnamespace = n.oid AND t.typname = 'oban_job_state') AS states
FROM pg_namespace n WHERE n.nspname = %s
"""
"""What tells the flavours apart: the tables (``oban/queries/verify_structure.sql``'s
three, and Elixir's peers), Elixir's version (``migrated_version`` in
``lib/oban/migrations/postgres.ex`` reads the same comment) and the job states."""


class UnsupportedSchema(SchemaTooNew):
    """An Oban schema qctl does not know; exit 5."""


@dataclass(frozen=True)
class SchemaState:
    tables: tuple[str, ...]
    comment: str | None
    states: tuple[str, ...]

    @property
    def version(self) -> int | None:
        """Elixir's migration version (the comment on ``oban_jobs``), if any."""
        text = (self.comment or "").strip()
        return int(text) if text.isdigit() else None

    @property
    def flavour(self) -> str:
        if {"oban_leaders", "oban_producers"} <= set(self.tables):
            return PY
        return ELIXIR if self.version is not None or "oban_peers" in self.tables else ""

    @property
    def described(self) -> str:
        if self.flavour == PY:
            also = f", Elixir v{self.version} too" if self.version is not None else ""
            return f"oban-py (oban_leaders, oban_producers{also})"
        if self.flavour == ELIXIR:
            return f"Elixir Oban v{self.version}" if self.version else "Elixir Oban (no version)"
        return "unknown"

    @property
    def unknown_states(self) -> tuple[str, ...]:
        return tuple(s for s in self.states if s not in STATES)

    @property
    def readable(self) -> bool:
        if "oban_jobs" not in self.tables or not self.flavour:
            return False
        return self.flavour == PY or (self.version or 0) >= ELIXIR_VERSIONS.start

    @property
    def supported(self) -> bool:
        """Read and written: a known flavour at a known version, no unknown state."""
        if not self.readable or self.unknown_states:
            return False
        return self.flavour == PY or self.version in ELIXIR_VERSIONS

    def refusal(self, writing: bool = False) -> str:
        if "oban_jobs" not in self.tables:
            why = "no oban_jobs table"
        elif not self.flavour:
            why = "neither oban-py's tables (oban_leaders, oban_producers) nor Elixir's version"
        elif self.unknown_states:
            why = f"job states qctl does not know: {', '.join(self.unknown_states)}"
        elif self.version is not None and self.version < ELIXIR_VERSIONS.start:
            why = f"Elixir Oban v{self.version} is older than v11"
        else:
            why = f"{self.described} is newer than qctl knows"
        refused = "qctl reads it but never writes to it" if writing else "refused"
        return (
            f"Oban schema: {why}; qctl knows {SUPPORTED}; {refused}, and never migrates an"
            " Oban database (oban-py's oban.schema.install or Elixir's Oban.Migration does)"
        )


class Database(SqlDatabase):
    """An Oban database, its schema gated on opening unless ``gate`` is False (``db
    status`` reports what it finds instead); a write calls ``writable`` first."""

    label = "Oban"
    marker = "oban_jobs"
    default_schema = "public"
    unsupported = UnsupportedSchema

    def __init__(self, dsn: str, schema: str = "", gate: bool = True, **session: Any) -> None:
        """``session``: ``SqlDatabase``'s (``read_only``, the timeouts)."""
        if not is_postgres(dsn):
            raise InvalidInput(
                "Oban keeps its jobs in PostgreSQL only (oban-py and Elixir Oban alike):"
                " pass --dsn postgresql://..."
            )
        super().__init__(dsn, schema, **session)
        # JIT compiles for longer than any of qctl's reads runs (a second, on the
        # Queues tab's probes over a large oban_jobs, for a read of milliseconds).
        self.all("SELECT set_config('jit', 'off', false)")
        self.state = self._read_state()
        if gate and not self.state.readable:
            self.refuse(UnsupportedSchema(self.state.refusal()))

    def listened(self) -> dict[str, str]:
        """Oban's insert and signal channels of this prefix: its notifier (oban-py's
        ``_notifier.py`` ``_to_full_channel``, Elixir's ``Oban.Notifiers.Postgres``)
        prefixes each with the schema."""
        return {self.channel("insert"): "jobs", self.channel("signal"): "queues"}

    def channel(self, name: str) -> str:
        """Oban's channel ``name`` as its nodes LISTEN on it: ``<prefix>.oban_<name>``."""
        return f"{self.schema}.oban_{name}"

    @property
    def flavour(self) -> str:
        return self.state.flavour

    def writable(self) -> None:
        """Refuse (exit 5) to write to a schema qctl does not know."""
        if not self.state.supported:
            raise UnsupportedSchema(self.state.refusal(writing=True))

    def hint(self, channel: str, payload: str) -> Hint:
        """An insert notice names a queue (``{"queue": ...}``); a signal may name one,
        sent plain or compressed (``payload_text``). Anything else: a refresh of the
        kind."""
        import json

        queue = ""
        try:
            value = json.loads(payload_text(payload) or "null")
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("queue"), str):
            queue = value["queue"] if value["queue"] != "*" else ""
        return Hint(self.listened()[channel], queue=queue, bulk=True)

    def _read_state(self) -> SchemaState:
        row = self.one(STATE_SQL, (self.schema,)) or {}
        return SchemaState(
            tuple(row.get("tables") or ()), row.get("comment"), tuple(row.get("states") or ())
        )


PAYLOAD_LIMIT = 64 * 1024
"""Bytes a compressed payload may open to: a NOTIFY carries under 8000, and gzip can
multiply that past any use."""


def payload_text(payload: str) -> str | None:
    """A notice's payload as Oban's notifiers read it (oban-py's ``_notifier.py``
    decode_payload): JSON as sent, or oban-py's base64 of gzip opened up to
    ``PAYLOAD_LIMIT``; None when it is neither, or opens past the limit."""
    if payload.startswith("{"):
        return payload
    import base64
    import binascii
    import zlib

    try:
        opener = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip's header
        text = opener.decompress(base64.b64decode(payload, validate=True), PAYLOAD_LIMIT + 1)
    except (binascii.Error, zlib.error):
        return None
    if len(text) > PAYLOAD_LIMIT or not opener.eof:
        return None
    return text.decode("utf-8", "replace")
