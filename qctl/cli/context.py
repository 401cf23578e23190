"""The connection context of one ``qctl`` invocation, put in ``ctx.obj`` by the root
callback and shared by the command line and the dashboard.

Where the settings come from, first match wins:

- DSN: ``--dsn``; the named context's ``dsn`` (``--context NAME`` or ``QCTL_CONTEXT``);
  ``QCTL_DSN``; the config file's ``default_context``; else the embedded default database.
- schema: ``--schema``; the named context; ``QCTL_SCHEMA``; the default context.
- read-only: ``--read-only``, ``QCTL_READ_ONLY=1`` (``1/true/yes/on``; ``0/false/no/off``
  or empty leave it off, anything else is a usage error) or ``read_only = true`` in the
  context in effect (any of them turns it on; nothing turns it off).
- system: ``--system``; the named context; ``QCTL_SYSTEM``; the default context; else
  detected from the database's tables (``qctl.systems.detect``).

With ``--dsn`` and no ``--context``, a config file that cannot be read is ignored.

The config file is ``$XDG_CONFIG_HOME/qctl/config.toml`` (``~/.config/qctl/config.toml``)::

    default_context = "local"

    [contexts.prod]
    dsn = "postgresql://ops@db.internal/app"
    schema = "azync"
    read_only = true

    [contexts.payments]
    dsn = "postgresql://ops@db.internal/payments"
    system = "dbos"
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qctl_store.errors import InvalidInput, ReadOnly

if TYPE_CHECKING:
    from qctl.systems import System
    from qctl_store.postgres import PostgresStore
    from qctl_store.sqlite import SqliteStore

    AnyStore = PostgresStore | SqliteStore


class ConfigFileError(InvalidInput):
    """The config file is unreadable or names an unknown context (a usage error)."""


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(base) / "qctl" / "config.toml"


def load_config_file(path: Path | None = None) -> dict[str, Any]:
    """The parsed config file, or ``{}`` when there is none. A file that others may
    write is refused: it names the databases qctl acts on, and their passwords."""
    path = path or config_path()
    if not path.exists():
        return {}
    import tomllib

    try:
        with path.open("rb") as fh:
            if os.fstat(fh.fileno()).st_mode & 0o002:
                raise ConfigFileError(
                    f"refusing {path}: it is writable by others (run `chmod o-w {path}`)"
                )
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read {path}: {exc}") from None


def save_config_file(data: Mapping[str, Any], path: Path | None = None) -> None:
    """Write ``data`` as the config file: to a private temporary file in the same
    directory, read back, then renamed over the old one, so a reader never sees half a
    file and a crash leaves the old one. Mode 0600 (it holds DSNs), directory 0700 when
    created. Comments of the old file are not kept."""
    import tempfile
    import tomllib

    path = path or config_path()
    text = to_toml(data)
    if tomllib.loads(text) != dict(data):  # the writer below covers what tomllib reads
        raise ConfigFileError(f"cannot write {path}: a value has no TOML form here")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=path.parent)  # 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
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


def to_toml(data: Mapping[str, Any]) -> str:
    """TOML for the config file's shape (scalars, lists and nested tables)."""
    blocks = _toml_blocks(data, "")
    return "\n\n".join("\n".join(b) for b in blocks) + "\n" if blocks else ""


def _toml_blocks(data: Mapping[str, Any], name: str) -> list[list[str]]:
    scalars = [
        f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict)
    ]
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    blocks = []
    if name and (scalars or not tables):  # a table of its own keys, or an empty one
        blocks.append([f"[{name}]", *scalars])
    elif scalars:
        blocks.append(scalars)
    for key, table in tables.items():
        blocks += _toml_blocks(table, f"{name}.{_toml_key(key)}" if name else _toml_key(key))
    return blocks


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
    return entry


