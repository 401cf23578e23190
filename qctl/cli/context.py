"""The connection context of one ``qctl`` invocation, put in ``ctx.obj`` by the root
callback and shared by the command line and the dashboard.

The database comes as one unit, the first of: ``--dsn``; the named context
(``--context NAME`` or ``QCTL_CONTEXT``); ``QCTL_DSN``; a system's own variable
(``System.dsn_env``: DBOS's ``DBOS_SYSTEM_DATABASE_URL``, as its CLI reads it); the
config file's ``default_context``; else the embedded default database. A context
contributes its settings only when it is that unit: with ``--dsn`` or an environment
DSN in effect, no context's
schema, system or read-only flag applies (``--dsn`` with ``--context`` is a usage error).
Then, first match wins:

- schema: ``--schema``; the named context; ``QCTL_SCHEMA``; the default context.
- read-only: ``--read-only``, ``QCTL_READ_ONLY=1`` (``1/true/yes/on``; ``0/false/no/off``
  or empty leave it off, anything else is a usage error) or ``read_only = true`` in the
  context in effect (any of them turns it on; nothing turns it off).
- system: ``--system``; the named context; ``QCTL_SYSTEM``; the default context; else
  detected from the database's tables (``qctl.systems.detect``).
- where the audit trail is kept: ``audit = "database"`` in the context in effect or
  ``QCTL_AUDIT=database``: the database's own table (``qctl.core.audit_table``, made by
  ``qctl audit init``), so every operator of it sees one trail; else (``file``, the
  default) this account's local file.
- PostgreSQL's ``statement_timeout`` and ``lock_timeout`` of every session qctl opens:
  ``--statement-timeout``/``--lock-timeout``; the named context's ``statement_timeout``/
  ``lock_timeout``; ``QCTL_STATEMENT_TIMEOUT``/``QCTL_LOCK_TIMEOUT``; the default
  context; the DSN's ``options`` or ``PGOPTIONS`` when they set it; else
  ``DEFAULT_STATEMENT_TIMEOUT`` and ``DEFAULT_LOCK_TIMEOUT``. Durations as ``5s``,
  ``500ms``; ``0`` turns a limit off.

With ``--dsn``, a config file that cannot be read is ignored.

The config file is ``$XDG_CONFIG_HOME/qctl/config.toml`` (``~/.config/qctl/config.toml``)::

    default_context = "local"

    [contexts.prod]
    dsn = "postgresql://ops@db.internal/app"
    schema = "azync"
    read_only = true
    lock_timeout = "2s"
    audit = "database"

    [contexts.payments]
    dsn = "postgresql://ops@db.internal/payments"
    system = "dbos"
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from qctl_kit.errors import InvalidInput, ReadOnly

D = TypeVar("D")

if TYPE_CHECKING:
    from qctl.systems import System
    from qctl_kit.config import Session
    from qctl_kit.postgres.watch import Blocker


DEFAULT_STATEMENT_TIMEOUT = timedelta(seconds=10)
"""How long one statement of the console may run: a read, or one batch of a bulk verb
(batches are sized to a quarter of a second). An operator at a terminal learns in seconds
that something is wrong, instead of waiting on it with no output."""
DEFAULT_LOCK_TIMEOUT = timedelta(seconds=5)
"""How long a statement of the console may wait for a lock another session holds: behind
a migration's or a stuck transaction's lock the console says so, and its own waiting
statement (and the locks it already took) leave the server instead of queueing other
sessions behind it."""
ANSWER_GRACE = timedelta(seconds=5)
"""How long past its ``statement_timeout`` a statement may go without a word from the
server before qctl gives its connection up (``Config.unanswered_after``): the server
cancels it at the limit itself, unless it is paused or cut off."""
TIMEOUTS = ("statement_timeout", "lock_timeout")
MAX_TIMEOUT = timedelta(milliseconds=2**31 - 1)
"""The longest timeout PostgreSQL takes (an int of milliseconds)."""


AUDIT_KEEPERS = ("file", "database")
"""Where a context keeps its audit trail (``audit``): this account's local file, or the
database's own table."""

