"""Value types and bounds every system's reads and the shells share."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from qctl_kit.errors import InvalidInput

MAX_DURATION = timedelta(days=366 * 1000)
"""Longer durations are refused: added to now they would leave the instants both
backends (and Python's datetime) can hold."""
_ZERO = timedelta(0)


def duration(value: timedelta, what: str) -> timedelta:
    if not isinstance(value, timedelta):
        raise InvalidInput(f"{what} must be a timedelta, not {type(value).__name__}")
    if not _ZERO <= value <= MAX_DURATION:  # one comparison chain: checked once per job
        if value < _ZERO:
            raise InvalidInput(f"{what} must not be negative")
        raise InvalidInput(f"{what} is out of range (at most {MAX_DURATION.days} days)")
    return value


@dataclass
class PageCursor:
    """Keyset position for deep listings: the last row of the previous page.

    ``sort_key`` is the value of the listing's ordering column on that row (None where
    the row has none: azync's jobs, whose column depends on the state), ``id`` its id.
    For azync's ``search_jobs`` see ``AdminStore.job_cursor``; for the newest-first
    listings of DAG runs, workflow executions and ledger events it is the row's
    ``created_at`` (events: ``occurred_at``) and id.
    """

    sort_key: datetime | None
    id: uuid.UUID
