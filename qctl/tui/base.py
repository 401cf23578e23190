"""What the dashboard's app, panes and screens share: the app's interface, what a system
brings to it (``SystemScreens``), the loading base, read-only guarding, the status
screen. Screens import this module, never ``app.py`` (which imports the screens)."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer

from qctl.core.sanitize import sanitize
from qctl.tui.widgets import StatusBar, glossary

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from qctl.core.changes import ChangeFeed
    from qctl.core.verbs import Selection, Verb
    from qctl.tui.preload import Preload

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Tab:
    name: str
    """Its id (``#<name>`` tab, ``#<name>-pane`` pane, ``show_tab('<name>')``)."""
    title: str
    pane: str
    """``module:Class`` of its pane, imported when the tab is first shown."""


class SystemScreens:
    """What a system brings to the dashboard (``qctl.tui.app.QctlTop``, one shell for
    every system): its tabs, its help, which actions write, how ``:`` finds a record by
    id and which screen opens it, and where change hints come from. A system's dashboard
    is a package of panes and screens with one of these; the shell needs no edit."""

    label: str
    """The system's name as the help and the jump prompt say it."""
    tabs: tuple[Tab, ...]
    """Numbered 1, 2, ... in this order; the first is shown on start."""
    help: str
    writes: frozenset[str]
    """Actions that write: hidden from the footer and refused with ``--read-only``."""
    jump_prompt: tuple[str, str]
    """The ``:`` prompt's title and its field's label."""

    def pane_class(self, name: str) -> type[Loader[Any]]:
        tab = next(t for t in self.tabs if t.name == name)
        module, cls = tab.pane.split(":")
        pane: type[Loader[Any]] = getattr(importlib.import_module(module), cls)
        return pane

    def pane(self, name: str) -> Loader[Any]:
        return self.pane_class(name)(id=f"{name}-pane")

    def tab_named(self, word: str) -> Tab | None:
        """The tab ``word`` names for the ``:`` command line: its name or title, singular
        or plural (``:dag``, ``:jobs``), or the start of exactly one tab's."""
        word = word.lower()
        names = [(t, {t.name, t.title.lower()}) for t in self.tabs]
        for tab, said in names:
            if word in said or f"{word}s" in said:
                return tab
        started = [t for t, said in names if any(n.startswith(word) for n in said)]
        return started[0] if len(started) == 1 else None

    def tab_states(self, tab: Tab) -> tuple[str, ...]:
        """The states a tab's list can be narrowed to (``qctl.tui.panes.StatePicked``)."""
        return tuple(str(s) for s in getattr(self.pane_class(tab.name), "states", ()))

    def complete(self, text: str) -> str | None:
        """The ``:`` command line completed: the first word to a tab's name, the second
        to one of that tab's states; None when nothing (else) fits."""
        first, space, rest = text.partition(" ")
        if not space:
            names = [*(t.name for t in self.tabs), "audit"]
            found = [n for n in names if n.startswith(first.lower())]
            return found[0] if first and found and found[0] != first else None
        tab = self.tab_named(first)
        if tab is None or not rest or " " in rest:
            return None
        fits = [s for s in self.tab_states(tab) if s.lower().startswith(rest.lower())]
        return f"{first} {fits[0]}" if fits and fits[0] != rest else None

    def command_help(self) -> str:
        """The ``:`` command line's lines of the help, naming the tabs."""
        text = (
            ":SCREEN [a state | an id | words]: the command line (tab completes, esc leaves; "
            "an id alone jumps). Screens: "
            + ", ".join(t.name for t in self.tabs)
            + "; audit (also a): the audit trail of this database, every operator's where the"
            " context keeps it in the database. o sorts a list by its next column (the"
            " header's arrow says which; after the last, as read), O the other way."
        )
        return f"  {text}"

    def help_text(self) -> str:
        """``help``, then the meaning of each column of the tabs' declared tables
        (``qctl.tui.panes.ListPane.columns``, ``Pane.tables``), one paragraph per table,
        each on one line (``HelpScreen`` wraps it at the width it has);
        a column said before (same name, same meaning) is not said again."""
        # The command line's paragraph goes before the columns' glossary, which ends it.
        at = self.help.find("\nColumns")
        at = len(self.help.rstrip("\n")) if at < 0 else at
        lines = [
            self.help[:at].rstrip("\n"),
            "",
            self.command_help(),
            "",
            self.help[at:].strip("\n"),
        ]
        said: set[tuple[str, str]] = set()
        for tab in self.tabs:
            pane = self.pane_class(tab.name)
            for title, columns in (
                (tab.title, getattr(pane, "columns", ())),
                *getattr(pane, "tables", ()),
            ):
                new = [c for c in columns if (c.name, c.about) not in said]
                said.update((c.name, c.about) for c in new)
                if new:
                    lines.append(glossary(title, new))
        return "\n".join(lines) + "\n"

    def changes(self, store: Any) -> ChangeFeed | None:
        """Where the live feed's hints come from: the system's database object
        (``qctl.core.sqldb.SqlDatabase.changes``, None there when it cannot push); None:
        a store without a feed, the dashboard polls."""
        return store if callable(getattr(store, "changes", None)) else None

    def jump_targets(self, store: Any, text: str) -> list[tuple[str, Any]]:
        """Every (entity, id) that ``text`` (an id or a prefix) names, in a worker
        thread; bad input raises ``qctl.core.parse.ParseError`` or ``InvalidInput``."""
        raise NotImplementedError

    def describe(self, targets: list[tuple[str, Any]], text: str) -> str:
        """Why a jump went nowhere: nothing matches, or several things do."""
        raise NotImplementedError

    def detail(self, entity: str, id: Any) -> Screen[None]:
        """The drill-in screen of one record that ``jump_targets`` found."""
        raise NotImplementedError


class Dashboard(App[None]):
    """The app as panes and screens see it (``QctlTop`` implements it)."""

    store: Any
    """The system's store: azync's ``ConsoleStore``, DBOS's ``Database``."""
    audit_where: dict[str, Any]
    audit_table: Any
    """The database's audit table (``qctl.core.audit.Table``), or None: the local file."""
    system: SystemScreens
    read_only: bool
    clock: Callable[[], datetime]
    actions_done = 0
    """Actions carried out so far: a pane that keeps reads across refreshes reads whole
    again after one."""
    shown: TopScreen | None = None
    """The dashboard screen last shown (a dialog over it leaves it shown)."""

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
        fn: Callable[[Any, bool], R],
        done: Callable[[R], str],
    ) -> None:
        """An operator action through the operations layer: ``fn(store, dry_run)``."""
        raise NotImplementedError

    def act_verb(
        self,
        verb: Verb[Any],
        selection: Selection | Callable[[Any], Selection],
        then: Callable[[], object] | None = None,
    ) -> None:
        """A system's declared verb run by the verb engine (``QctlTop.act_verb``)."""
        raise NotImplementedError


