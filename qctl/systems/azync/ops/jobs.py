"""Job verbs of azync (queue and event sources), with azync's manager guards.

azync's ``queue/manager.go`` acts on ``SourceQueue`` only and ``event/manager.go`` on
``SourceEvent`` only; DAG tasks are operated through ``dag/manager.go`` (which allows
``RunNow`` on a task) and workflow operations through ``workflow/manager.go``. The
driver's admin statements (``driver/azyncpgx/store_admin.go``) accept any source.

The verbs (``VERBS``) are declarations the verb engine (``qctl.core.verbs``) runs in
batches, from the command line and the dashboard alike: each batch is one of the
store's set-based statements (``retry_jobs``, ...), which re-checks every job's source
and state in its ``WHERE``, so a job a worker leased or an operator moved since the plan
is left alone and counted under its state. A DAG task or workflow job is seen in the
state "dag task" or "workflow job", which the verb passes over with the verb that owns
it ("dag task: use dags retry").
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

from qctl.core.errors import WrongVerb
from qctl.core.verbs import Target, Verb, Written
from qctl.systems.azync.ops.results import BulkOutcome
from qctl_kit.errors import InvalidInput, add_done
from qctl_kit.values import PageCursor
from qctl_store.types import KIND_SLEEP, EnqueueParams, Job, JobSearch, JobState, JobTarget, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

JOB_SOURCES = (Source.QUEUE, Source.EVENT)
"""The sources azync's queue and event managers act on: what job verbs touch."""
PAGE = 500
DAG_TASK = "dag task"
WORKFLOW_JOB = "workflow job"
DAG_TIMER = "dag timer"
"""The states a job verb sees a DAG task, a workflow job and a DAG's ``$sleep`` timer
in (``Owners.state``): each passed over under the verb that owns it."""


@dataclass(frozen=True)
class Owners:
    """The verbs that own a job verb's DAG tasks and workflow jobs instead of it (azync's
    ``dag/manager.go`` and ``workflow/manager.go``); ``dag`` "": the verb acts on DAG
    tasks too (``RunNow``), but for a ``$sleep`` timer."""

    dag: str
    workflow: str

    def state(self, t: JobTarget) -> str:
        """The state a verb sees: the job's own, or the word of the owner that takes it."""
        if t.source == Source.DAG:
            if self.dag:
                return DAG_TASK
            if t.kind == KIND_SLEEP:
                return DAG_TIMER
        elif t.source == Source.WORKFLOW:
            return WORKFLOW_JOB
        return t.state

    def reasons(self) -> dict[str, str]:
        reasons = {
            WORKFLOW_JOB: f"{WORKFLOW_JOB}: use {self.workflow}",
            JobState.ACTIVE.value: "active: a worker holds it",
        }
        if self.dag:
            reasons[DAG_TASK] = f"{DAG_TASK}: use {self.dag}"
        else:  # a pending timer is never run: it completes from scheduled only
            reasons[DAG_TIMER] = f"{DAG_TIMER}: use dags signal"
        return reasons

    def sources(self) -> tuple[Source, ...]:
        return JOB_SOURCES if self.dag else (*JOB_SOURCES, Source.DAG)


def job_filter(search: JobSearch) -> dict[str, Any]:
    """A ``JobSearch`` as a verb's filter (``Selection.filter``), in JSON values for the
    plan file and the audit record; its state as ``states``."""
    return {
        "source": search.source.value if search.source else None,
        "kind": search.kind,
        "states": [search.state.value] if search.state else None,
        "meta": dict(search.meta),
        "error": search.error,
        "text": search.text,
        "payload": search.payload,
        "older_than": search.older_than.total_seconds() if search.older_than else None,
        "event": str(search.event_id) if search.event_id else None,
        "dag": str(search.dag_id) if search.dag_id else None,
        "run": str(search.run_id) if search.run_id else None,
    }


