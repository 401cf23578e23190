"""azync's change stream (``ConsoleStore.changes``: LISTEN on PostgreSQL, the change log
on SQLite) as the dashboard's neutral hints (``qctl.core.changes``)."""

from __future__ import annotations

from dataclasses import dataclass

from qctl.core.changes import RESET, Hint, Hints
from qctl_kit.streams import Subscription
from qctl_store.contract import ChangeNotifier
from qctl_store.types import Change, ChangeEntity


def hint(change: Change) -> Hint:
    if change.entity is ChangeEntity.RESET:
        return RESET
    return Hint(
        f"{change.entity.value}s",  # jobs, dags, events
        ids=(str(change.id),) if change.id else (),
        bulk=change.bulk,
    )


@dataclass
class AzyncHints:
    changes: Subscription[Change]

    @property
    def closed(self) -> bool:
        return self.changes.closed

    def get(self, timeout: float | None = None) -> Hint | None:
        change = self.changes.get(timeout)
        return None if change is None else hint(change)

    def close(self) -> None:
        self.changes.close()


@dataclass
class AzyncFeed:
    store: ChangeNotifier
    partial = False
    """azync's triggers hint every job, DAG and event row change."""

    def changes(self) -> Hints | None:
        sub = self.store.changes()  # None: poll-only
        return None if sub is None else AzyncHints(sub)
