"""Opening SQLite files for any system: read-only where this process cannot write, and
sqlite3's failures to read or write a file as the toolkit's errors."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse

from qctl_kit import errors

READ_ONLY_FS = "its filesystem is read-only"


def unwritable(path: str) -> str:
    """Why this process cannot write the SQLite database ``path`` ("" when it can): it is
    on a read-only filesystem, or this user may not write the file or its directory
    (where SQLite writes its journal)."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return READ_ONLY_FS
    except OSError:
        return ""  # missing: whoever creates it finds out
    if not os.access(path, os.W_OK) or not os.access(
        os.path.dirname(os.path.abspath(path)), os.W_OK
    ):
        return "this user may not write it or its directory"
    return ""


def read_only_uri(path: str, why: str) -> str:
    """The URI that opens ``path`` read-only (``mode=ro``: never created, never written).
    On a read-only filesystem also ``immutable``: nobody can change the file there, and
    SQLite then takes no lock and needs no ``-shm`` file, which it could not create (a
    WAL database is unreadable there otherwise)."""
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro"
    return uri + "&immutable=1" if why == READ_ONLY_FS else uri


def full_or_unavailable(exc: sqlite3.Error, where: str) -> errors.StoreError:
    """SQLITE_FULL (the disk, or ``PRAGMA max_page_count``) as ``StorageFull``; any other
    failure to read or write the file as ``Unavailable``."""
    if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
        return errors.StorageFull(
            f"{where}: the database is full ({exc}); the statement was rolled back: free "
            "space on its disk, then run it again"
        )
    return errors.Unavailable(f"{where}: {exc}")
