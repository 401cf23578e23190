"""Keyset paging (``after``) of the newest-first listings, ``list_events``, ``list_dags``
and ``list_workflow_executions``, on both backends: walking the pages by cursor yields
exactly the offset listing, rows sharing a timestamp included, the total counts every
match whatever the position, and each listing's page without its total (``event_page``,
``dag_page``, ``execution_page``) is the same page."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from qctl_kit.errors import InvalidInput
from qctl_kit.values import PageCursor
from qctl_store.types import (
    DAGFilter,
    DAGParams,
    DAGState,
    EventFilter,
    PublishParams,
    WorkflowFilter,
    WorkflowStartParams,
)
from tests.conformance.helpers import AnyStore, unique, wf_task

Listing = Callable[[int, int, PageCursor | None], tuple[list[Any], int]]
Page = Callable[[int, PageCursor | None], list[Any]]


def walk(listing: Listing, uncounted: Page, key: str, size: int) -> list[Any]:
    """Every row, ``size`` at a time, each page starting after the last row's cursor."""
    out: list[Any] = []
    after = None
    while True:
        page, total = listing(0, size, after)
        assert total == len(listing(0, 0, None)[0]), "the total ignores the position"
        assert uncounted(size, after) == page
        out.extend(page)
        if len(page) < size:
            return out
        after = PageCursor(getattr(page[-1], key), page[-1].id)


def test_events_walk_equals_the_offset_listing_across_ties(store: AnyStore) -> None:
    etype = unique("evt.keyset")
    base = datetime(2026, 5, 1, 12, tzinfo=UTC)
    # Three instants, three events each: a page boundary falls inside a tie.
    for i in range(9):
        store.publish(
            PublishParams(type=etype, payload={"i": i}, occurred_at=base + timedelta(hours=i // 3))
        )
    flt = EventFilter(type=etype)

    def listing(offset: int, limit: int, after: PageCursor | None) -> tuple[list[Any], int]:
        return store.list_events(flt, offset, limit, after)

    everything, total = listing(0, 0, None)
    assert total == 9
    ordered = sorted(everything, key=lambda e: (e.occurred_at, str(e.id)), reverse=True)
    assert [e.id for e in everything] == [e.id for e in ordered]
    for size in (1, 2, 4):
        assert [
            e.id
            for e in walk(listing, lambda n, at: store.event_page(flt, n, at), "occurred_at", size)
        ] == [e.id for e in everything]
    # The filter holds beside the position: a window in time, paged.
    window = EventFilter(type=etype, since=base + timedelta(hours=1))
    rows, total = store.list_events(
        window, 0, 2, PageCursor(everything[1].occurred_at, everything[1].id)
    )
    assert total == 6 and [e.id for e in rows] == [e.id for e in everything[2:4]]


def test_dags_walk_equals_the_offset_listing(store: AnyStore) -> None:
    name = unique("ks_dag")
    ids = []
    for _ in range(5):
        p = DAGParams(name=name, tasks=[wf_task("a", unique("ks_dag_k"))])
        assert store.create_dag(p)[0]
        ids.append(p.id)
        time.sleep(0.002)
    flt = DAGFilter(name=name)

    def listing(offset: int, limit: int, after: PageCursor | None) -> tuple[list[Any], int]:
        return store.list_dags(flt, offset, limit, after)

    assert [d.id for d in listing(0, 0, None)[0]] == ids[::-1]
    for size in (1, 2, 3):
        assert [
            d.id
            for d in walk(listing, lambda n, at: store.dag_page(flt, n, at), "created_at", size)
        ] == ids[::-1]
    # A state filter pages the same way; a cursor past the last row is an empty page.
    running = DAGFilter(name=name, state=DAGState.RUNNING)
    last = store.get_dag(ids[0])
    assert store.list_dags(running, 0, 10, PageCursor(last.created_at, last.id)) == ([], 5)


def test_workflow_executions_walk_equals_the_offset_listing(store: AnyStore) -> None:
    name = unique("ks_wf")
    ids = []
    for _ in range(5):
        p = WorkflowStartParams(name=name)
        assert store.start_workflow(p)[0]
        ids.append(p.id)
        time.sleep(0.002)
    flt = WorkflowFilter(name=name)

    def listing(offset: int, limit: int, after: PageCursor | None) -> tuple[list[Any], int]:
        return store.list_workflow_executions(flt, offset, limit, after)

    for size in (1, 2, 5):
        assert [
            w.id
            for w in walk(
                listing, lambda n, at: store.execution_page(flt, n, at), "created_at", size
            )
        ] == ids[::-1]
    # Offset and cursor compose: skip one row after the position.
    third = store.get_workflow_execution(ids[2])
    rows, total = listing(1, 1, PageCursor(third.created_at, third.id))
    assert (total, [w.id for w in rows]) == (5, [ids[0]])


@pytest.mark.parametrize(
    "cursor",
    [
        PageCursor(None, uuid.uuid4()),  # these listings' columns are never NULL
        PageCursor(datetime(2026, 1, 1), uuid.uuid4()),  # naive: ambiguous
    ],
)
def test_a_cursor_without_an_aware_instant_is_invalid_input(
    store: AnyStore, cursor: PageCursor
) -> None:
    with pytest.raises(InvalidInput):
        store.list_events(EventFilter(), 0, 1, cursor)
    with pytest.raises(InvalidInput):
        store.list_dags(DAGFilter(), 0, 1, cursor)
    with pytest.raises(InvalidInput):
        store.list_workflow_executions(WorkflowFilter(), 0, 1, cursor)


def test_an_unknown_dag_state_is_invalid_input(store: AnyStore) -> None:
    with pytest.raises(InvalidInput, match="unknown DAG state"):
        store.list_dags(DAGFilter(state="sleeping"))  # type: ignore[arg-type]
