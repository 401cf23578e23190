"""The error fingerprint every system's grouping uses (``qctl.core.triage``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from qctl.core.triage import Grouper, fingerprint, literal


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("card declined for 480", "card declined for <n>"),
        ("timeout after 2.5s (attempt #3)", "timeout after <n>s (attempt #<n>)"),
        ("row 0b1c1e3a-9f7e-4a1b-8c2d-1234567890AB gone", "row <uuid> gone"),
        ("job job_01h455vb4pex5vsknk084sn02q failed", "job job_<id> failed"),
        ("at 0x7ffd1234 in deadbeef00c0ffee", "at <hex> in <hex>"),
        ("can't open 'a.txt' or \"b 2.txt\"", "can't open '<str>' or \"<str>\""),
        ("utf8 v1.2 sha256", "utf8 v1.2 sha256"),  # digits inside a word name things
        ("coffee and decade", "coffee and decade"),  # hex letters alone are words
        ("  many\n\tspaces  ", "many spaces"),
        ("connect 10.0.0.1:5432 refused", "connect <n>:<n> refused"),
        ("CardDeclined('card declined for 7')", "CardDeclined('card declined for <n>')"),
        ("KeyError('user_9')", "KeyError('user_9')"),
    ],
)
def test_fingerprint_folds_values(text: str, folded: str) -> None:
    assert fingerprint(text) == folded


def test_a_hostile_error_is_read_bounded() -> None:
    assert len(fingerprint("x" * 10_000_000)) == 2000


def test_groups_count_and_keep_the_newest_as_sample() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    g = Grouper()
    g.add("a", "card declined for 480", t0, "pay")
    g.add("b", "card declined for 168", t0 + timedelta(1), "pay")
    g.add("c", "card declined for 7", t0 - timedelta(1), "refund")
    g.add("d", "boom", t0 + timedelta(2), "pay")
    found = g.result(4, True)
    top = found.groups[0]
    assert (top.fingerprint, top.count, dict(top.labels)) == (
        "card declined for <n>",
        3,
        {"pay": 2, "refund": 1},
    )
    assert (top.first_seen, top.last_seen, top.newest, top.sample) == (
        t0 - timedelta(1),
        t0 + timedelta(1),
        "b",
        "card declined for 168",
    )
    assert [x.fingerprint for x in found.groups] == ["card declined for <n>", "boom"]


def test_literal_is_text_the_whole_group_has() -> None:
    assert literal("smtp 421 try later\nmore") == "try later"
    assert literal("") == ""