@dataclass
class CliContext:
    """Resolved connection settings; ``open_store`` opens (and caches) the store."""

    dsn: str | None = None
    schema: str = ""
    context_name: str | None = None
    read_only: bool = False
    no_color: bool = False
    system_name: str = ""
    """``--system`` or the context's ``system``; empty: detect it."""
    _stores: list[AnyStore] = field(default_factory=list, repr=False)
    _system: System | None = field(default=None, repr=False)

    @classmethod
    def resolve(
        cls,
        dsn: str | None = None,
        schema: str | None = None,
        context: str | None = None,
        read_only: bool = False,
        no_color: bool = False,
        system: str | None = None,
        environ: dict[str, str] | None = None,
        config_file: Path | None = None,
    ) -> CliContext:
        """Combine flags, environment and the config file (see the module doc)."""
        env = os.environ if environ is None else environ
        path = config_file or config_path()
        explicit = context or env.get("QCTL_CONTEXT") or None
        # --dsn settles where to connect: a broken config file must not stop it.
        try:
            data = load_config_file(path)
        except ConfigFileError:
            if dsn and not explicit:
                data = {}
            else:
                raise
        named = _context_entry(data, explicit, path) if explicit else {}
        default_name = data.get("default_context") if not explicit else None
        default = (
            _context_entry(data, default_name, path)
            if isinstance(default_name, str) and default_name
            else {}
        )
        return cls(
            dsn=dsn or named.get("dsn") or env.get("QCTL_DSN") or default.get("dsn") or None,
            schema=schema
            or named.get("schema")
            or env.get("QCTL_SCHEMA")
            or default.get("schema")
            or "",
            context_name=explicit or (default_name if default else None),
            read_only=bool(
                read_only
                or env_flag(env, "QCTL_READ_ONLY")
                or (named or default).get("read_only", False)
            ),
            no_color=no_color or bool(env.get("NO_COLOR")),
            system_name=system
            or named.get("system")
            or env.get("QCTL_SYSTEM")
            or default.get("system")
            or "",
        )

    def system(self) -> System:
        """The system this context's database holds (named, else detected once)."""
        if self._system is None:
            from qctl import systems

            self._system = (
                systems.get(self.system_name)
                if self.system_name
                else systems.detect(self.dsn, self.schema)
            )
        return self._system

    @property
    def is_postgres(self) -> bool:
        from qctl_store.dsn import is_postgres

        return bool(self.dsn) and is_postgres(self.dsn or "")

    def describe(self) -> str:
        """Where this context points, safe to print (passwords redacted)."""
        from qctl_store.dsn import default_database_path, redact

        where = redact(self.dsn) if self.dsn else f"{default_database_path()} (embedded default)"
        if self.schema and self.is_postgres:
            where += f" schema={self.schema}"
        return where + (" [read-only]" if self.read_only else "")

    def require_writable(self, action: str) -> None:
        """Refuse a write before anything reaches the database."""
        if self.read_only:
            raise ReadOnly(f"{action}: refused, qctl is in read-only mode")

    def open_store(self, pooled: bool = False, create: bool = False) -> AnyStore:
        """Open the store this context points at (the one-shot CLI uses ``pooled=False``;
        the dashboard passes ``pooled=True``). Stores are closed by ``close()``.

        With no DSN the embedded default database is created and migrated on first use
        (unless read-only). PostgreSQL is never migrated implicitly: a call on an
        unmigrated database raises ``SchemaNotMigrated`` ("run `qctl db migrate`"). A
        SQLite file that does not exist is created only with ``create`` (``db migrate``).
        """
        from qctl_store import Config, open_store

        scheme, sep, _ = (self.dsn or "").partition("://")
        if sep and scheme not in ("postgresql", "postgres", "sqlite"):
            # Anything else would be taken for a SQLite file path.
            raise InvalidInput(
                f"unsupported DSN scheme {scheme!r}: use postgresql://... or sqlite:///path"
            )
        config = Config(
            schema=self.schema, read_only=self.read_only, pooled=pooled, create_database=create
        )
        store = open_store(self.dsn, config)
        self._stores.append(store)
        return store

    def store(self) -> AnyStore:
        """The store of this invocation: opened unpooled on first use, then reused."""
        return self._stores[0] if self._stores else self.open_store(pooled=False)

    def close(self) -> None:
        stores, self._stores = self._stores, []
        for store in stores:
            store.close()
