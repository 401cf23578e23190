"""``qctl.cli.output.layout``: tables laid out exactly as tabulate 0.9 lays them out,
which qctl used until its import cost (~6 ms of CPU a table command) was cut."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from qctl.cli.output import TABLE_CELL_WIDTH, cell, layout

# Cells as ``cell`` makes them from any text: wide, combining, bidi and control
# characters, spaces of every kind, empty cells. Headings are column names.
cells = st.text(max_size=70).map(cell)
headings = st.from_regex(r"[A-Z_]{0,12}", fullmatch=True)
tables = st.integers(1, 5).flatmap(
    lambda width: st.tuples(
        st.lists(headings, min_size=width, max_size=width),
        st.lists(st.lists(cells, min_size=width, max_size=width), max_size=6),
    )
)


@settings(max_examples=300, deadline=None)
@given(tables)
def test_layout_is_tabulates(case: tuple[list[str], list[list[str]]]) -> None:
    headers, table = case
    assert layout(table, headers) == tabulate(table, headers=headers, disable_numparse=True)
    assert layout(table) == tabulate(table, tablefmt="plain", disable_numparse=True)


def test_layout_of_a_listing() -> None:
    assert layout([["7", "mail.send"], ["12", ""]], ["ID", "KIND"]) == (
        "ID    KIND\n----  ---------\n7     mail.send\n12"
    )
    assert layout([["id", "7"], ["kind", "mail.send"]]) == "id    7\nkind  mail.send"
    assert layout([]) == ""


def test_long_values_are_cut_on_a_terminal_only(tmp_path: Path) -> None:
    """A table cuts a long value to fit a terminal's line, unless ``--wide``; in a pipe
    or a file the value is whole (a program or a reader gets all of it)."""
    import pexpect

    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "COLUMNS": "200"}
    db = ["--dsn", f"sqlite:///{tmp_path / 'q.db'}"]

    def qctl(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "qctl", *db, *args], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def on_terminal(*args: str) -> str:
        child = pexpect.spawn(
            sys.executable,
            ["-m", "qctl", *db, *args],
            env=env,
            encoding="utf-8",
            dimensions=(24, 200),
            timeout=30,
        )
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0, child.before
        return str(child.before)

    qctl("db", "migrate")
    words = " ".join(f"word{i}" for i in range(40))
    job = json.loads(
        qctl("jobs", "enqueue", "long.values", "--meta", f"note={words}", "-o", "json")
    )
    whole = json.dumps({"note": words}, separators=(",", ":"))
    assert whole in qctl("jobs", "show", job["id"])
    cut = on_terminal("jobs", "show", job["id"])
    assert whole not in cut and f"{whole[: TABLE_CELL_WIDTH - 1]}…" in cut
    assert whole in on_terminal("jobs", "show", job["id"], "--wide")