AUDIT_UNSELECTING = frozenset({"yes", "output", "dry_run", "reason"})
"""Options of a writing verb that say how to run it, not what it acts on: the audit
entry has its own fields for a dry run and the reason."""


class ConfigFileError(InvalidInput):
    """The config file is unreadable or names an unknown context (a usage error)."""


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "qctl" / "config.toml"


def _check_private(path: Path, info: os.stat_result) -> None:
    """Refuse a config file someone else could have written (as ssh refuses such an
    ``authorized_keys``): owned by another user than this one or root, writable by its
    group or others, or in a directory others may write to (unless sticky, as /tmp)
    or owned by another user, where it can be swapped."""
    me = os.geteuid()
    if info.st_uid not in (me, 0):
        raise ConfigFileError(f"refusing {path}: it belongs to another user (uid {info.st_uid})")
    if info.st_mode & 0o022:
        raise ConfigFileError(
            f"refusing {path}: it is writable by its group or others (run `chmod go-w {path}`)"
        )
    parent = os.stat(path.parent)
    if parent.st_uid not in (me, 0) or (
        parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX
    ):
        raise ConfigFileError(
            f"refusing {path}: its directory may be written by another user "
            f"(run `chmod go-w {path.parent}`)"
        )


def load_config_file(path: Path | None = None) -> dict[str, Any]:
    """The parsed config file, or ``{}`` when there is none. A file that others may
    write is refused: it names the databases qctl acts on, and their passwords."""
    path = path or config_path()
    if not path.exists():
        return {}
    import tomllib

    try:
        with path.open("rb") as fh:
            _check_private(path, os.fstat(fh.fileno()))
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read {path}: {exc}") from None


