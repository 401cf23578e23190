"""The dashboard's audit screen (``a``, ``:audit``), the same on every system: the audit
trail of this database, newest first by when each write started, read as ``qctl audit
list`` reads it (``qctl.core.audit.listing``): the database's table where the context
keeps the trail there (every operator's writes), else this account's local file, its
entries of this database only."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from qctl.core import audit
from qctl.tui import fmt
from qctl.tui.base import TopScreen, footer
from qctl.tui.panes import ListPane
from qctl.tui.widgets import Column, Table, flex

LIMIT = 500
"""Entries read: the newest ones (``qctl audit list -n`` reads further back)."""
SHOWN_IDS = 3


def text(value: Any) -> str:
    """Any value an entry holds as one line of text (a hostile entry's lists and objects
    included); the table escapes what a terminal would act on."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=True, default=str)


def started(value: Any, now: datetime) -> str:
    """An entry's ``time`` against the dashboard's clock; text that is not an instant
    as it is."""
    try:
        at = datetime.fromisoformat(str(value))
    except ValueError:
        return text(value)
    return fmt.when(at, now) if at.tzinfo is not None else text(value)


def target(entry: Mapping[str, Any]) -> str:
    """What the write acted on: its system and schema, then the first ids (and how many
    more) or, for a write over a filter, the options it was given."""
    where = " ".join(text(entry.get(k)) for k in ("system", "schema") if entry.get(k))
    ids = entry.get("ids")
    if isinstance(ids, list) and ids:
        count = entry.get("ids_count")
        total = count if isinstance(count, int) and count >= len(ids) else len(ids)
        what = " ".join(text(i) for i in ids[:SHOWN_IDS])
        if total > SHOWN_IDS:
            what += f" +{total - SHOWN_IDS}"
    else:
        selection = entry.get("selection")
        pairs = selection.items() if isinstance(selection, Mapping) else []
        what = " ".join(f"{text(k)}={text(v)}" for k, v in pairs)
    return f"{where}: {what}" if where and what else where or what


def outcome(entry: Mapping[str, Any]) -> str:
    return f"{text(entry.get('done'))}/{text(entry.get('skipped'))}"


@dataclass(frozen=True)
class Row:
    key: str
    entry: Mapping[str, Any]

    def field(self, name: str) -> str:
        return text(self.entry.get(name))


COLUMNS: tuple[Column[Row], ...] = (
    Column("when", "when the write started (UTC)", lambda r: r.entry.get("time"), time=started),
    Column(
        "who",
        "the operator's account (the front: cli or dashboard)",
        lambda r: f"{r.field('user')} ({r.field('front')})",
    ),
    Column("verb", "the command or the dashboard's action", lambda r: r.field("verb")),
    flex(
        "target",
        "the system and schema, then the ids acted on or the options given",
        lambda r: target(r.entry),
    ),
    Column("done/skipped", "rows changed / passed over", lambda r: outcome(r.entry)),
    flex("reason", "the operator's --reason", lambda r: r.field("reason")),
    Column("exit", "the exit status (0: done)", lambda r: r.field("exit_status")),
)


class AuditPane(ListPane):
    """The trail's entries, read in a worker thread like every pane's rows."""

    table_id = "audit"
    columns = COLUMNS
    filter_hint = "filter who, verb, target or reason (substring)"
    source = ""
    """Where the entries shown were read, in words."""

    def fetch(self, store: Any) -> Sequence[Any]:
        entries, said = audit.listing(
            self.top.audit_table, limit=LIMIT, dsn=self.top.audit_where.get("dsn")
        )
        # first, why the local file was read instead of the table ("" if it was not)
        return [said, *(Row(str(i), e) for i, e in enumerate(entries))]

    def show(self, data: Sequence[Any]) -> None:
        said = str(data[0]) if data else ""
        table = self.top.audit_table
        where = table.where if table is not None and not said else ""
        self.source = (where or f"this account's local file {audit.log_path()}") + (
            f" ({said})" if said else ""
        )
        super().show(list(data[1:]))

    def render_data(self) -> None:
        super().render_data()
        order = self.query_one(f"#{self.table_id}", Table).sorting() or "newest first"
        self.query_one(".audit-source", Static).update(f"audit trail, {order}: {self.source}")

    def compose(self) -> ComposeResult:
        yield Static(classes="bar audit-source", markup=False)
        yield from super().compose()

    def row_key(self, row: Row) -> str:
        return row.key

    def words(self, row: Row) -> Sequence[str]:
        return [row.field("user"), row.field("verb"), target(row.entry), row.field("reason")]


class AuditScreen(TopScreen):
    """``a`` or ``:audit`` from any screen; ``esc`` goes back."""

    BINDINGS = [Binding("q", "app.quit", "Quit"), Binding("escape", "back", "Back")]

    def compose(self) -> ComposeResult:
        yield from self.compose_status()
        yield AuditPane(id="audit-pane")
        yield footer()

    def on_mount(self) -> None:
        self.query_one(AuditPane).focus_first()

    def action_back(self) -> None:
        self.app.pop_screen()
