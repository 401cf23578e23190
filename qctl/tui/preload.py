"""Work started before the dashboard exists (no Textual here).

``qctl top`` checks the database, opens the pool and reads the overview in threads while
the main thread imports Textual and starts the app: their round trips overlap the imports,
and the first frame shows the overview at once instead of painting an empty table first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Preload(Generic[T]):
    """``fn()`` running in a daemon thread from construction on."""

    def __init__(self, fn: Callable[[], T], name: str = "qctl-preload") -> None:
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, args=(fn,), name=name, daemon=True).start()

    def _run(self, fn: Callable[[], T]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # re-raised by result(), in the caller's thread
            self._error = exc
        finally:
            self._done.set()

    def ready(self) -> bool:
        """Finished, and without an error: ``result()`` returns at once."""
        return self._done.is_set() and self._error is None

    def join(self) -> None:
        """Wait for ``fn`` to end, whatever it returned or raised."""
        self._done.wait()

    def result(self) -> T:
        """Wait for ``fn`` and return its value, or raise what it raised."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