class ConfigText:
    """The config file's text, edited in place: only the lines of the key or table that
    changes are rewritten, so comments, blank lines, key order and settings qctl does not
    know stay as they were. ``save`` checks the edit against the data it should give."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_path()
        self.lines = (
            self.path.read_text(encoding="utf-8").splitlines() if self.path.exists() else []
        )

    @staticmethod
    def _header(line: str) -> tuple[str, ...] | None:
        """The key path of a ``[table]`` header line, ``("[[",)`` for an array-of-tables
        header (a boundary no path matches), None for any other line."""
        import tomllib

        text = line.strip()
        if text.startswith("[["):
            return ("[[",)
        if not text.startswith("["):
            return None
        try:
            node: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return None  # a line of a multi-line value
        path: list[str] = []
        while isinstance(node, dict) and len(node) == 1:
            ((key, node),) = node.items()
            path.append(key)
        return tuple(path)

    def _headers(self) -> list[tuple[int, tuple[str, ...]]]:
        found = ((i, self._header(line)) for i, line in enumerate(self.lines))
        return [(i, h) for i, h in found if h is not None]

    def _top_end(self) -> int:
        """Where the top-level keys end: the first table header."""
        headers = self._headers()
        return headers[0][0] if headers else len(self.lines)

    def _top_key(self, key: str) -> int | None:
        import tomllib

        for i in range(self._top_end()):
            with contextlib.suppress(tomllib.TOMLDecodeError):
                if list(tomllib.loads(self.lines[i])) == [key]:
                    return i
        return None

    def set_key(self, key: str, value: Any) -> None:
        """Set a top-level key: its line rewritten, or a line added after the last
        top-level one."""
        line = f"{_toml_key(key)} = {_toml_value(value)}"
        at = self._top_key(key)
        if at is not None:
            self.lines[at] = line
            return
        end = self._top_end()
        while end > 0 and self.lines[end - 1].lstrip().startswith("#"):
            end -= 1  # the first table's comment
        while end > 0 and not self.lines[end - 1].strip():
            end -= 1
        apart = end < len(self.lines) and self.lines[end].strip()
        self.lines[end:end] = [line, ""] if apart else [line]

    def remove_key(self, key: str) -> None:
        at = self._top_key(key)
        if at is not None:
            del self.lines[at]

    def _table(self, path: tuple[str, ...]) -> tuple[int, int, int] | None:
        """(first comment line above it, header line, end) of table ``path`` with its
        subtables; the comment lines right above a header describe its table."""
        headers = self._headers()
        for n, (start, header) in enumerate(headers):
            if header != path:
                continue
            end = next((i for i, h in headers[n + 1 :] if h[: len(path)] != path), len(self.lines))
            while end > start + 1 and self.lines[end - 1].lstrip().startswith("#"):
                end -= 1  # the next table's comment
            lead = start
            while lead > 0 and self.lines[lead - 1].lstrip().startswith("#"):
                lead -= 1
            return lead, start, end
        return None

    def set_table(self, path: tuple[str, ...], entries: Mapping[str, Any]) -> None:
        """Write table ``path`` with ``entries``: in place of the old one (its comment
        kept), else at the end of the file."""
        block = [
            "[" + ".".join(_toml_key(k) for k in path) + "]",
            *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entries.items()),
        ]
        found = self._table(path)
        if found is not None:
            _, start, end = found
            self.lines[start:end] = [*block, ""] if end < len(self.lines) else block
            return
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        self.lines += ["", *block] if self.lines else block

    def remove_table(self, path: tuple[str, ...]) -> None:
        """Remove table ``path``, its subtables and the comment right above it."""
        found = self._table(path)
        if found is not None:
            lead, _, end = found
            del self.lines[lead:end]

    def save(self, expected: Mapping[str, Any]) -> None:
        """Write the edited text: to a private temporary file in the same directory, then
        renamed over the old one, so a reader never sees half a file and a crash leaves
        the old one. Mode 0600 (it holds DSNs), directory 0700 when created. Refused,
        with nothing written, when the text would not read back as ``expected`` (a table
        written in a form this editor does not rewrite, such as an inline table)."""
        import tempfile
        import tomllib

        text = "\n".join(self.lines).strip("\n") + "\n"
        try:
            same = tomllib.loads(text) == dict(expected)
        except tomllib.TOMLDecodeError:
            same = False
        if not same:
            raise ConfigFileError(
                f"cannot edit {self.path} in place (a context written other than as a "
                "[contexts.NAME] table?): edit it by hand"
            )
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(value: str) -> str:
    # A basic string: quote, backslash and control characters escaped, the rest as is.
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return value.isoformat() if hasattr(value, "isoformat") else _toml_string(str(value))


_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """A boolean environment variable: ``1/true/yes/on`` or ``0/false/no/off`` (any case,
    empty is off); anything else is a usage error rather than a silent "off"."""
    value = env.get(name, "").strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise InvalidInput(
        f"{name}={env.get(name)!r} is not a boolean (use 1/true/yes/on or 0/false/no/off)"
    )


def _context_entry(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    contexts = data.get("contexts") or {}
    entry = contexts.get(name) if isinstance(contexts, dict) else None
    if not isinstance(entry, dict):
        known = ", ".join(sorted(contexts)) if isinstance(contexts, dict) else ""
        raise ConfigFileError(
            f"no context {name!r} in {path}" + (f" (known: {known})" if known else "")
        )
    for key in ("dsn", "schema", "system"):
        if key in entry and not isinstance(entry[key], str):
            raise ConfigFileError(f"context {name!r} in {path}: {key} must be a string")
    if "read_only" in entry and not isinstance(entry["read_only"], bool):
        raise ConfigFileError(f"context {name!r} in {path}: read_only must be true or false")
    if "audit" in entry and entry["audit"] not in AUDIT_KEEPERS:
        raise ConfigFileError(f'context {name!r} in {path}: audit must be "file" or "database"')
    limits = {
        k: timeout_setting(entry[k], f"context {name!r} in {path}: {k}")
        for k in TIMEOUTS
        if k in entry
    }
    return {**entry, **limits}


def _audit_keeper(env: Mapping[str, str], context: Mapping[str, Any]) -> str:
    """The context's ``audit``, else ``QCTL_AUDIT``, else ``file``."""
    value = context.get("audit") or env.get("QCTL_AUDIT", "").strip().lower() or "file"
    if value not in AUDIT_KEEPERS:
        raise InvalidInput(f'QCTL_AUDIT={value!r}: use "file" or "database"')
    return str(value)


