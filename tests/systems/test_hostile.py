"""Hostile rows (``hostile.CASES``: JSON nested 3,000 and 100,000 levels, a 5,000-digit
integer, NaN and infinities, a 10 MB payload, instants of ``infinity``, ``-infinity`` and
year 10000, invalid UTF-8, NUL) stored in every registered system's database, on each
backend it has: its listing and its detail exit 0 in every output format, the JSON forms
are strict JSON, and the dashboard lists the row and opens it. Each provider says how
to store a row (``tests/systems/hostile.py``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from qctl.cli.main import app
from qctl.systems import load
from qctl.tui.app import QctlTop
from tests.conftest import require_pg
from tests.systems.contract import Target
from tests.systems.hostile import CASES, HostileRow
from tests.systems.test_contract import NAMES, provider, system

pytestmark = pytest.mark.timeout(600)

FORMATS = ["table", "json", "jsonl", "csv"]
TARGETS = [(n, b) for n in NAMES for b in provider(n).HOSTILE_BACKENDS]

Stored = tuple[str, Target, dict[str, HostileRow]]


@pytest.fixture(scope="module", params=TARGETS, ids=[f"{n}-{b}" for n, b in TARGETS])
def stored(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stored]:
    name, backend = request.param
    if backend == "postgres":
        require_pg()
    p = provider(name)
    with p.hostile_database(backend, tmp_path_factory.mktemp(name)) as target:
        rows = {c.name: p.insert_hostile(target, c) for c in CASES}
        yield name, target, {k: v for k, v in rows.items() if v is not None}


def strict(text: str) -> Any:
    """JSON as a strict parser reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not standard JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def check(target: Target, args: list[str], fmt: str) -> None:
    result = CliRunner().invoke(app, [*target.args, *args, "-o", fmt])
    assert result.exit_code == 0, (args, fmt, result.output[-2000:])
    if fmt == "json":
        strict(result.stdout)
    elif fmt == "jsonl":
        for line in result.stdout.splitlines():
            strict(line)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_list_and_show(stored: Stored, case: str, fmt: str) -> None:
    _, target, rows = stored
    if case not in rows:
        pytest.skip("the database refuses this value")
    check(target, rows[case].list_args, fmt)
    check(target, rows[case].show_args, fmt)


def test_paging_one_row_at_a_time_shows_each_once(stored: Stored) -> None:
    """A page ending on a hostile row (an ``infinity`` instant among them) continues after
    it: every row once, then the end (before: the cursor of an out-of-range instant
    failed, or the next page began at the same row again)."""
    _, target, rows = stored
    listing = next(iter(rows.values())).list_args[:2]
    pages: list[str] = []
    after: list[str] = []
    while len(pages) <= 2 * len(CASES):  # a refused value may have left its row behind
        result = CliRunner().invoke(app, [*target.args, *listing, "-n", "1", "-o", "jsonl", *after])
        assert result.exit_code == 0, result.output[-2000:]
        pages.extend(result.stdout.splitlines())
        cursor = [line for line in result.stderr.splitlines() if "--after " in line]
        if not cursor:
            break
        after = ["--after", cursor[0].split("--after ", 1)[1]]
    else:
        raise AssertionError(f"still paging after {len(pages)} rows")
    assert len(set(pages)) == len(pages), "a row listed twice"
    assert all(any(row.key in page for page in pages) for row in rows.values())


def test_the_dashboard_lists_and_opens_every_row(stored: Stored) -> None:
    name, target, rows = stored
    p = provider(name)

    async def main(handle: Any) -> None:
        top = QctlTop(handle, system=load(system(name).screens), location="hostile")
        async with top.run_test(size=(200, 50)) as pilot:
            for row in rows.values():
                await p.show_in_dashboard(top, pilot, row)
        assert top.return_code is None

    with p.handle(target) as handle:
        asyncio.run(main(handle))


def test_every_system_stores_hostile_rows() -> None:
    for name in NAMES:
        p = provider(name)
        assert p.HOSTILE_BACKENDS and callable(p.insert_hostile), name
        assert callable(p.hostile_database) and callable(p.show_in_dashboard), name