class Dashboarded(MessagePump):
    """A widget or screen of the dashboard: ``top`` is the app, typed."""

    @property
    def top(self) -> Dashboard:
        return cast(Dashboard, self.app)


class Guarded:
    """Hides write actions from the footer (and refuses them) in read-only mode; their
    keys say so instead of doing nothing."""

    app: Any

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (action in self.app.system.writes and self.app.read_only)

    def on_key(self, event: events.Key) -> None:
        if not self.app.read_only:
            return
        for cls in type(self).__mro__:
            for b in cls.__dict__.get("BINDINGS", ()):
                if (
                    isinstance(b, Binding)
                    and event.key in b.key.split(",")
                    and b.action in self.app.system.writes
                ):
                    event.stop()
                    self.app.notify(f"read-only: {b.description.lower()} is disabled")
                    return


FIRST_KEYS = ("q", "question_mark")
"""The footer's keys that every width shows."""


class KeysFooter(Footer):
    """Textual's footer, rebuilt only when the keys it shows change. Textual rebuilds it
    on every focus and screen-stack change (five times before the first frame), making
    and styling one widget per key each time, though the keys are mostly the same."""

    _shown: tuple[Any, ...] | None = None

    async def recompose(self) -> None:
        if not self.is_attached:  # its screen was dismissed meanwhile
            return
        shown = (
            self._bindings_ready,  # until Textual sets it, the footer composes empty
            self.show_command_palette,
            *(
                (binding.key, binding.description, binding.action, enabled, tooltip)
                for _, binding, enabled, tooltip in self.screen.active_bindings.values()
                if binding.show
            ),
        )
        if shown != self._shown:
            self._shown = shown
            await super().recompose()

    def compose(self) -> ComposeResult:
        # Quit and help first: a terminal narrower than the keys cuts the end of the line.
        keys = list(super().compose())
        yield from sorted(keys, key=lambda w: getattr(w, "key", "") not in FIRST_KEYS)


def footer() -> Footer:
    """Compact and without the palette hint, so the longest key list (Jobs) fits 120 columns."""
    return KeysFooter(compact=True, show_command_palette=False)


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

    def fetch(self, store: Any) -> T:
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
        if self.top.shown not in (None, self):
            # A notice speaks of the screen it came on (":bogus", a refusal): another
            # screen starts without it; back from a dialog, the dialog's outcome stays.
            self.app.clear_notifications()
        self.top.shown = self
        self.top.render_status()
        for loader in self.loaders():
            loader.reload()