def timeout_setting(value: Any, what: str) -> timedelta:
    """A timeout setting's duration (``5s``, ``500ms``, ``0`` for none)."""
    from qctl.core.parse import parse_duration

    if not isinstance(value, str):
        raise ConfigFileError(f'{what} must be a duration such as "5s"')
    try:
        limit = parse_duration(value)
    except InvalidInput as exc:
        raise InvalidInput(f"{what}: {exc}") from None
    if limit > MAX_TIMEOUT:
        raise InvalidInput(f"{what}: {value!r} is longer than PostgreSQL allows (24 days)")
    return limit


def _dsn_sets(dsn: str, name: str) -> bool:
    """Whether a PostgreSQL DSN's ``options`` (or ``PGOPTIONS``) set ``name``."""
    from qctl_kit.dsn import is_postgres, options_set, own_options, postgres_params

    if not dsn or not is_postgres(dsn):
        return False
    try:
        return options_set(own_options(postgres_params(dsn)), name)
    except InvalidInput:  # a malformed DSN: the store says so when it opens
        return False


def lock_wait_note(blocker: Blocker) -> None:
    """``Blocker.line`` on stderr, escaped (called from the store's watch thread)."""
    from qctl.core.sanitize import sanitize

    sys.stderr.write(f"qctl: {sanitize(blocker.line())}\n")
    sys.stderr.flush()