def _search(where: Mapping[str, Any]) -> JobSearch:
    def ident(key: str) -> uuid.UUID | None:
        return uuid.UUID(where[key]) if where.get(key) else None

    older = where.get("older_than")
    return JobSearch(
        source=Source(where["source"]) if where.get("source") else None,
        kind=where.get("kind") or "",
        meta=dict(where.get("meta") or {}),
        error=where.get("error") or "",
        text=where.get("text") or "",
        payload=where.get("payload"),
        older_than=timedelta(seconds=older) if older is not None else None,
        event_id=ident("event"),
        dag_id=ident("dag"),
        run_id=ident("run"),
    )


def _page(
    owners: Owners, store: ConsoleStore, where: Mapping[str, Any], after: str | None, n: int
) -> list[Target]:
    states = [JobState(s) for s in where["states"]]
    rows = store.job_targets(_search(where), states, uuid.UUID(after) if after else None, n)
    return [Target(str(t.id), owners.state(t), t.kind) for t in rows]


def _lookup(owners: Owners, store: ConsoleStore, ids: Sequence[str]) -> list[Target]:
    rows = store.job_targets_of([uuid.UUID(i) for i in ids])
    return [Target(str(t.id), owners.state(t), t.kind) for t in rows]


def _write(
    statement: str, sources: tuple[Source, ...], store: ConsoleStore, ids: list[str]
) -> Written:
    """One batch through the store's set-based statement ``statement`` (``retry_jobs``)."""
    done = getattr(store, statement)([uuid.UUID(i) for i in ids], sources)
    return Written([str(i) for i in done])


def _delete(states: tuple[str, ...], store: ConsoleStore, ids: list[str]) -> Written:
    """One batch of ``jobs delete``: the store's statement passes over a job another
    session holds (a worker leasing it) rather than wait; one still in a state the verb
    takes is refused under that reason."""
    batch = [uuid.UUID(i) for i in ids]
    done = {str(i) for i in store.delete_jobs(batch, JOB_SOURCES, [JobState(s) for s in states])}
    missed = [i for i in batch if str(i) not in done]
    found = store.job_targets_of(missed) if missed else []
    held = [t for t in found if t.source in JOB_SOURCES and t.state in states]
    return Written(
        [i for i in ids if i in done], {str(t.id): "held by another session" for t in held}
    )


def _declare(
    name: str,
    past: str,
    accepts: tuple[str, ...],
    effect: str,
    owners: Owners,
    write: Callable[[ConsoleStore, list[str]], Written] | None = None,
) -> Verb[ConsoleStore]:
    statement = f"{name.replace('-', '_')}_jobs"
    return Verb(
        system="azync",
        noun="jobs",
        name=name,
        past=past,
        accepts=accepts,
        effect=effect,
        page=partial(_page, owners),
        lookup=partial(_lookup, owners),
        write=write or partial(_write, statement, owners.sources()),
        reasons=owners.reasons(),
    )


RETRY = _declare(
    "retry",
    "retried",
    ("dead",),
    "reset to pending now (attempt and reap counts, error and failure time cleared)",
    Owners("dags retry", "workflows resolve"),
)
"""``jobs retry``: azync's ``RetryJob`` (``driver/azyncpgx/store_admin.go``)."""
RUN_NOW = _declare(
    "run-now",
    "expedited",
    ("scheduled",),
    "make due now (pending) and wake their workers",
    Owners("", "workflows resume"),
)
"""``jobs run-now``: ``RunNow``, on DAG tasks too (as azync's DAG manager allows)."""
PAUSE = _declare(
    "pause",
    "paused",
    ("pending", "scheduled"),
    "pause (held out of the ready set)",
    Owners("dags pause", "workflows suspend"),
)
"""``jobs pause``: ``PauseJob``."""
RESUME = _declare(
    "resume",
    "resumed",
    ("paused",),
    "resume (pending, or scheduled while their run_at is ahead)",
    Owners("dags retry", "workflows resume"),
)
"""``jobs resume``: ``ResumeJob``."""
ARCHIVE = _declare(
    "archive",
    "archived",
    ("pending", "scheduled"),
    "move to dead without running them",
    Owners("dags cancel", "workflows cancel"),
)
"""``jobs archive``: ``ArchiveJob``."""
SETTLED = ("dead", "succeeded", "cancelled", "skipped")
"""What ``jobs delete`` deletes unless told a state: jobs no worker or timer moves on."""
DELETE = _declare(
    "delete",
    "deleted",
    SETTLED,
    "delete (their attempt rows with them)",
    Owners("dags cancel", "workflows cancel"),
    partial(_delete, SETTLED),
)
"""``jobs delete``: ``DeleteJob``, a job deleted only in a state the operator named
(azync's ``Manager.Delete`` takes it), by default a settled one (``deleting``)."""

