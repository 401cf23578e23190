"""``qctl top``: the Textual dashboard, one shell for every system.

A system brings its tabs, help, jump and write actions (``qctl.tui.base.SystemScreens``:
azync's ``qctl.systems.azync.tui.AZYNC``, DBOS's ``qctl.systems.dbos.tui.DBOS``); the shell
gives each the same status bar, jump, help, confirmation and refresh. Every store call
runs in a worker thread (``Loader.reload`` and ``QctlTop.act``); the event loop only
formats results. A ``LiveFeed`` thread turns change hints (or a polling timer, for a system
without hints) into at most a few ``RefreshRequested`` messages per second, and the
visible screen reloads. Store failures switch the status bar to ``disconnected`` until a
load succeeds again, so a database that comes back is picked up without a restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Tab, Tabs

from qctl import startup
from qctl.core import audit, verbs
from qctl.core.errors import NoSuchName, WrongState, WrongVerb, is_connection_error
from qctl.core.exits import Refused, exit_code_for, message_for
from qctl.core.sanitize import sanitize
from qctl.tui.base import Dashboard, Loader, SystemScreens, TopScreen, footer
from qctl.tui.live import DISCONNECTED, LIVE, LOCKED, MANUAL, PAUSED, POLLING, LiveFeed
from qctl.tui.panes import Pane, StatePicked
from qctl.tui.widgets import (
    ALL_STATES,
    CommandPrompt,
    ConfirmDialog,
    HelpScreen,
    PromptDialog,
    StatusBar,
)
from qctl_kit import errors

if TYPE_CHECKING:
    from qctl.tui.preload import Preload

R = TypeVar("R")

STALL_AFTER = 3
"""Seconds without an answer before the status bar says the database is not answering."""
MAX_TABS = 9
"""Tabs reachable by a digit key (1 to 9)."""
TAB = "tab-"
"""The prefix of a tab's id in the tab bar: the pane's container has the bare name."""


@dataclass
class RefreshRequested(Message):
    """From the live feed thread: the data may have changed."""


@dataclass
class ModeChanged(Message):
    mode: str


class MainScreen(TopScreen):
    BINDINGS = [
        Binding("q", "app.quit", "Quit"),
        *(Binding(str(i + 1), f"show_nth_tab({i})", show=False) for i in range(MAX_TABS)),
    ]

    shown_tab = ""
    """The tab last loaded because it became active."""

    def compose(self) -> ComposeResult:
        tabs = self.top.system.tabs
        self.shown_tab = tabs[0].name  # loaded by on_screen_resume
        yield from self.compose_status()
        # A tab bar over a content switcher, not a TabbedContent: the same tabs, and the
        # first frame a tenth of a minimal Textual app's sooner (docs/benchmarks.md).
        yield Tabs(
            *(Tab(f"{i + 1} {tab.title}", id=TAB + tab.name) for i, tab in enumerate(tabs)),
            active=TAB + tabs[0].name,
            id="tabs",
        )
        with ContentSwitcher(id="panes", initial=tabs[0].name):
            for i, tab in enumerate(tabs):
                with Vertical(id=tab.name):
                    if i == 0:
                        yield self.top.system.pane(tab.name)
        yield footer()

    def active_tab(self) -> str:
        """The name of the tab shown ("" while composing or tearing down)."""
        try:
            active = self.query_one("#tabs", Tabs).active
        except NoMatches:
            return ""
        return active.removeprefix(TAB)

    def pane(self, name: str) -> Loader[Any]:
        """The pane of tab ``name``, mounted when first asked for: the first frame waits
        neither for the hidden tabs' widgets nor for their modules."""
        try:
            return self.query_one(f"#{name}-pane", Loader)
        except NoMatches:
            pane = self.top.system.pane(name)
            self.query_one(f"#{name}", Vertical).mount(pane)
            return pane

    def loaders(self) -> list[Loader[Any]]:
        try:
            pane = self.pane(self.active_tab() or self.top.system.tabs[0].name)
        except NoMatches:  # composing or tearing down
            return []
        return [pane, *pane.query(Loader)]

    def on_mount(self) -> None:
        first = self.top.system.tabs[0].name
        self.query_one(f"#{first}-pane", Loader).focus_first()  # type: ignore[attr-defined]

    def action_show_nth_tab(self, index: int) -> None:
        tabs = self.top.system.tabs
        if index < len(tabs):
            self.action_show_tab(tabs[index].name)

    def action_show_tab(self, name: str) -> None:
        # Let go of the focus first: hiding the old pane would hand it to a sibling
        # table there.
        self.set_focus(None)
        pane = self.pane(name)
        if self.active_tab() == name:
            pane.reload()  # no TabActivated follows
        else:
            self.query_one("#tabs", Tabs).active = TAB + name  # on_tabs_tab_activated loads it
        # The pane becomes visible on the next refresh; only then can it take focus.
        self.call_after_refresh(pane.focus_first)  # type: ignore[attr-defined]

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        # A click, a key on the tab bar or action_show_tab: show the pane, then read it.
        # The bar announces its first tab on mount too, which is shown and read already
        # (a second read would compete with the first frame).
        if event.tabs.id != "tabs":
            return
        name = (event.tab.id or "").removeprefix(TAB)
        self.pane(name)
        self.query_one("#panes", ContentSwitcher).current = name
        if name == self.shown_tab:
            return
        self.shown_tab = name
        for loader in self.loaders():
            loader.reload()


