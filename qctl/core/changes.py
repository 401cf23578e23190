"""The change feed every system's database object offers the dashboard: neutral hints of
what kind of row changed, whatever the system's own notification looks like.

A hint is best-effort and carries no row: it only says that a refresh is worth it now.
``RESET`` says hints may have been lost (the stream opened, a connection came back, a
buffer overflowed): re-read everything. ``changes()`` returns None when the system or its
backend cannot push (the dashboard then polls).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Hint:
    kind: str
    """What kind of row changed: "jobs", "queues", "workflows", "events", ... or "reset"."""
    ids: tuple[str, ...] = ()
    """Which rows, when the notice names them."""
    queue: str = ""
    """The queue the rows are in, when the notice names it."""
    bulk: bool = False
    """Rows of the kind changed, which ones unknown."""


RESET = Hint("reset", bulk=True)


class Hints(Protocol):
    """An open stream of hints (``qctl_kit.streams.Subscription[Hint]`` is one)."""

    @property
    def closed(self) -> bool: ...

    def get(self, timeout: float | None = None) -> Hint | None:
        """The next hint, or None after ``timeout`` seconds or once closed."""

    def close(self) -> None: ...


class ChangeFeed(Protocol):
    @property
    def partial(self) -> bool:
        """Whether some changes send no hint (a status change, say): they are polled."""

    def changes(self) -> Hints | None:
        """A new stream of hints, opening with ``RESET``; None: poll-only."""
