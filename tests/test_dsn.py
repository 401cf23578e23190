"""DSN helpers: which backend a DSN opens, the SQLite path it names, and redaction."""

from __future__ import annotations

import pytest

from qctl_kit.dsn import (
    connect_timeout,
    is_postgres,
    postgres_params,
    redact,
    session_options,
    sqlite_path,
)
from qctl_kit.errors import InvalidInput


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


@pytest.mark.parametrize(
    ("dsn", "shown", "secret"),
    [
        ("postgresql://ops:pa/ss@db/app", "postgresql://ops:***@db/app", "pa/ss"),
        ("postgresql://ops:p@ss@db:5432/app", "postgresql://ops:***@db:5432/app", "p@ss"),
        ("postgresql://ops:50%off@db/app", "postgresql://ops:***@db/app", "50%off"),
        (
            "postgresql://ops:a:b/c@d@db/app?sslmode=require",
            "postgresql://ops:***@db/app?sslmode=require",
            "a:b/c@d",
        ),
        (
            "postgres://ops:x@y@db/app?application_name=a@b",
            "postgres://ops:***@db/app?application_name=a@b",
            "x@y",
        ),
        ("host=db password='it\\'s hidden' user=ops", "host=db password=*** user=ops", "hidden"),
    ],
)
def test_redact_hides_any_password(dsn: str, shown: str, secret: str) -> None:
    assert redact(dsn) == shown
    assert secret not in redact(dsn)


def test_redact_finds_dsns_inside_text() -> None:
    text = 'File "x.py", line 1\n    connect("postgresql://ops:pa/ss@db/app")\nOperationalError'
    assert "pa/ss" not in redact(text) and "postgresql://ops:***@db/app" in redact(text)


def test_session_options_keep_the_dsns_own_first() -> None:
    assert session_options("", {"search_path": "s"}) == "-c search_path=s"
    assert (
        session_options(" -c statement_timeout=5s ", {"search_path": "s"})
        == "-c statement_timeout=5s -c search_path=s"
    )
    assert session_options("-c work_mem=4MB", {}) == "-c work_mem=4MB"


def test_connect_timeout_default_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    assert connect_timeout({}) == {"connect_timeout": 5}
    assert connect_timeout({"connect_timeout": "2"}) == {}
    with pytest.raises(InvalidInput, match="connect_timeout 'soon'"):
        connect_timeout({"connect_timeout": "soon"})
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "9")
    assert connect_timeout({}) == {}


def test_postgres_params_never_quote_a_password() -> None:
    with pytest.raises(InvalidInput) as info:
        postgres_params("host=db password=s3cret port")
    assert "s3cret" not in str(info.value) and 'missing "=" after "port"' in str(info.value)
    with pytest.raises(InvalidInput, match="percent-encode") as info:
        postgres_params("postgresql://ops:pa/ss@db/app")
    assert "pa/ss" not in str(info.value)
    assert (
        postgres_params("postgresql://ops:pa%2Fss@db/app?options=-c%20x%3D1")["options"] == "-c x=1"
    )
