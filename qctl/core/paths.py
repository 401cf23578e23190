"""Where qctl keeps its own files, for every system's demo."""

from __future__ import annotations

import os
from pathlib import Path


def demo_database_path() -> Path:
    """The demo's own embedded database: ``$XDG_DATA_HOME/qctl/demo.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "qctl" / "demo.db"


def demo_cache(name: str) -> Path:
    """What a demo builds once and keeps (a system's own runtime, its workers):
    ``$XDG_CACHE_HOME/qctl/<name>``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "qctl" / name
