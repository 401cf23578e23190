"""Reads both front-ends shape the same way: attempt history by lifetime, the check
that a name the operator typed exists, jobs grouped by their error, and what a listing no
index holds reads."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from qctl.core.errors import NoSuchName
from qctl.core.triage import SCAN, ErrorGroups, scan_groups
from qctl_store.types import AttemptError, JobSearch, JobState, Source

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


def error_groups(store: ConsoleStore, search: JobSearch, scan: int = SCAN) -> ErrorGroups:
    """The jobs ``search`` matches (dead ones, for error-first triage) grouped by the
    fingerprint of their last error (``qctl.core.triage``), labelled by kind, with
    counts: the newest ``scan`` jobs, read by keyset pages without payloads."""
    from qctl.systems.azync.ops.jobs import died_at

    search = replace(search, reverse=True)
    return scan_groups(
        lambda after, n: store.search_jobs(search, limit=n, after=after, payload=False),
        lambda job: store.job_cursor(job, search.state),
        lambda job: (job.id, job.last_error, died_at(job), job.kind),
        scan,
    )


def unindexed_read(state: JobState | None) -> str:
    """What a page of ``state`` reads when ``listing_scans`` says no index holds it: dead
    jobs are all read from azync's dead index, which holds them in enqueue order, and
    sorted by failure time; any other state reads the whole job table."""
    return "every dead job, sorted" if state == JobState.DEAD else "the whole job table"
