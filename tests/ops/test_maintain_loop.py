"""The maintenance loop rides out a statement that timed out behind another session's
lock: one log line, the same store and leadership, and the next pass runs."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest

from qctl.systems.azync.ops import maintain
from qctl_kit import errors


class Lease:
    def valid(self) -> bool:
        return True

    def release(self) -> None:
        pass


class LockedOnce:
    """A store whose first pass times out on a lock, as PostgreSQL's lock_timeout ends it."""

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.calls = 0
        self.closed = False

    def acquire_leadership_lease(self, name: str) -> tuple[Lease, bool]:
        return Lease(), True

    def list_kinds(self, source: Any) -> list[str]:
        self.calls += 1
        if self.calls == 1:
            raise errors.Timeout("lock_timeout", timedelta(seconds=5))
        self.stop.set()
        return []

    def promote_unblocked(self) -> int:
        return 0

    def deliver_buffered_signals(self) -> int:
        return 0

    def complete_due_sleeps(self) -> int:
        return 0

    def apply_failure_policy(self) -> list[Any]:
        return []

    def complete_dags(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


def test_a_timed_out_pass_is_logged_and_the_next_pass_runs() -> None:
    stop = threading.Event()
    store = LockedOnce(stop)
    opened: list[LockedOnce] = []
    lines: list[str] = []

    def open_store() -> Any:
        opened.append(store)
        return store

    passes: list[Any] = []
    maintain.run(open_store, [maintain.Source.QUEUE], 5, 0.01, stop, lines.append, passes.append)
    assert lines == [
        "maintain: timed out after 5s waiting for a lock held by another session "
        "(lock_timeout); next pass in 0.01s"
    ]
    assert len(opened) == 1 and len(passes) == 1 and store.calls == 2


def test_once_reports_the_timeout() -> None:
    stop = threading.Event()
    with pytest.raises(errors.Timeout):
        maintain.run(
            lambda: LockedOnce(stop),
            [maintain.Source.QUEUE],
            5,
            0.01,
            stop,
            print,
            print,
            once=True,
        )
