"""Jump to anything by id or unique prefix (``:`` or ``g``, as k9s' command prompt): the
job, DAG run, event or workflow execution whose id it is, whichever entity holds it."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from qctl.core.parse import parse_id_text
from qctl_store.listing import ENTITY_TABLES

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

LABELS = {"job": "job", "dag": "DAG run", "event": "event", "workflow": "workflow execution"}


def jump_targets(store: ConsoleStore, text: str) -> list[tuple[str, uuid.UUID]]:
    """Every (entity, id) that ``text`` (a whole id, or a prefix of at least 8 hex
    digits) names, in the order job, DAG run, event, workflow execution; at most a few
    per entity. A malformed id raises ``ParseError``."""
    parsed = parse_id_text(text)
    prefix = parsed.hex if isinstance(parsed, uuid.UUID) else parsed
    return [
        (entity, id)
        for entity in ENTITY_TABLES
        for id in store.find_ids_by_prefix(entity, prefix, limit=6)
    ]


def describe(targets: list[tuple[str, uuid.UUID]], text: str) -> str:
    """Why a jump went nowhere: nothing matches, or several things do."""
    if not targets:
        return f"no job, DAG run, event or workflow execution id starts with {text!r}"
    shown = ", ".join(f"{LABELS[e]} {str(i)[:13]}" for e, i in targets[:4])
    return f"{text!r} is ambiguous: {shown}{', ...' if len(targets) > 4 else ''}"
