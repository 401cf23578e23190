"""``qctl.cli.output.layout``: tables laid out exactly as tabulate 0.9 lays them out,
which qctl used until its import cost (~6 ms of CPU a table command) was cut."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tabulate import tabulate

from qctl.cli.output import cell, layout

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
