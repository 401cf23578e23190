"""Error-first triage on every system: failures grouped by an error *fingerprint*, the
error text with what varies from one failure to the next folded to placeholders, so that
``card declined for 480`` and ``card declined for 168`` are one group.

``fingerprint`` folds, in this order (an earlier fold's text is not folded again):
quoted values (``'...'``, ``"..."``) to ``'<str>'``/``"<str>"``, UUIDs to ``<uuid>``,
TypeIDs (``job_01h455vb4pex5vsknk084sn02q``) to their prefix and ``<id>``, hex ids
(``0x1f``, or a run of 8 or more hex digits with a letter and a digit among them) to
``<hex>``, and numbers to ``<n>``; whitespace is collapsed. An exception's repr
(``CardDeclined('card declined for 7')``) keeps its message, folded in turn.
``Grouper`` counts failures into groups; each system reads its failures (ids, error
text, times: nothing else decoded) and feeds it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

R = TypeVar("R")

SCAN = 10_000
"""Failures a grouping reads at most, newest first: enough to rank the errors of an
incident, bounded on a table of millions (``ErrorGroups.complete`` says when it cut)."""
PAGE = 1_000
"""Failures read per statement of a scan."""
FINGERPRINT_CHARS = 2000
"""What of an error ``fingerprint`` reads: enough to tell errors apart, bounded for a
hostile row's megabytes."""

_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = (
    # A quote opens only after a non-word character: the apostrophe of "can't" does not.
    (re.compile(r"(?<!\w)'[^'\n]*'"), "'<str>'"),
    (re.compile(r'(?<!\w)"[^"\n]*"'), '"<str>"'),
    (re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    # TypeID: a lower-case prefix, "_", 26 Crockford base32 digits (the first at most 7).
    (re.compile(r"\b([a-z](?:[a-z_]{0,61}[a-z])?)_[0-7][0-9a-hjkmnp-tv-z]{25}\b"), r"\1_<id>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b", re.I), "<hex>"),
    # Not a digit inside a word (utf8, sha256): those name things rather than vary.
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)*"), "<n>"),
)


_REPR = re.compile(r"\s*([A-Za-z_][\w.]*)\((['\"])(.*)\2\)\s*", re.S)
"""An exception's repr, ``CardDeclined('card declined for 7')``: its quotes hold the
message, not a value."""


def fingerprint(text: str) -> str:
    """``text`` (its first ``FINGERPRINT_CHARS``) with values folded to placeholders and
    whitespace collapsed: the key errors are grouped by."""
    folded = text[:FINGERPRINT_CHARS]
    call = _REPR.fullmatch(folded)
    if call:
        name, quote, message = call.groups()
        return f"{name}({quote}{fingerprint(message)}{quote})"
    for pattern, placeholder in _FOLDS:
        folded = pattern.sub(placeholder, folded)
    return " ".join(folded.split())


@dataclass
class ErrorGroup:
    """The failures whose error has one fingerprint."""

    fingerprint: str
    sample: str = ""
    """The error of the group's newest failure, as stored."""
    count: int = 0
    labels: Counter[str] = field(default_factory=Counter)
    """Failures of the group per label (a kind, a job name)."""
    first_seen: Any = None
    last_seen: Any = None
    """When the group's first and newest failures happened: a ``datetime``, or the
    orderable instant a system stores (DBOS's epoch milliseconds)."""
    newest: Any = None
    """The id of the failure that happened last (a sample to open)."""

    def ranked_labels(self) -> list[tuple[str, int]]:
        """``labels`` largest first, then by name."""
        return sorted(self.labels.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class ErrorGroups:
    groups: list[ErrorGroup]
    """Largest first, then the most recent failure, then by fingerprint."""
    scanned: int
    """Failures read."""
    complete: bool
    """Every matching failure was read (else the newest ``scanned``)."""


class Grouper:
    """Failures counted into groups by fingerprint, in any order."""

    def __init__(self) -> None:
        self._groups: dict[str, ErrorGroup] = {}

    def add(
        self,
        id: Any,
        error: str,
        at: Any,
        label: str = "",
        count: int = 1,
        first: Any = None,
    ) -> None:
        """``count`` failures with ``error`` (``id`` the one at ``at``, the newest of them;
        ``first`` the oldest's time, when they are several)."""
        key = fingerprint(error)
        group = self._groups.setdefault(key, ErrorGroup(key))
        group.count += count
        group.labels[label] += count
        first = at if first is None else first
        if first is not None and (group.first_seen is None or first < group.first_seen):
            group.first_seen = first
        newer = at is not None and (group.last_seen is None or at > group.last_seen)
        if newer or group.newest is None:
            group.last_seen = at if newer else group.last_seen
            group.newest, group.sample = id, error

    def result(self, scanned: int, complete: bool) -> ErrorGroups:
        # Stable sorts, the last one first in rank: count, then recency (unknown last).
        ranked = sorted(self._groups.values(), key=lambda g: g.fingerprint)
        ranked.sort(key=lambda g: (g.last_seen is not None, g.last_seen or 0), reverse=True)
        ranked.sort(key=lambda g: -g.count)
        return ErrorGroups(ranked, scanned, complete)


def scan_groups(
    fetch: Callable[[Any, int], Sequence[R]],
    cursor: Callable[[R], Any],
    failure: Callable[[R], tuple[Any, str, Any, str]],
    scan: int = SCAN,
) -> ErrorGroups:
    """The newest ``scan`` failures grouped: ``fetch(after, n)`` reads a page of at most
    ``n`` newest first after a keyset cursor (None: from the newest), ``cursor`` is a
    row's, ``failure`` a row's (id, error, time, label)."""
    grouper = Grouper()
    after: Any = None
    scanned = 0
    while True:
        limit = min(PAGE, scan - scanned)
        page = fetch(after, limit)
        scanned += len(page)
        for row in page:
            grouper.add(*failure(row))
        if len(page) < limit:
            complete = True
            break
        after = cursor(page[-1])
        if scanned >= scan:
            complete = not fetch(after, 1)
            break
    return grouper.result(scanned, complete)


COUNT_CAP = 100_000
"""Rows a failure count of ``qctl metrics`` reads at most where no index holds the failed
state: a bounded read in place of a scan of a table of millions."""


def bounded_counts(
    rows: Sequence[Mapping[str, Any]], cap: int = COUNT_CAP
) -> tuple[dict[str, int], bool]:
    """Counts per queue from a read of at most ``cap`` rows (each row: ``queue``, ``n``
    counted, ``read`` rows read), and whether the read stopped at the cap (the counts
    are then lower bounds)."""
    counts = {str(r["queue"]): int(r["n"]) for r in rows}
    return counts, sum(int(r["read"]) for r in rows) >= cap


_PLACEHOLDER = re.compile(r"'<str>'|\"<str>\"|<uuid>|<hex>|<n>|_<id>")


def literal(error: str) -> str:
    """The longest part of ``error``'s first line that no fold changes: a text filter
    (a substring) that finds the other failures of its group."""
    first = error.strip().splitlines()[0] if error.strip() else ""
    parts = _PLACEHOLDER.split(fingerprint(first))
    return max((p.strip() for p in parts), key=len, default="")
