"""Reads both front-ends shape the same way: attempt history by lifetime, the check
that a name the operator typed exists, jobs grouped by their error, and what a listing no
index holds reads."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName
from qctl_store.types import AttemptError, Job, JobSearch, JobState, PageCursor, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore


@dataclass(frozen=True)
class Attempt:
    """One failed attempt of a job, in time order. ``lifetime`` counts from 1 and grows
    each time the job was retried (its attempt counter starts again)."""

    lifetime: int
    attempt: int
    at: datetime
    error: str


def attempt_history(attempts: list[AttemptError]) -> list[Attempt]:
    """``job_attempts`` in time order, grouped by lifetime: a retried job numbers its
    attempts from 1 again, so an attempt number that does not grow starts a lifetime."""
    out: list[Attempt] = []
    lifetime, last = 1, 0
    for a in sorted(attempts, key=lambda a: (a.at, a.attempt)):
        if out and a.attempt <= last:
            lifetime += 1
        last = a.attempt
        out.append(Attempt(lifetime, a.attempt, a.at, a.error))
    return out


def require_kind(store: ConsoleStore, kind: str, sources: list[Source]) -> None:
    """Refuse a kind that no job of ``sources`` has (a typo must not read as an empty
    result); name the sources that do have it."""
    missing = missing_kind(store, kind, sources)
    if missing:
        raise NoSuchName("kind", missing)


def missing_kind(store: ConsoleStore, kind: str, sources: list[Source]) -> str:
    """ "no kind named X" (and the sources that have it) when no job or daily stats row
    of ``sources`` has ``kind``; "" when one does. Reads every source's kinds: ask it
    only of an empty result."""
    if any(kind in store.list_kinds(s) for s in sources):
        return ""
    elsewhere = [s for s in Source if s not in sources and kind in store.list_kinds(s)]
    where = "" if len(sources) == len(Source) else f" in source {', '.join(sources)}"
    hint = (
        f" (it is a {' and '.join(elsewhere)} kind: --source {elsewhere[0]})" if elsewhere else ""
    )
    return f"no kind named {kind!r}{where}{hint}"


def free_text(store: ConsoleStore, search: JobSearch) -> tuple[JobSearch, str]:
    """The dashboard's ``/`` word (in ``search.kind``) when no job has that kind: the one
    kind that contains it (any case, and the search stays on the kind's index), else free
    text (a job whose kind, last error or id contains it); and a note when several kinds
    contain it. Reads the kinds: call it only when the kind found nothing."""
    word = search.kind
    sources = [search.source] if search.source else list(Source)
    kinds = sorted({k for s in sources for k in store.list_kinds(s)})
    if not word or word in kinds:
        return search, ""
    near = [k for k in kinds if word.lower() in k.lower()]
    if len(near) == 1:
        return replace(search, kind=near[0]), ""
    by_text = replace(search, kind="", text=word)
    if near:
        shown = ", ".join(near[:4]) + (", ..." if len(near) > 4 else "")
        return by_text, f"{word!r} is part of {len(near)} kinds ({shown}): all of them shown"
    return by_text, ""


ERROR_SCAN = 10_000
"""Jobs ``error_groups`` reads at most, newest first: enough to rank the errors of an
incident, bounded on a table of millions (``ErrorGroups.complete`` says when it cut)."""
ERROR_PAGE = 1_000


@dataclass
class ErrorGroup:
    """The jobs whose last error is ``error`` (whitespace collapsed)."""

    error: str
    text: str = ""
    """The last error of one job of the group as stored (line breaks kept)."""
    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    """Jobs of the group per kind."""
    last_failed: datetime | None = None
    newest: uuid.UUID | None = None
    """The job of the group that failed last (a sample to open)."""


@dataclass(frozen=True)
class ErrorGroups:
    groups: list[ErrorGroup]
    """Largest first, then the most recent failure."""
    scanned: int
    complete: bool
    """Every matching job was read (else the newest ``ERROR_SCAN``)."""


def error_groups(store: ConsoleStore, search: JobSearch, scan: int = ERROR_SCAN) -> ErrorGroups:
    """The jobs ``search`` matches (dead ones, for error-first triage) grouped by their
    last error, with counts: the newest ``scan`` jobs, read by keyset pages without
    payloads."""
    from qctl.systems.azync.ops.jobs import died_at

    search = replace(search, reverse=True)
    groups: dict[str, ErrorGroup] = {}
    after: PageCursor | None = None
    scanned = 0
    while True:
        limit = min(ERROR_PAGE, scan - scanned)
        page: list[Job] = store.search_jobs(search, limit=limit, after=after, payload=False)
        scanned += len(page)
        for job in page:
            error = " ".join(job.last_error.split())
            group = groups.setdefault(error, ErrorGroup(error, job.last_error))
            group.count += 1
            group.kinds[job.kind] += 1
            failed = died_at(job)
            if group.last_failed is None or (failed and failed > group.last_failed):
                group.last_failed, group.newest = failed, job.id
        if len(page) < limit:
            complete = True
            break
        after = store.job_cursor(page[-1], search.state)
        if scanned >= scan:
            complete = not store.search_jobs(search, limit=1, after=after, payload=False)
            break
    ranked = sorted(
        groups.values(),
        key=lambda g: (-g.count, -(g.last_failed.timestamp() if g.last_failed else 0), g.error),
    )
    return ErrorGroups(ranked, scanned, complete)


def unindexed_read(state: JobState | None) -> str:
    """What a page of ``state`` reads when ``listing_scans`` says no index holds it: dead
    jobs are all read from azync's dead index, which holds them in enqueue order, and
    sorted by failure time; any other state reads the whole job table."""
    return "every dead job, sorted" if state == JobState.DEAD else "the whole job table"
