"""DSN helpers: which backend a DSN opens, the SQLite path it names, and redaction."""

from __future__ import annotations

import pytest

from qctl_store.dsn import is_postgres, redact, sqlite_path


@pytest.mark.parametrize(
    ("dsn", "path"),
    [
        ("sqlite:///srv/app/queue.db", "/srv/app/queue.db"),
        ("sqlite:////srv/app/queue.db", "/srv/app/queue.db"),
        ("sqlite://rel/queue.db", "rel/queue.db"),
        ("sqlite::memory:", ":memory:"),
        ("/srv/app/queue.db", "/srv/app/queue.db"),
        ("queue.db", "queue.db"),
    ],
)
def test_sqlite_path(dsn: str, path: str) -> None:
    assert not is_postgres(dsn)
    assert sqlite_path(dsn) == path


@pytest.mark.parametrize(
    "dsn", ["postgresql://u@h/db", "postgres://u@h/db", "host=h dbname=db user=u"]
)
def test_postgres_dsns(dsn: str) -> None:
    assert is_postgres(dsn)


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://ops:s3cret@db:5432/app", "postgresql://ops:***@db:5432/app"),
        ("host=db password=s3cret user=ops", "host=db password=*** user=ops"),
        ("host=db password='s 3cret' user=ops", "host=db password=*** user=ops"),
        ("postgresql://ops@db/app", "postgresql://ops@db/app"),
    ],
)
def test_redact_hides_passwords(dsn: str, shown: str) -> None:
    assert redact(dsn) == shown
    assert "s3cret" not in redact(dsn)
