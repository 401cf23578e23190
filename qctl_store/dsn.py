"""DSN parsing and redaction shared by the store and the console."""

from __future__ import annotations

import os
import re
from pathlib import Path

_PASSWORD_IN_URL = re.compile(r"(://[^:/@]*):[^@/]*@")
_PASSWORD_KV = re.compile(r"(password\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)


def redact(dsn: str) -> str:
    """The DSN with any password replaced by ``***``; safe to print or log."""
    dsn = _PASSWORD_IN_URL.sub(r"\1:***@", dsn)
    return _PASSWORD_KV.sub(r"\1***", dsn)


def is_postgres(dsn: str) -> bool:
    return dsn.startswith(("postgresql://", "postgres://")) or (
        "=" in dsn and not dsn.startswith("sqlite:")
    )


def sqlite_path(dsn: str) -> str:
    """``sqlite:///abs/path`` (``sqlite:////abs/path`` too), ``sqlite://rel/path``,
    ``sqlite::memory:`` or a plain file path."""
    if dsn.startswith("sqlite://"):
        path = dsn[len("sqlite://") :]
        return "/" + path.lstrip("/") if path.startswith("/") else path
    if dsn.startswith("sqlite:"):
        return dsn[len("sqlite:") :]
    return dsn


def default_database_path() -> Path:
    """The embedded default database: ``$XDG_DATA_HOME/qctl/qctl.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "qctl" / "qctl.db"
