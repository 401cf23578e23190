"""The audit trail: one JSON line per operator write, from the command line and the
dashboard alike, appended to ``$XDG_STATE_HOME/qctl/audit.jsonl``
(``~/.local/state/qctl/audit.jsonl``).

Each line says who (the OS user, and the database role the DSN connects as), when (UTC),
where (system, context, DSN with its password removed, schema), what (the front-end, the
verb, the selection the operator gave, the ids acted on: the first ``MAX_IDS`` and their
count), the counts done, failed, skipped and not tried, the exit status (the dashboard
records the code the same outcome has on the command line), the error line and the
operator's ``--reason``.

What is recorded: every write that started (a writing verb past the read-only check, a
dashboard action once asked for), whatever its outcome: done, refused by a guard,
declined at the question, failed. Dry runs are not: they only read (read-only mode
allows them), and the trail is of what may have changed a database. Nor is a command
refused as bad input (exit 2) before it did anything: it changed nothing.

The file is created 0600 in a 0700 directory and opened ``O_APPEND`` for each line (one
``write``, so lines of concurrent processes never interleave). qctl only ever reads it to
show it (``qctl audit``). A log that cannot be written never blocks the write it records:
the first failure of the process is reported once through ``warn``.

The command line keeps the entry of its one write in ``pending`` from ``begin`` (the
read-only check) to ``finish`` (the exit status); the result records it prints on the
way are noted in it. The dashboard builds and appends an entry per action (``entry``).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from qctl.core.exits import ExitCode
from qctl_kit.dsn import redact

MAX_IDS = 20
"""How many ids an entry lists (``ids_count`` says how many there were)."""
MAX_TEXT = 300
"""How long a text of an entry may be (an option's value, an error line)."""
ID_KEYS = (
    "id",
    "job_id",
    "workflow_id",
    "new_workflow_id",
    "entry_id",
    "event_id",
    "name",
    "schedule_name",
    "queue_name",
    "queue",
)
"""Where a result record names what it acted on, first match wins."""


def log_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(base) / "qctl" / "audit.jsonl"


def stamp(moment: datetime) -> str:
    """An entry's time: RFC 3339 UTC with microseconds, so stamps sort as text."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now() -> str:
    return stamp(datetime.now(UTC))


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (a container)
        return str(os.getuid())


def _text(value: Any) -> Any:
    """A JSON-ready, bounded form of an option value or a result field."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return [_text(v) for v in list(value)[:MAX_IDS]]
    if isinstance(value, Mapping):
        return {str(k): _text(v) for k, v in list(value.items())[:MAX_IDS]}
    text = str(getattr(value, "value", value))  # an enum's value
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _fields(record: Any) -> Any:
    """A dataclass record (the dashboard's results) as a mapping of its fields."""
    if is_dataclass(record) and not isinstance(record, type):
        return {f.name: getattr(record, f.name) for f in fields(record)}
    return record


def _id_of(record: Any) -> str | None:
    if not isinstance(record, Mapping):
        return None
    for key in ID_KEYS:
        value = record.get(key)
        if value is not None and not isinstance(value, Mapping | list | bool):
            return str(value)
    return None


@dataclass
class Entry:
    """One line of the trail (``line`` is its JSON form)."""

    front: str
    verb: str
    where: dict[str, Any]
    selection: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    user: str = field(default_factory=os_user)
    time: str = field(default_factory=now)
    ids: list[str] = field(default_factory=list)
    done: int = 0
    failed: int = 0
    skipped: int = 0
    not_tried: int = 0
    exit_status: int = 0
    error: str | None = None
    plan: str | None = None
    """The digest of the plan file a ``--plan`` run ran."""

    def note(self, record: Any) -> None:
        """What a result record (an ops record as a mapping, a list of them, the one
        record of several: ``{"count", "results", "skipped", "failed", "not_tried"}``, or a
        vacuum's ``{"tables", "total"}``) says was done. A verb over a filter that acts in
        batches gives a count, no ids (the selection says which)."""
        if isinstance(record, Mapping) and "selected" in record and "stopped_part_way" in record:
            # the verb engine's result (``qctl.core.verbs.Result``): its own counts
            self.ids = [str(i) for i in record["ids"]]
            self.done = int(record["done"])
            self.skipped = sum(record["skipped"].values())
            self.failed = 1 if record["stopped_part_way"] else 0
            self.plan = record.get("plan_digest")
            return
        if isinstance(record, Mapping) and "tables" in record and "total" in record:
            # a vacuum's result (``qctl.cli.vacuum.record``): the rows it removed
            self.done = int(record["total"])
            return
        if isinstance(record, list):
            results: list[Any] = [_fields(r) for r in record]
            record = {}
        elif is_dataclass(record) and not isinstance(record, type):
            return self.note(_fields(record))
        elif isinstance(record, Mapping):
            results = record["results"] if isinstance(record.get("results"), list) else []
        else:
            return
        ids = [i for i in map(_id_of, results or [record]) if i is not None]
        for key, value in record.items():  # DBOS names a schedule's workflows so
            if key.endswith("_ids") and isinstance(value, list):
                ids += [str(v) for v in value]
        self.ids = ids
        count = record.get("count")
        self.done = count if isinstance(count, int) and not results else len(results) or 1
        skipped, not_tried = record.get("skipped"), record.get("not_tried")
        self.skipped = len(skipped) if isinstance(skipped, list) else 0
        self.not_tried = len(not_tried) if isinstance(not_tried, list) else 0
        self.failed = 1 if record.get("failed") else 0

    def record(self) -> dict[str, Any]:
        """The entry as the trail keeps it: a line of the local file, a row's ``entry``
        in the database's table."""
        return {
            "time": self.time,
            "user": self.user,
            **self.where,
            "front": self.front,
            "verb": self.verb,
            "selection": {k: _text(v) for k, v in self.selection.items()},
            "ids": self.ids[:MAX_IDS],
            "ids_count": len(self.ids),
            "done": self.done,
            "failed": self.failed,
            "skipped": self.skipped,
            "not_tried": self.not_tried,
            "exit_status": self.exit_status,
            "error": self.error,
            "reason": self.reason,
            **({"plan": self.plan} if self.plan else {}),
        }

    def line(self) -> str:
        # ASCII only: the log is safe to cat, every control character escaped.
        return json.dumps(self.record(), ensure_ascii=True, separators=(",", ":")) + "\n"


def where(
    system: str, context: str | None, dsn: str | None, schema: str, db_role: str | None
) -> dict[str, Any]:
    """The database part of an entry; ``dsn`` must already be redacted."""
    return {
        "db_role": db_role,
        "system": system,
        "context": context,
        "dsn": dsn,
        "schema": schema or None,
    }


def describe(where: Mapping[str, Any]) -> str:
    """The database of ``where`` in words, as confirmations and plans name it:
    "context prod: postgresql://ops@db/app, schema hopper"; never a password."""
    text = redact(str(where.get("dsn") or ""))
    if where.get("schema"):
        text += f", schema {where['schema']}"
    return f"context {where['context']}: {text}" if where.get("context") else text


class Table:
    """Where the trail is kept in a database (``qctl.core.audit_table.AuditTable``):
    what ``append`` needs of it."""

    where: str
    """The table and its database in words, for notes."""

    def insert(self, record: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def read(self, since: datetime | None, verb: str | None, limit: int) -> list[dict[str, Any]]:
        """The newest ``limit`` entries by start, started at or after ``since``, of
        ``verb`` (or of the noun's verbs); ``Missing`` where there is no table."""
        raise NotImplementedError


class Missing(Exception):
    """The database has no audit table."""


_table: Callable[[], Table] | None = None
"""The context's ``audit = "database"``: the table the entries go to (made when the
first entry is appended: nothing is opened for an invocation that writes nothing)."""
_warned: set[str] = set()


def keep_in(table: Callable[[], Table] | None) -> None:
    """Keep this invocation's entries in a database's table (None: the local file)."""
    global _table
    _table = table


def _warn_once(key: str, text: str, warn: Callable[[str], None]) -> None:
    if key not in _warned:
        _warned.add(key)
        with contextlib.suppress(Exception):
            warn(text)


def append(entry: Entry, warn: Callable[[str], None]) -> None:
    """Append ``entry``: to the database's table where the context keeps the trail
    there, else (and when the table cannot take it: none yet, a read-only database, a
    lost connection) to the local file. A failure is told to ``warn`` once per process
    and never raises."""
    path = log_path()
    if _table is not None:
        where = "the audit table"
        try:
            table = _table()
            where = table.where
            table.insert(entry.record())
            return
        except Exception as exc:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            _warn_once(
                "table", f"{where}: {text}; this write is recorded in the local file {path}", warn
            )
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
        fd = os.open(path, flags, 0o600)
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)  # it names databases: for its owner only
            os.write(fd, entry.line().encode("ascii"))
        finally:
            os.close(fd)
    except OSError as exc:
        _warn_once(
            "file", f"audit log {path}: {exc.strerror or exc}; the write goes on unrecorded", warn
        )


_pending: ContextVar[Entry | None] = ContextVar("qctl_audit_pending", default=None)
_reason: ContextVar[str | None] = ContextVar("qctl_audit_reason", default=None)


def give_reason(reason: str | None) -> None:
    """The operator's ``--reason`` for the write this invocation makes."""
    if reason:
        _reason.set(reason)


def begin(verb: str, where: dict[str, Any], selection: dict[str, Any], front: str = "cli") -> None:
    """Start the entry of this invocation's write (a verb that checks twice starts it
    again: its results come after)."""
    _pending.set(Entry(front, verb, where, selection, reason=_reason.get()))


def retarget(where: dict[str, Any]) -> None:
    """Name ``where`` as the database of the pending write: ``qctl demo`` begins its
    entry on the context's database, then runs on one of its own choosing."""
    entry = _pending.get()
    if entry is not None:
        entry.where = where


def note(record: Any) -> None:
    """A result record the pending write printed (nothing when none is pending)."""
    entry = _pending.get()
    if entry is not None:
        entry.note(record)


def fails(error: str) -> None:
    """The error line the pending write ends with."""
    entry = _pending.get()
    if entry is not None:
        entry.error = _text(error)


def finish(exit_status: int, warn: Callable[[str], None]) -> None:
    """Append the pending entry with its exit status, and forget it and the reason; a
    usage error's entry that noted nothing done is dropped."""
    entry = _pending.get()
    _pending.set(None)
    _reason.set(None)
    if entry is not None and exit_status == ExitCode.USAGE and not (entry.done or entry.ids):
        return
    if entry is not None:
        entry.exit_status = exit_status
        append(entry, warn)


def listing(
    table: Table | None,
    since: datetime | None = None,
    verb: str = "",
    limit: int = 50,
    dsn: str | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """The trail as ``qctl audit list`` and the dashboard's audit screen show it: the
    newest ``limit`` entries by when each started, at or after ``since``, of ``verb``
    (or of a noun's verbs: "jobs"). From ``table`` (the database's, where the context
    keeps the trail there), else from the local file, where ``dsn`` (redacted, as the
    entries name it) keeps only the entries of that database. The second value is a
    note: why the local file was read instead of the table ("" when it was not)."""
    words = verb.split()
    said = ""
    if table is not None:
        try:
            return table.read(since, " ".join(words), limit), ""
        except Missing as exc:
            said = f"{exc}: this account's local file {log_path()} instead"
    # A write is appended when it ends, so a long one's line follows those of writes
    # that started after it: sorted by start (the entry's time), the newest line first
    # among equal times.
    entries = sorted(reversed(read()), key=lambda e: str(e.get("time", "")), reverse=True)
    shown: list[dict[str, Any]] = []
    for entry in entries:
        if since and str(entry.get("time", "")) < stamp(since):
            continue
        if words and str(entry.get("verb", "")).split()[: len(words)] != words:
            continue
        if dsn is not None and entry.get("dsn") != dsn:
            continue
        shown.append(entry)
        if len(shown) == limit:
            break
    return shown, said


def read(path: Path | None = None) -> list[dict[str, Any]]:
    """The trail's entries, oldest first, for display only (a line that is not a JSON
    object, as a torn last line, is left out)."""
    path = path or log_path()
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                entries.append(value)
    return entries
