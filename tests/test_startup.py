"""``qctl.startup``: the collector paused for start-up comes back on, with what start-up
made frozen; a process that never paused it keeps its own."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from qctl import startup


@pytest.fixture
def restore_gc() -> Iterator[None]:
    yield
    gc.unfreeze()
    gc.enable()


def test_resume_without_pause_leaves_the_collector_alone(restore_gc: None) -> None:
    gc.disable()  # the test runner's own choice, say
    startup.resume()
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_resume_turns_the_paused_collector_back_on_once(restore_gc: None) -> None:
    startup.pause()
    assert not gc.isenabled()
    made = [{"n": i} for i in range(1000)]
    startup.resume()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(made)
    gc.unfreeze()
    startup.resume()  # a second resume (another dashboard's first frame) freezes nothing
    assert gc.get_freeze_count() == 0
