"""Pilot helpers for the dashboard tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from qctl.tui.app import QctlTop

SIZE = (140, 45)


async def until(pilot: Pilot[Any], cond: Callable[[], object], timeout: float = 8.0) -> None:
    """Let the app run until ``cond()`` is true (worker threads need real time)."""
    end = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except Exception:
            pass
        if time.monotonic() > end:
            raise AssertionError(f"condition not met within {timeout}s")
        await pilot.pause(0.05)


async def listening(app: QctlTop, pilot: Pilot[Any]) -> None:
    """Until the header says live and the feed's opening reset came (every channel is
    listened to): from then on, with the test's poll interval of a minute, only a hint
    refreshes."""
    from qctl.tui.widgets import StatusBar

    feed = app.feed
    assert feed is not None and feed.heartbeat >= 60
    bar = app.screen.query_one(StatusBar)
    await until(pilot, lambda: "live" in str(bar.render()), 10)
    await until(pilot, lambda: feed.hints >= 1, 10)


async def eventually(cond: Callable[[], object], timeout: float = 8.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(0.05)


def table(app: QctlTop, selector: str) -> DataTable[Any]:
    return app.screen.query_one(selector, DataTable)


def row_keys(app: QctlTop, selector: str) -> list[str]:
    t = table(app, selector)
    return [str(r.key.value) for r in t.ordered_rows]


def cells(app: QctlTop, selector: str, key: str) -> list[str]:
    return [str(c) for c in table(app, selector).get_row(key)]


def screen_text(app: QctlTop) -> str:
    """The visible screen as plain text lines (what an operator reads)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip).rstrip() for strip in strips)


def footer_keys(app: QctlTop) -> set[str]:
    """Keys of the bindings the footer shows for the focused widget."""
    return {key for key, active in app.screen.active_bindings.items() if active.enabled}