@dataclass
class CliContext:
    """Resolved connection settings; ``open_store`` opens (and caches) the store."""

    dsn: str | None = None
    schema: str = ""
    context_name: str | None = None
    read_only: bool = False
    no_color: bool = False
    wide: bool = False
    """``--wide``: table cells whole on a terminal too (``qctl.cli.output``)."""
    system_name: str = ""
    """``--system`` or the context's ``system``; empty: detect it."""
    dsn_flag: bool = False
    """The DSN was given as ``--dsn`` (not by a context or ``QCTL_DSN``)."""
    statement_timeout: timedelta | None = DEFAULT_STATEMENT_TIMEOUT
    lock_timeout: timedelta | None = DEFAULT_LOCK_TIMEOUT
    """PostgreSQL's session limits (see the module doc); None: the DSN's own."""
    audit: str = "file"
    """Where the audit trail is kept: ``file`` or ``database`` (``AUDIT_KEEPERS``)."""
    unlimited: tuple[str, ...] = ()
    """Limits of ``TIMEOUTS`` that are off unless asked for, set by ``unlimit``."""
    _timeouts_given: tuple[str, ...] = field(default=(), repr=False)
    writes: bool = False
    """A command that writes said so (``require_writable``) before opening anything: the
    embedded default database is created for a write, never for a read."""
    opened: list[Any] = field(default_factory=list, repr=False)
    """What a system's database opener opened for this invocation (azync's stores),
    closed with the context."""
    _system: System | None = field(default=None, repr=False)
    _detected_on: Any = field(default=None, repr=False)
    """The connection detection read on, kept for a system whose opener takes it over
    (``System.takes_detection``, ``detected``)."""
    _databases: dict[Any, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def resolve(
        cls,
        dsn: str | None = None,
        schema: str | None = None,
        context: str | None = None,
        read_only: bool = False,
        no_color: bool = False,
        wide: bool = False,
        system: str | None = None,
        statement_timeout: str | None = None,
        lock_timeout: str | None = None,
        environ: dict[str, str] | None = None,
        config_file: Path | None = None,
    ) -> CliContext:
        """Combine flags, environment and the config file (see the module doc)."""
        env = os.environ if environ is None else environ
        path = config_file or config_path()
        if dsn and context:
            raise InvalidInput("--dsn and --context each name a database: give one of them")
        # The settings come as one unit, never mixed: a flag's DSN, a named context, the
        # environment's DSN or the default context, whichever comes first. A context's
        # schema, system or read-only flag never follows qctl to another database.
        explicit = None if dsn else context or env.get("QCTL_CONTEXT") or None
        # --dsn settles where to connect: a broken config file must not stop it.
        try:
            data = load_config_file(path)
        except ConfigFileError:
            if dsn:
                data = {}
            else:
                raise
        named = _context_entry(data, explicit, path) if explicit else {}
        default_name = data.get("default_context")
        from qctl import systems

        env_dsn = env.get("QCTL_DSN") or systems.dsn_from(env)
        if dsn or explicit or env_dsn or not isinstance(default_name, str):
            default_name = None
        default = _context_entry(data, default_name, path) if default_name else {}
        resolved_dsn = dsn or named.get("dsn") or env_dsn or default.get("dsn")
        flags = {"statement_timeout": statement_timeout, "lock_timeout": lock_timeout}
        limits: dict[str, timedelta | None] = {}
        for key in TIMEOUTS:
            env_name = f"QCTL_{key.upper()}"
            if flags[key] is not None:
                limits[key] = timeout_setting(flags[key], f"--{key.replace('_', '-')}")
            elif key in named:
                limits[key] = named[key]
            elif env.get(env_name):
                limits[key] = timeout_setting(env[env_name], env_name)
            elif key in default:
                limits[key] = default[key]
        given = tuple(limits)
        for key in TIMEOUTS:
            if key not in limits and _dsn_sets(resolved_dsn or "", key):
                limits[key] = None  # the DSN's options or PGOPTIONS hold it
        return cls(
            dsn=resolved_dsn or None,
            schema=schema
            or named.get("schema")
            or env.get("QCTL_SCHEMA")
            or default.get("schema")
            or "",
            context_name=explicit or default_name or None,
            read_only=bool(
                read_only
                or env_flag(env, "QCTL_READ_ONLY")
                or (named or default).get("read_only", False)
            ),
            no_color=no_color or bool(env.get("NO_COLOR")),
            wide=wide,
            dsn_flag=bool(dsn),
            system_name=system
            or named.get("system")
            or env.get("QCTL_SYSTEM")
            or default.get("system")
            or "",
            audit=_audit_keeper(env, named or default),
            statement_timeout=limits.get("statement_timeout", DEFAULT_STATEMENT_TIMEOUT),
            lock_timeout=limits.get("lock_timeout", DEFAULT_LOCK_TIMEOUT),
            _timeouts_given=given,
        )

    def system(self) -> System:
        """The system this context's database holds (named, else detected once)."""
        if self._system is None:
            from qctl import systems

            if self.system_name:
                self._system = systems.get(self.system_name)
            elif self.is_postgres:
                # Detected on a connection of this session's terms, which a system's
                # opener may take over: one connection for a one-shot command.
                from qctl_kit.postgres.connect import open_connection

                try:
                    session = self.session()
                except InvalidInput:  # a bad --schema: the opener says so
                    self._system = systems.detect(self.dsn, self.schema)
                    return self._system
                conn = open_connection(self.dsn or "", session)
                try:
                    self._system = systems.detect(self.dsn, self.schema, conn)
                except BaseException:
                    conn.close()
                    raise
                if self._system.takes_detection:
                    self._detected_on = conn
                else:
                    conn.close()
            else:
                self._system = systems.detect(self.dsn, self.schema)
        return self._system

    @property
    def is_postgres(self) -> bool:
        from qctl_kit.dsn import is_postgres

        return bool(self.dsn) and is_postgres(self.dsn or "")

    def describe(self) -> str:
        """Where this context points, safe to print (passwords redacted)."""
        from qctl_kit.dsn import default_database_path, redact

        where = redact(self.dsn) if self.dsn else f"{default_database_path()} (embedded default)"
        if self.schema and self.is_postgres:
            where += f" schema={self.schema}"
        return where + (" [read-only]" if self.read_only else "")

    def require_writable(self, action: str) -> None:
        """Refuse a write before anything reaches the database; else start its entry
        of the audit trail (``qctl.core.audit``: the root command appends it with the
        exit status): its verb the command's path, its selection the options and
        arguments the operator gave."""
        if self.read_only:
            raise ReadOnly(f"{action}: refused, qctl is in read-only mode")
        self.writes = True
        from typer._click.core import ParameterSource
        from typer._click.globals import get_current_context

        from qctl.core import audit

        ctx = get_current_context(silent=True)
        given, verb = {}, action
        if ctx is not None:
            verb = " ".join(ctx.command_path.split()[1:]) or action  # as typed, less "qctl"
            given = {
                # an option by its flag (--kind), an argument by its name
                (p.opts[0] if p.param_type_name == "option" else p.name): ctx.params[p.name]
                for p in ctx.command.params
                if p.name in ctx.params
                and p.name not in AUDIT_UNSELECTING
                and ctx.get_parameter_source(p.name) not in (ParameterSource.DEFAULT, None)
            }
        audit.begin(verb, self.audit_where(), given)

    def audit_where(
        self, dsn: str | None = None, system: str = "", schema: str | None = None
    ) -> dict[str, Any]:
        """The database part of an audit entry: no password, the schema in effect
        (PostgreSQL's), and the role the DSN connects as (libpq's default: ``PGUSER``,
        else the OS user), read from the DSN without asking the server. A demo names
        its own database (``dsn``, ``system``, ``schema``) instead of the context's."""
        from qctl.core import audit
        from qctl_kit.dsn import default_database_path, is_postgres, postgres_params, redact

        dsn = dsn or self.dsn
        role = None
        if dsn and is_postgres(dsn):
            with contextlib.suppress(InvalidInput):
                role = postgres_params(dsn).get("user")
            role = role or os.environ.get("PGUSER") or audit.os_user()
        system = system or (self._system.name if self._system else self.system_name)
        shown = redact(dsn) if dsn else str(default_database_path())
        if schema is None:
            schema = self.schema or (self._system.default_schema if self._system else None) or ""
        return audit.where(system, self.context_name, shown, schema if role else "", role)

    def demo_where(self, dsn: str, system: str, schema: str | None = None) -> dict[str, Any]:
        """``audit_where`` of the database a demo runs on (``dsn``, ``system``,
        ``schema``), which its dashboard's actions name; ``qctl demo``'s own entry, begun
        on the context's database before the demo chose its own, is re-targeted there."""
        from qctl.core import audit

        where = self.audit_where(dsn, system, schema)
        audit.retarget(where)
        return where

    def audit_table(self) -> Any:
        """The audit table of this invocation's database (``qctl.core.audit_table``), on
        connections of its own: PostgreSQL's with this session's terms; an SQLite file
        opened as it is, never created."""
        from qctl.core.audit_table import AuditTable
        from qctl_kit.dsn import default_database_path, redact, sqlite_path

        if self.is_postgres:
            from qctl_kit.postgres.connect import open_connection

            dsn = self.dsn or ""
            return AuditTable(lambda: open_connection(dsn, self.session()), True, redact(dsn))
        import sqlite3
        from urllib.parse import quote

        path = sqlite_path(self.dsn) if self.dsn else str(default_database_path())
        mode = "ro" if self.read_only else "rw"
        uri = f"file:{quote(path)}?mode={mode}"
        limit = (self.lock_timeout or timedelta(seconds=5)).total_seconds()

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(uri, uri=True, timeout=limit, isolation_level=None)

        return AuditTable(connect, False, path)

    def session(self, on_lock_wait: Callable[[Blocker], None] | None = None) -> Session:
        """The terms of a session opened now: schema, read-only, timeouts and the
        session watch's (``on_lock_wait``: who hears of a statement waiting behind
        another session's lock, the dashboard's status bar; by default a line on stderr
        when it is a terminal)."""
        from qctl_kit.config import Session

        return Session(
            schema=self.schema or "",
            read_only=self.read_only,
            statement_timeout=self.session_statement_timeout,
            lock_timeout=self.session_lock_timeout,
            on_lock_wait=on_lock_wait or self.on_lock_wait,
            unanswered_after=self.session_unanswered_after,
        )

    def detected(self) -> Any:
        """The connection detection read on (None: there is none, or it was taken), for
        a system's opener to take over; its settings are this session's."""
        conn, self._detected_on = self._detected_on, None
        return conn

    @property
    def session_unanswered_after(self) -> timedelta | None:
        """How long a statement of the sessions opened now may go unanswered before qctl
        gives its connection up (``ANSWER_GRACE`` past the statement timeout)."""
        limit = self.session_statement_timeout
        return limit + ANSWER_GRACE if limit else None

    def unlimit(self, *names: str) -> None:
        """Turn the default limits ``names`` off for the sessions opened from now on, for
        a command that rightly waits long: building an index reads the whole table, and
        building one concurrently waits for every older transaction to end. A limit the
        operator asked for stays."""
        self.unlimited = tuple(n for n in names if n not in self._timeouts_given)

    @property
    def on_lock_wait(self) -> Callable[[Blocker], None] | None:
        """On a terminal, a line on stderr for each session a statement waits behind
        for a second; elsewhere nothing (the lock timeout's error says enough)."""
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        return lock_wait_note if tty else None

    @property
    def session_statement_timeout(self) -> timedelta | None:
        """``statement_timeout`` of the sessions opened now."""
        unlimited = "statement_timeout" in self.unlimited
        return timedelta(0) if unlimited else self.statement_timeout

    @property
    def session_lock_timeout(self) -> timedelta | None:
        """``lock_timeout`` of the sessions opened now."""
        return timedelta(0) if "lock_timeout" in self.unlimited else self.lock_timeout

    def database(
        self,
        kind: Callable[..., D],
        on_lock_wait: Callable[[Blocker], None] | None = None,
        **options: Any,
    ) -> D:
        """The database of this invocation for a system qctl reads with its own SQL:
        ``kind`` (a ``qctl.core.sqldb.SqlDatabase``) opened on the DSN, the schema and
        this session's terms (read-only, timeouts, the session watch) on first use, then
        reused; closed with the context. ``on_lock_wait`` as ``session``'s;
        ``options``: ``kind``'s own (they take part in the reuse)."""
        key = (kind, on_lock_wait, tuple(sorted(options.items())))
        if key not in self._databases:
            if not self.dsn:
                raise InvalidInput(f"{self.system().label} databases need --dsn")
            self._databases[key] = kind(
                self.dsn,
                self.schema,
                read_only=self.read_only,
                statement_timeout=self.session_statement_timeout,
                lock_timeout=self.session_lock_timeout,
                on_lock_wait=on_lock_wait or self.on_lock_wait,
                unanswered_after=self.session_unanswered_after,
                **options,
            )
        database: D = self._databases[key]
        return database

    def handle(
        self, pooled: bool = False, on_lock_wait: Callable[[Blocker], None] | None = None
    ) -> Any:
        """What a system's reads and actions take for this context's database, from its
        ``System.database`` opener (``pooled``: for the dashboard's threads)."""
        from qctl import systems

        opener = systems.load(self.system().database)
        return opener.open(self, pooled=pooled, on_lock_wait=on_lock_wait)

    def close(self) -> None:
        if self._detected_on is not None:
            self._detected_on.close()
            self._detected_on = None
        databases, self._databases = self._databases, {}
        for database in databases.values():
            database.close()
        opened, self.opened = self.opened, []
        for each in opened:
            each.close()
