"""Every thread's connection, writable or read-only, has the bounded page cache."""

from __future__ import annotations

import threading
from pathlib import Path

from qctl_store.config import Config
from qctl_store.sqlite import SqliteStore
from qctl_store.sqlite.base import CACHE_KIB


def _cache_size(store: SqliteStore) -> int:
    with store.read() as t:
        row = t.one("PRAGMA cache_size")
    assert row is not None
    return int(row[0])


def test_each_thread_connection_bounds_its_page_cache(tmp_path: Path) -> None:
    path = str(tmp_path / "q.db")
    with SqliteStore(path) as store:
        store.migrate()
        seen: list[int] = []
        other = threading.Thread(target=lambda: seen.append(_cache_size(store)))
        other.start()
        other.join()
        assert [_cache_size(store), *seen] == [-CACHE_KIB, -CACHE_KIB]
    with SqliteStore(path, Config(read_only=True)) as store:
        assert _cache_size(store) == -CACHE_KIB
