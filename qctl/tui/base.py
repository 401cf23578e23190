"""What the dashboard's app, panes and screens share: the app's interface, the loading
base, read-only guarding, the status screen. Screens import this module, never
``app.py`` (which imports the screens)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from textual.app import App, ComposeResult
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from qctl.sanitize import sanitize
from qctl.tui.widgets import StatusBar

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from qctl.tui.preload import Preload
    from qctl_store.contract import ConsoleStore

T = TypeVar("T")
R = TypeVar("R")

DESTRUCTIVE = {
    "job_retry",
    "job_run_now",
    "job_pause",
    "job_resume",
    "job_archive",
    "job_delete",
    "dag_retry",
    "dag_compensate",
    "dag_cancel",
    "dag_pause",
    "dag_signal",
    "event_replay",
    "wf_resolve",
    "wf_cancel",
}
"""Actions that write; hidden and refused with ``--read-only``."""


class Dashboard(App[None]):
    """The app as panes and screens see it (``QctlTop`` implements it)."""

    store: ConsoleStore
    read_only: bool
    clock: Callable[[], datetime]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notice is plain text (no Rich markup) with database text in it escaped:
        refusals quote kinds, task keys and errors."""
        super().notify(
            sanitize(message), title=title, severity=severity, timeout=timeout, markup=False
        )

    def take_preload(self, loader: Loader[Any]) -> Preload[Any] | None:
        """The read of ``loader`` started before the app (``qctl.tui.preload``), once."""
        return None

    def connection_ok(self) -> None:
        raise NotImplementedError

    def load_took(self, seconds: float) -> None:
        """A loader's fetch and show took ``seconds`` (paces the live refresh)."""

    def connection_failed(self, error: Exception) -> None:
        raise NotImplementedError

    def render_status(self) -> None:
        raise NotImplementedError

    def act(
        self,
        question: str | Callable[[R], str],
        fn: Callable[[ConsoleStore, bool], R],
        done: Callable[[R], str],
    ) -> None:
        """An operator action through the operations layer: ``fn(store, dry_run)``."""
        raise NotImplementedError


class Dashboarded(MessagePump):
    """A widget or screen of the dashboard: ``top`` is the app, typed."""

    @property
    def top(self) -> Dashboard:
        return cast(Dashboard, self.app)


class Guarded:
    """Hides write actions from the footer (and refuses them) in read-only mode."""

    app: Any

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in DESTRUCTIVE and self.app.read_only)


def footer() -> Footer:
    """Compact and without the palette hint, so the longest key list (Jobs) fits 120 columns."""
    return Footer(compact=True, show_command_palette=False)


@dataclass
class Loaded(Message, Generic[T]):
    """A worker thread's result for ``loader``, delivered on the event loop."""

    loader: Loader[Any]
    data: T


@dataclass
class LoadFailed(Message):
    loader: Loader[Any]
    error: Exception


class Loader(Dashboarded, Widget, Generic[T]):
    """A widget whose content comes from store calls run in a worker thread.

    ``fetch`` runs in the thread and must only touch the store; ``show`` runs on the
    event loop with its result. At most one fetch is in flight per widget: a reload
    requested meanwhile runs once the current one ends, so a burst of refreshes never
    queues a burst of queries.
    """

    _busy = False
    _again = False
    busy_since: float | None = None
    """``time.monotonic()`` when the fetch in flight started; None when idle."""

    def fetch(self, store: ConsoleStore) -> T:
        raise NotImplementedError

    def show(self, data: T) -> None:
        raise NotImplementedError

    def reload(self) -> None:
        if self._busy:
            self._again = True
            return
        first = self.top.take_preload(self)
        if first is not None and first.ready():
            # Read while the app started: shown in this frame, with no thread round trip.
            self.top.connection_ok()
            self.show(first.result())
            return
        self._busy = True
        self.busy_since = time.monotonic()
        store = self.top.store

        def work() -> None:
            try:
                data = first.result() if first is not None else self.fetch(store)
            except Exception as exc:
                self.post_message(LoadFailed(self, exc))
                return
            self.post_message(Loaded(self, data))

        self.run_worker(work, thread=True, group=f"load-{id(self)}", exit_on_error=False)

    def _done(self) -> None:
        self._busy = False
        self.busy_since = None
        if self._again:
            self._again = False
            self.reload()

    def on_loaded(self, message: Loaded[T]) -> None:
        if message.loader is not self:
            return
        message.stop()
        started = self.busy_since
        self._done()
        self.top.connection_ok()
        self.show(message.data)
        if started is not None:
            self.top.load_took(time.monotonic() - started)

    def on_load_failed(self, message: LoadFailed) -> None:
        if message.loader is not self:
            return
        message.stop()
        self._done()
        self.top.connection_failed(message.error)


class TopScreen(Guarded, Dashboarded, Screen[None]):
    """A screen with the status bar; ``loaders`` are what a refresh reloads."""

    def compose_status(self) -> ComposeResult:
        yield StatusBar(id="status")

    def loaders(self) -> list[Loader[Any]]:
        return list(self.query(Loader))

    def on_screen_resume(self) -> None:
        self.top.render_status()
        for loader in self.loaders():
            loader.reload()