VERBS = (RETRY, RUN_NOW, PAUSE, RESUME, ARCHIVE, DELETE)


def deleting(states: Sequence[JobState]) -> Verb[ConsoleStore]:
    """``jobs delete`` of jobs in ``states`` only; never an active job: a running job's
    row belongs to its worker, whose settlement would find it gone (azync's
    ``queue/manager.go`` Delete says the same)."""
    if JobState.ACTIVE in states:
        raise InvalidInput(
            "jobs delete does not delete active jobs: a running job's row belongs to its "
            "worker; delete it once it has settled"
        )
    taken = tuple(dict.fromkeys(JobState(s).value for s in states))
    return replace(DELETE, accepts=taken, write=partial(_delete, taken))


def enqueue(store: ConsoleStore, params: EnqueueParams) -> bool:
    """Enqueue a queue job; False when its idempotency key is taken (deduplicated)."""
    return store.enqueue(params)


def job_sources(
    source: Source | None, action: str, dag_verb: str, workflow_verb: str
) -> list[Source]:
    """The sources a bulk job verb covers: the one given, or the queue and event
    sources; DAG and workflow sources are refused with the verb that owns them."""
    if source is None:
        return list(JOB_SOURCES)
    if source == Source.DAG:
        return _refuse_source(action, source, dag_verb)
    if source == Source.WORKFLOW:
        return _refuse_source(action, source, workflow_verb)
    return [source]


def _refuse_source(action: str, source: Source, verb: str) -> list[Source]:
    raise WrongVerb(f"jobs {action} does not act on {source} jobs; use `qctl {verb}`")


def iter_jobs(store: ConsoleStore, search: JobSearch) -> Iterator[Job]:
    """Every matching job, page by page (keyset, so concurrent writes do not repeat rows)."""
    after: PageCursor | None = None
    while True:
        page = store.search_jobs(search, limit=PAGE, after=after)
        yield from page
        if len(page) < PAGE:
            return
        after = store.job_cursor(page[-1], search.state)


def died_at(job: Job) -> datetime | None:
    """When a dead job died: ``failed_at``, or its enqueue time when that is unknown."""
    return job.failed_at or job.enqueued_at


def count_dead(store: ConsoleStore, source: Source, kind: str, older_than: timedelta) -> int:
    """How many dead jobs of ``source`` died longer ago than ``older_than`` (on this
    host's clock): what ``vacuum_dead`` deletes."""
    cutoff = datetime.now(UTC) - older_than
    search = JobSearch(source=source, kind=kind, state=JobState.DEAD)
    return sum(1 for j in iter_jobs(store, search) if (died_at(j) or cutoff) < cutoff)


def vacuum_dead(
    store: ConsoleStore,
    older_than: timedelta,
    source: Source | None = None,
    kind: str = "",
    dry_run: bool = False,
    count: bool = True,
) -> BulkOutcome:
    """Delete dead jobs of the queue and event sources (or of ``source``) that died
    longer ago than ``older_than``. DAG tasks go with their run (``vacuum dags``). A dry
    run counts (a scan) unless ``count`` is false: then it only applies the guards."""
    sources = job_sources(source, "vacuum-dead", "vacuum dags", "vacuum workflows")
    if dry_run:
        matched = sum(count_dead(store, s, kind, older_than) for s in sources) if count else None
        return BulkOutcome("vacuum-dead", matched, source, kind, "dead", dry_run=True)
    removed = 0
    try:
        for s in sources:
            removed += store.vacuum_dead(s, kind, older_than)
    except BaseException as exc:  # the sources finished before stay done
        add_done(exc, removed)
        raise
    return BulkOutcome("vacuum-dead", removed, source, kind, "dead")
