"""The dashboard shows text from the database escaped: an error that carries escape
sequences (OSC 52 writes the clipboard, ESC c resets the terminal) or Rich markup is
drawn as visible characters in the jobs table and in the job detail."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from qctl.systems.azync.tui import JobDetailScreen
from qctl_store.types import DequeueParams, EnqueueParams, Source
from tests.tui.helpers import SIZE, cells, screen_text, until
from tests.tui.test_app import app_for, open_jobs

pytestmark = pytest.mark.timeout(120)

ERROR = "boom\x1b]52;c;ZXZpbA==\x07\x1bc[reverse]x[/reverse]"
SHOWN = "boom\\x1b]52;c;ZXZpbA==\\x07\\x1bc[reverse]x[/reverse]"


async def test_error_text_is_escaped_in_table_and_detail(store: Any) -> None:
    kind = f"tui_esc_{uuid.uuid4().hex[:8]}"
    store.enqueue(EnqueueParams(kind=kind, max_attempts=1))
    [job] = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind))
    store.dead(job.id, job.lease_token, ERROR)
    app = app_for(store)
    async with app.run_test(size=SIZE) as pilot:
        await open_jobs(pilot, app, kind)
        row = cells(app, "#jobs-table", str(job.id))
        assert SHOWN[:40] in " ".join(row), row
        assert not any("\x1b" in c for c in row)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, JobDetailScreen))
        await until(pilot, lambda: "boom\\x1b]52" in screen_text(app))
        text = screen_text(app)
        assert "\x1b" not in text and "[reverse]x[/reverse]" in text
