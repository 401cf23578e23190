"""What shell completion offers from an azync store: its kinds (the live depths, read
from the state indexes) and the ids of a noun's items that start with the word typed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qctl_store.types import Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

ENTITIES = {"jobs": "job", "dags": "dag", "events": "event", "workflows": "workflow"}
"""The noun whose ids an ``ID`` argument takes, as ``find_ids_by_prefix`` names it."""
LIMIT = 20


def values(store: ConsoleStore, noun: str, what: str, prefix: str) -> list[str]:
    if what == "kind":
        depths = store.sources_depths(list(Source))
        return sorted({kind for kinds, _ in depths.values() for kind in kinds})
    if what == "id" and noun in ENTITIES:
        return [str(i) for i in store.find_ids_by_prefix(ENTITIES[noun], prefix.lower(), LIMIT)]
    return []
