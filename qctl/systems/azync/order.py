"""The order both front-ends list azync's jobs in (outside the operations layer: a plain
read such as ``qctl jobs list`` loads none of it)."""

from __future__ import annotations

from qctl_store.types import JobState


def newest_first(state: JobState | None) -> bool:
    """Whether both front-ends list ``state`` the other way round from azync's order
    (``orderForState``): dead jobs newest first, the ones an operator looks at."""
    return state == JobState.DEAD