class QctlTop(Dashboard):
    CSS_PATH = "qctl.tcss"
    TITLE = "qctl top"
    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        # Off the footer (listed in help): the live feed refreshes anyway, and the Jobs
        # footer must fit 120 columns.
        Binding("r", "refresh", "Refresh", show=False),
        Binding("p", "toggle_pause", "Pause refresh"),
        Binding("colon", "command", "Command", show=False),
        Binding("g", "jump", "Jump", show=False),
        Binding("a", "audit", "Audit", show=False),
        # Ctrl-C quits, as in the console's other long-running verbs (Textual's own
        # binding only says which key would).
        Binding("ctrl+c", "quit", "Quit", show=False, system=True),
    ]

    def __init__(
        self,
        store: Any,
        *,
        system: SystemScreens | None = None,
        location: str = "",
        read_only: bool = False,
        poll_interval: float = 2.0,
        min_interval: float = 0.05,
        live: bool = True,
        clock: Callable[[], datetime] | None = None,
        on_ready: Callable[[], object] | None = None,
        preloads: dict[str, Preload[Any]] | None = None,
        lock_waits: list[tuple[float, str]] | None = None,
        owns_store: bool = False,
        audit_where: dict[str, Any] | None = None,
        audit_table: audit.Table | None = None,
    ) -> None:
        super().__init__()
        self.audit_where = audit_where or {}
        """The database part of the audit entry of each action (``qctl.core.audit``)."""
        self.audit_table = audit_table
        """The database's audit table, where the context keeps the trail there (None:
        the local file); the audit screen reads it."""
        self.owns_store = owns_store
        """The store ends with the app (``run``): quitting may interrupt it."""
        self.lock_waits = lock_waits if lock_waits is not None else []
        """(when, line) of each lock a statement waited behind, appended by the store's
        watch thread (``Config.on_lock_wait``); the newest names the holder while a
        load stalls."""
        self.locked_by = ""
        if system is None:
            from qctl import systems

            system = systems.load(systems.systems()[0].screens)
        self.system = system
        self.on_ready = on_ready
        self.preloads = dict(preloads or {})
        """Reads started before the app, by loader id (``overview-pane``)."""
        self.store = store
        self.poll_interval = poll_interval
        self.location = location
        self.read_only = read_only
        self.clock = clock or (lambda: datetime.now(UTC))
        self.paused = False
        self.feed_mode = ""
        self.connection_error = ""
        self.stalled = 0
        """Seconds the oldest load in flight has waited, once past ``STALL_AFTER``."""
        self.refresh_count = 0
        self.feed: LiveFeed | None = None
        if not live:
            self.feed_mode = MANUAL
        else:
            self.feed = LiveFeed(
                system.changes(store),
                on_refresh=self._hint,
                on_mode=self._mode,
                min_interval=min_interval,
                poll_interval=poll_interval,
            )

    # --- an unexpected error -------------------------------------------------------------

    crash: Exception | None = None

    def _handle_exception(self, error: Exception) -> None:
        self.crash = error
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        """One line on stderr instead of a traceback, after Textual restored the terminal
        (``run`` then exits non-zero)."""
        from qctl_kit.dsn import redact

        error = self.crash
        text = f"{type(error).__name__}: {error}" if error else "unknown error"
        self.bell()
        self._exit_renderables.append(
            Text(f"qctl: error: qctl top stopped: {redact(' '.join(text.split()))}")
        )
        self._close_messages_no_wait()

    def take_preload(self, loader: Loader[Any]) -> Preload[Any] | None:
        return self.preloads.pop(loader.id or "", None)

    def load_took(self, seconds: float) -> None:
        if self.feed is not None:
            self.feed.took(seconds)

    def _hint(self) -> None:
        self.post_message(RefreshRequested())  # thread-safe; called by the feed thread

    def _mode(self, mode: str) -> None:
        self.post_message(ModeChanged(mode))

    def get_default_screen(self) -> Screen[Any]:
        return MainScreen()

    def on_mount(self) -> None:
        if self.feed is not None:
            # After the first frame: opening the change stream (a LISTEN connection on
            # PostgreSQL) would otherwise compete with the first load.
            self.call_after_refresh(self.feed.start)
        self.call_after_refresh(startup.resume)  # the console script paused it
        if self.on_ready is not None:
            self.call_after_refresh(self.on_ready)  # after the first frame
        self.set_interval(1.0, self._watch_loads)

    def _watch_loads(self) -> None:
        """A database that stops answering (a pool waiting for a connection) shows up as
        disconnected within seconds, not when the driver finally times out."""
        screen = self.screen if self._screen_stack else None
        now = time.monotonic()
        waits = [
            now - loader.busy_since
            for loader in (screen.loaders() if isinstance(screen, TopScreen) else [])
            if loader.busy_since is not None
        ]
        longest = max(waits, default=0.0)
        stalled = int(longest) if longest >= STALL_AFTER else 0
        last = self.lock_waits[-1] if self.lock_waits else None
        locked_by = last[1] if stalled and last and last[0] >= now - longest else ""
        if (stalled, locked_by) != (self.stalled, self.locked_by):
            self.stalled, self.locked_by = stalled, locked_by
            self.render_status()

    def on_unmount(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    async def action_quit(self) -> None:
        """Quit at once, whatever a worker thread waits on: the store's statements in
        flight are cancelled (on a thread of their own: a cancel waits for the server),
        so that the app's exit, which waits for its worker threads, does not wait on a
        lock or a silent server."""
        interrupt = getattr(self.store, "interrupt", None) if self.owns_store else None
        if interrupt is not None:
            threading.Thread(target=interrupt, name="qctl-quit", daemon=True).start()
        self.exit()

    # --- status -------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        if self.locked_by and not self.connection_error:
            return LOCKED
        if self.connection_error or self.stalled:
            return DISCONNECTED
        if self.paused:
            return PAUSED
        return self.feed_mode

    def render_status(self) -> None:
        if not self._screen_stack:
            return
        for bar in self.screen.query(StatusBar):
            detail = self.connection_error
            if not detail and self.locked_by:
                detail = f"{self.locked_by}, for {self.stalled}s"
            if not detail and self.stalled:
                detail = f"no answer from the database for {self.stalled}s"
            if not detail:
                detail = f"updated {self.clock():%H:%M:%S}" if self.refresh_count else ""
                if self.mode == POLLING:
                    detail = f"every {self.poll_interval:g}s  {detail}".strip()
                elif self.mode == LIVE and self.feed is not None and self.feed.partial:
                    # What the system's notices miss (state changes) is polled behind them.
                    detail = f"+ polling every {self.poll_interval:g}s  {detail}".strip()
                if self.paused:
                    detail = f"{detail}  (p resumes refresh)".strip()
            bar.show(self.mode, self.location, detail)

    def connection_ok(self) -> None:
        self.refresh_count += 1
        self.stalled = 0
        if self.connection_error:
            self.connection_error = ""
            self.notify("database connection restored")
        self.render_status()

    def connection_failed(self, error: Exception) -> None:
        if isinstance(error, errors.NotFound):
            self.notify(str(error), severity="warning")
            return
        if not is_connection_error(error):
            self.notify(f"{type(error).__name__}: {error}", severity="error")
            return
        # In full: the status bar wraps it to the width the terminal has.
        self.connection_error = " ".join(str(error).split()) or type(error).__name__
        self.render_status()

    def on_mode_changed(self, message: ModeChanged) -> None:
        self.feed_mode = message.mode
        self.render_status()

    def on_refresh_requested(self, message: RefreshRequested) -> None:
        if not self.paused:
            self.reload_screen()

    def reload_screen(self) -> None:
        if not self._screen_stack:  # a late message while the app shuts down
            return
        screen = self.screen
        if isinstance(screen, TopScreen):
            for loader in screen.loaders():
                loader.reload()

    # --- actions ------------------------------------------------------------------------

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.system.help_text()))

    def action_audit(self) -> None:
        """``a``, ``:audit``: the audit trail of this database (``qctl.tui.audit``)."""
        from qctl.tui.audit import AuditScreen

        if not isinstance(self.screen, AuditScreen):
            self.push_screen(AuditScreen())

    def action_jump(self) -> None:
        """``:``/``g``: ask for an id or prefix, then open what it names."""

        def got(values: dict[str, str] | None) -> None:
            text = (values or {}).get("id", "").strip()
            if text:
                self.run_worker(lambda: self._find(text), thread=True, exit_on_error=False)

        title, label = self.system.jump_prompt
        self.push_screen(PromptDialog(title, [("id", label, "")]), got)

    def _find(self, text: str, instead: Callable[[str], object] | None = None) -> None:
        """Open what the id or prefix ``text`` names, in a worker thread. ``instead`` is
        told, on the app's thread, what went wrong when ``text`` names nothing (a bad id
        or no match); by default the notice says it."""
        from qctl.core.parse import ParseError

        try:
            targets = self.system.jump_targets(self.store, text)
        except (ParseError, errors.InvalidInput) as exc:
            self.call_from_thread(instead or self._warn, str(exc))
            return
        except Exception as exc:
            self.call_from_thread(self.connection_failed, exc)
            return
        if len(targets) != 1:
            said = self.system.describe(targets, text)
            self.call_from_thread(instead if instead and not targets else self._warn, said)
            return
        self.call_from_thread(self._open, *targets[0])

    def _warn(self, text: str) -> None:
        self.notify(text, severity="warning")

    def action_command(self) -> None:
        """``:``: the command line (``qctl.tui.base.SystemScreens.complete``)."""

        def got(values: dict[str, str] | None) -> None:
            text = (values or {}).get("command", "").strip()
            if text:
                self.command(text)

        title = f"{self.system.label}: a screen, then a state, an id or words; or an id"
        label = "screens: " + ", ".join([*(t.name for t in self.system.tabs), "audit"])
        self.push_screen(CommandPrompt(title, label, self.system.complete), got)

    def command(self, text: str) -> None:
        """Run a ``:`` command line: ``jobs`` shows the tab, ``jobs dead`` its list in
        that state (and no ``/`` words), ``dag ID`` opens what the id names, ``queues
        reports`` the tab's rows those ``/`` words match; a line that names no tab is an
        id to jump to. What names nothing says so in one line."""
        first, _, rest = text.partition(" ")
        rest = rest.strip()
        if first.lower() in ("q", "quit"):
            self.run_worker(self.action_quit())
            return
        if first.lower() == "audit" and not rest:
            self.action_audit()
            return
        tab = self.system.tab_named(first)
        screens = ", ".join(t.name for t in self.system.tabs)
        if tab is None:
            if rest:
                self.notify(
                    f"no screen {first!r} on {self.system.label} ({screens})", severity="error"
                )
                return

            def unknown(why: str) -> None:
                self.notify(f"no screen {first!r} ({screens}) and {why}", severity="error")

            self.run_worker(lambda: self._find(text, unknown), thread=True, exit_on_error=False)
            return
        while not isinstance(self.screen, MainScreen):
            self.pop_screen()
        main = self.screen
        if not isinstance(main, MainScreen):
            return
        main.action_show_tab(tab.name)
        if not rest:
            return
        pane = main.pane(tab.name)
        states = {s.lower(): s for s in (*self.system.tab_states(tab), ALL_STATES)}
        if isinstance(pane, StatePicked) and rest.lower() in states:
            # What the line names, alone: the words of an earlier / are let go.
            if isinstance(pane, Pane):
                pane.filter_text = ""
            state = states[rest.lower()]
            pane.pick_state(None if state == ALL_STATES else state)
            return

        def words(why: str) -> None:
            if isinstance(pane, Pane):
                pane.filter_text = rest
                pane.filter_changed()
            else:
                self.notify(why, severity="error")

        self.run_worker(lambda: self._find(rest, words), thread=True, exit_on_error=False)

    def _open(self, entity: str, id: Any) -> None:
        self.push_screen(self.system.detail(entity, id))

    def action_refresh(self) -> None:
        self.reload_screen()

    def action_toggle_pause(self) -> None:
        self.paused = not self.paused
        self.render_status()
        if not self.paused:
            self.reload_screen()

    def act(
        self,
        question: str | Callable[[R], str],
        fn: Callable[[Any, bool], R],
        done: Callable[[R], str],
        verb: str = "",
    ) -> None:
        """An operator action: ``fn(store, dry_run)`` is an operations-layer call. Its
        dry run (the guards, and counts) runs first, so a refusal is told before anything
        is asked; then ``question`` (a text, or made from the dry run's record) is
        confirmed, ``fn`` runs for real and ``done(record)`` is the notice.
        Every store call runs in a worker thread. Refused outright in read-only mode.

        Its outcome (refused by the dry run, cancelled, done or failed) is one entry of
        the audit trail, as the command line's write: ``verb`` (default: the tab's name
        and the question's first word, ``jobs retry``), the question asked as its
        selection."""
        if self.read_only:
            what = verb.split()[-1] if verb else "actions"
            self.notify(f"read-only: {what} is disabled", severity="error")
            return
        asked = [question if isinstance(question, str) else ""]
        reason: list[str | None] = [None]
        """The reason typed in the question, as the command line's ``--reason``."""
        tab = self._active_tab()
        started = audit.now()  # an entry is dated by its start, as the command line's

        def audited(result: Any = None, error: BaseException | None = None) -> None:
            first = (asked[0].split() or [""])[0].lower()
            entry = audit.Entry(
                "dashboard",
                verb or f"{tab} {first}".strip(),
                self.audit_where,
                {"asked": asked[0]},
                reason=reason[0],
                time=started,
            )
            if result is not None:
                entry.note(result)
            if error is not None:
                entry.error, entry.exit_status = message_for(error), exit_code_for(error)
            audit.append(entry, self._audit_warn)

        def call(dry_run: bool) -> None:
            try:
                result = fn(self.store, dry_run)
            except Exception as exc:
                audited(exc.result if isinstance(exc, verbs.Stopped) else None, exc)
                self.call_from_thread(self._action_failed, exc)
                return
            if dry_run:
                self.call_from_thread(ask, result)
            else:
                audited(result)
                self.call_from_thread(self._action_done, done(result))

        def ask(planned: R) -> None:
            text = question if isinstance(question, str) else question(planned)
            asked[0] = text
            dialog = ConfirmDialog(text, ask_reason=True)

            def answered(yes: bool | None) -> None:
                reason[0] = dialog.reason
                then(yes)

            self.push_screen(dialog, answered)

        def then(yes: bool | None) -> None:
            if yes:
                self.run_worker(
                    lambda: call(False), thread=True, group="action", exit_on_error=False
                )
            else:
                audited(error=Refused("declined; nothing was changed"))
                self.notify("cancelled")

        self.run_worker(lambda: call(True), thread=True, group="action", exit_on_error=False)

    def _active_tab(self) -> str:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen.active_tab()
        return ""

    def _audit_warn(self, text: str) -> None:
        """Tell the operator the audit log failed, from any thread."""
        try:
            self.call_from_thread(self.notify, sanitize(text), severity="warning")
        except RuntimeError:  # on the app's own thread
            self.notify(sanitize(text), severity="warning")

    def act_verb(
        self,
        verb: verbs.Verb[Any],
        selection: verbs.Selection | Callable[[Any], verbs.Selection],
        then: Callable[[], object] | None = None,
    ) -> None:
        """A system's declared verb (``qctl.core.verbs``) over ``selection`` (or what a
        read of the database makes it, in the worker: a tree of workflows), as the
        command line runs it: the plan first (a refusal is told before anything is
        asked), the same question, then the run of exactly the planned targets; the
        notice is the result's sentence, the audit entry its record. ``then`` runs on
        the app's thread after a completed run (a pane clears the marks it acted on)."""
        target = audit.describe(self.audit_where)
        planned: list[verbs.Plan] = []

        def step(handle: Any, dry_run: bool) -> Any:
            if dry_run:
                chosen = selection if isinstance(selection, verbs.Selection) else selection(handle)
                planned.append(verbs.plan(handle, verb, chosen, target))
                return planned[-1]
            return verbs.run(handle, verb, planned[-1])

        def done(result: verbs.Result) -> str:
            if then is not None:
                self.call_from_thread(then)
            return result.words(verb)

        self.act(lambda p: p.question(verb), step, done, verb=verb.title)

    def _action_done(self, text: str) -> None:
        self.actions_done += 1
        self.notify(text)
        self.reload_screen()

    def _action_failed(self, error: Exception) -> None:
        if isinstance(error, WrongVerb | WrongState | NoSuchName | errors.InvalidInput):
            self.notify(str(error), severity="error")
        elif isinstance(error, verbs.Stopped):
            self.notify(message_for(error), severity="error")
        elif isinstance(error, errors.NotFound):
            self.notify("not possible in the current state (the row moved on)", severity="error")
        else:
            self.notify(f"failed: {error}", severity="error")
        self.reload_screen()


def run(
    store: Any,
    *,
    system: SystemScreens | None = None,
    location: str = "",
    read_only: bool = False,
    poll_interval: float = 2.0,
    on_ready: Callable[[], object] | None = None,
    preloads: dict[str, Preload[Any]] | None = None,
    lock_waits: list[tuple[float, str]] | None = None,
    audit_where: dict[str, Any] | None = None,
    audit_table: audit.Table | None = None,
) -> int:
    """Run the dashboard in this terminal until the operator quits; the exit code (1
    after an unexpected error, which printed one line)."""
    # The pool logs every failed reconnect; on a terminal owned by the app those lines
    # would scribble over the screen, which shows the outage itself.
    logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
    app = QctlTop(
        store,
        system=system,
        location=location,
        read_only=read_only,
        poll_interval=poll_interval,
        on_ready=on_ready,
        preloads=preloads,
        lock_waits=lock_waits,
        owns_store=True,
        audit_where=audit_where,
        audit_table=audit_table,
    )
    app.run()
    return app.return_code or 0
