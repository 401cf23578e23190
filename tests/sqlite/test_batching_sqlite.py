"""Maintenance batching on SQLite: the PostgreSQL module's tests (every bulk pass with
``maintenance_batch=2`` must loop past one batch and still handle all jobs), collected
here again over a SQLite store rather than copied."""

from __future__ import annotations

import pytest

from qctl_store.sqlite import SqliteStore
from tests.conftest import StoreFactory
from tests.postgres import test_batching as pg
from tests.postgres.test_batching import (  # noqa: F401  (collected by pytest)
    test_delete_all_processes_more_than_one_batch,
    test_promote_due_processes_more_than_one_batch,
    test_reap_expired_kills_past_one_batch_with_history,
    test_reap_expired_processes_more_than_one_batch,
    test_retry_all_dead_processes_more_than_one_batch,
    test_vacuum_completed_processes_more_than_one_batch,
    test_vacuum_dead_processes_more_than_one_batch,
)


@pytest.fixture(scope="module")
def backend() -> str:
    return "sqlite"


@pytest.fixture(scope="module")
def store(store_factory: StoreFactory) -> SqliteStore:
    s = store_factory(maintenance_batch=2)
    assert isinstance(s, SqliteStore)
    return s


# Collected last (pytest keeps definition order): it empties the queue source.
test_nuke_all_ignores_the_batch_size_and_spares_other_sources = (
    pg.test_nuke_all_ignores_the_batch_size_and_spares_other_sources
)
