"""Job verbs of azync (queue and event sources), with azync's manager guards.

azync's ``queue/manager.go`` acts on ``SourceQueue`` only and ``event/manager.go`` on
``SourceEvent`` only; DAG tasks are operated through ``dag/manager.go`` (which allows
``RunNow`` on a task) and workflow operations through ``workflow/manager.go``. The
driver's admin statements (``driver/azyncpgx/store_admin.go``) accept any source, so
these functions refuse what no manager would do before the store is called.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from qctl.core.bulk import SAMPLE
from qctl.core.errors import WrongState, WrongVerb, require_state
from qctl.systems.azync.ops.results import BulkOutcome, BulkPlan, JobOutcome
from qctl_store.errors import InvalidInput, NotFound, add_done
from qctl_store.types import EnqueueParams, Job, JobSearch, JobState, PageCursor, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore

JOB_SOURCES = (Source.QUEUE, Source.EVENT)
"""The sources azync's queue and event managers act on: what job verbs touch."""
PAGE = 500


def short(id: uuid.UUID | None) -> str:
    return str(id)[:8]


@dataclass(frozen=True)
class Verb:
    """A per-job verb: the states it accepts, the store call, and the verbs that own the
    job instead when it is a DAG task or a workflow job (``""``: allowed)."""

    action: str
    needs: tuple[JobState, ...]
    call: Callable[[ConsoleStore, Job], None]
    dag: str
    workflow: str


VERBS: dict[str, Verb] = {
    v.action: v
    for v in [
        Verb(
            "retry",
            (JobState.DEAD,),
            lambda s, j: s.retry_job(j.source, j.id),
            "dags retry",
            "workflows resolve",
        ),
        Verb(
            "run-now",
            (JobState.SCHEDULED,),
            lambda s, j: s.run_now(j.source, j.id),
            "",
            "workflows resume",
        ),
        Verb(
            "pause",
            (JobState.PENDING, JobState.SCHEDULED),
            lambda s, j: s.pause_job(j.source, j.id),
            "dags pause",
            "workflows suspend",
        ),
        Verb(
            "resume",
            (JobState.PAUSED,),
            lambda s, j: s.resume_job(j.source, j.id),
            "dags retry",
            "workflows resume",
        ),
        Verb(
            "archive",
            (JobState.PENDING, JobState.SCHEDULED),
            lambda s, j: s.archive_job(j.source, j.id),
            "dags cancel",
            "workflows cancel",
        ),
    ]
}


def owner_refusal(job: Job, action: str, dag_verb: str, workflow_verb: str) -> WrongVerb | None:
    """The refusal of ``action`` on ``job`` when a DAG or a workflow owns it."""
    if job.source == Source.DAG and dag_verb:
        return WrongVerb(
            f"job {short(job.id)} is task {job.task_key!r} of DAG {job.dag_id}: "
            f"jobs {action} does not act on DAG tasks; use `qctl {dag_verb} {job.dag_id}`"
        )
    if job.source == Source.WORKFLOW and workflow_verb:
        target = job.id if workflow_verb == "workflows resolve" else job.run_id
        return WrongVerb(
            f"job {short(job.id)} belongs to workflow execution {job.run_id}: "
            f"jobs {action} does not act on workflow jobs; use `qctl {workflow_verb} {target}`"
        )
    return None


def act(store: ConsoleStore, action: str, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    """``action`` (a key of ``VERBS``) on the job ``id``, after the guards; with
    ``dry_run`` only the guards."""
    verb = VERBS[action]
    job = store.find_job(id)
    refusal = owner_refusal(job, action, verb.dag, verb.workflow)
    if refusal is not None:
        raise refusal
    require_state(action, f"job {short(job.id)}", job.state, verb.needs, action)
    if not dry_run:
        verb.call(store, job)
    return JobOutcome(job.id, job.source, job.kind, action, job.state, dry_run)


def retry(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    return act(store, "retry", id, dry_run)


def run_now(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    return act(store, "run-now", id, dry_run)


def pause(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    return act(store, "pause", id, dry_run)


def resume(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    return act(store, "resume", id, dry_run)


def archive(store: ConsoleStore, id: uuid.UUID, dry_run: bool = False) -> JobOutcome:
    return act(store, "archive", id, dry_run)


def delete(
    store: ConsoleStore, id: uuid.UUID, state: JobState, dry_run: bool = False
) -> JobOutcome:
    """Delete the job ``id`` if it is in ``state`` (the operator says what they expect
    to delete, as azync's ``Manager.Delete`` takes the state); never an active job."""
    deletable(state)
    job = store.find_job(id)
    refusal = owner_refusal(job, "delete", "dags cancel", "workflows cancel")
    if refusal is not None:
        raise refusal
    if job.state != state:
        raise WrongState(
            "delete",
            f"job {short(job.id)} is {job.state}; delete --state {state} deletes only {state} jobs",
        )
    if not dry_run:
        store.delete_job(job.source, job.id, state)
    return JobOutcome(job.id, job.source, job.kind, "delete", job.state, dry_run)


def deletable(state: JobState) -> None:
    """Refuse deleting active jobs: a running job's row belongs to its worker, whose
    settlement would find it gone (azync's ``queue/manager.go`` Delete says the same)."""
    if state == JobState.ACTIVE:
        raise InvalidInput(
            "jobs delete does not delete active jobs: a running job's row belongs to its "
            "worker; delete it once it has settled"
        )


def enqueue(store: ConsoleStore, params: EnqueueParams) -> bool:
    """Enqueue a queue job; False when its idempotency key is taken (deduplicated)."""
    return store.enqueue(params)


# --- bulk verbs ------------------------------------------------------------------------


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


def retry_all_dead(
    store: ConsoleStore,
    source: Source | None = None,
    kind: str = "",
    meta: dict[str, str] | None = None,
    error: str = "",
    dry_run: bool = False,
) -> BulkOutcome:
    """Retry every dead job of the queue and event sources (or of ``source``), narrowed
    by kind, meta and error text (``act_all`` with those filters)."""
    search = JobSearch(source=source, kind=kind, meta=dict(meta or {}), error=error)
    return act_all(store, "retry", search, dry_run)


def delete_all(
    store: ConsoleStore,
    state: JobState,
    source: Source | None = None,
    kind: str = "",
    dry_run: bool = False,
) -> BulkOutcome:
    """Delete every job in ``state`` of the queue and event sources (or of ``source``)."""
    return act_all(store, "delete", JobSearch(source=source, kind=kind, state=state), dry_run)


DELETE_OWNERS = ("dags cancel ID", "workflows cancel ID")
"""The verbs that delete a DAG's tasks and a workflow's jobs instead of ``jobs delete``."""


def _owners(action: str) -> tuple[str, str]:
    """The DAG and workflow verbs that own ``action``'s jobs ("" where it may act)."""
    if action == "delete":
        return DELETE_OWNERS
    verb = VERBS[action]
    return verb.dag and f"{verb.dag} ID", verb.workflow and f"{verb.workflow} ID"


def bulk_searches(action: str, search: JobSearch) -> list[JobSearch]:
    """The searches, one per (source, state), that select the jobs ``action`` would act
    on among those matching ``search``: the states the verb accepts (``delete`` the one
    given), the queue and event sources unless a source, a DAG run or an execution is
    named; sources whose jobs another verb owns are refused with that verb."""
    if action == "delete":
        if search.state is None:
            raise InvalidInput("jobs delete needs the state of the jobs to delete")
        deletable(JobState(search.state))
        states: tuple[JobState, ...] = (JobState(search.state),)
    else:
        needs = VERBS[action].needs
        if search.state is not None and JobState(search.state) not in needs:
            raise InvalidInput(
                f"jobs {action} acts on {' or '.join(needs)} jobs, not {search.state} ones"
            )
        states = (JobState(search.state),) if search.state is not None else needs
    source = search.source
    if source is None and search.dag_id is not None:
        source = Source.DAG
    elif source is None and search.run_id is not None:
        source = Source.WORKFLOW
    dag_verb, workflow_verb = _owners(action)
    if source == Source.DAG and not dag_verb:
        sources = [Source.DAG]  # e.g. run-now, which azync's DAG manager allows on tasks
    else:
        sources = job_sources(source, action, dag_verb, workflow_verb)
    return [replace(search, source=s, state=st) for s in sources for st in states]


def _only_kind(search: JobSearch) -> bool:
    """Whether ``search`` narrows by source, kind and state only: what the store's own
    bulk statements (``retry_all_dead``, ``delete_all``) express."""
    return replace(search, source=None, kind="", state=None, reverse=False) == JobSearch()


def act_all(
    store: ConsoleStore,
    action: str,
    search: JobSearch,
    dry_run: bool = False,
    sample: int = SAMPLE,
) -> BulkOutcome:
    """``action`` (a key of ``VERBS``, or ``delete``) on every job matching ``search``
    that it may act on (see ``bulk_searches``). A dry run counts them exactly and
    returns the first ``sample`` as ``sample``. Filters the store's bulk statements
    cannot express act by id, page by page (keyset pages stay correct while acted-on
    rows leave the searched state); a job that changed meanwhile is skipped."""
    searches = bulk_searches(action, search)
    target = " or ".join(dict.fromkeys(str(s.state) for s in searches))
    if dry_run:
        count = sum(store.count_jobs(s, exact=True)[0] for s in searches)
        picked: list[JobOutcome] = []
        for s in searches:
            if len(picked) < sample:
                jobs = store.search_jobs(s, limit=sample - len(picked))
                picked += [JobOutcome(j.id, j.source, j.kind, action, j.state, True) for j in jobs]
        return BulkPlan(action, count, search.source, search.kind, target, True, tuple(picked))
    count = 0
    try:
        if _only_kind(search) and action in ("retry", "delete"):
            sources = dict.fromkeys(s.source for s in searches if s.source is not None)
            state = searches[0].state
            for src in sources:
                if action == "retry":
                    count += store.retry_all_dead(src, search.kind)
                else:
                    assert state is not None
                    count += store.delete_all(src, search.kind, state)
            return BulkOutcome(action, count, search.source, search.kind, target)
        for s in searches:
            for job in iter_jobs(store, s):
                with contextlib.suppress(NotFound):  # acted on or deleted meanwhile
                    if action == "delete":
                        store.delete_job(job.source, job.id, job.state)
                    else:
                        VERBS[action].call(store, job)
                    count += 1
    except BaseException as exc:  # what was done stays done: one transaction a job here
        add_done(exc, count, 0 if _only_kind(search) else count)
        raise
    return BulkOutcome(action, count, search.source, search.kind, target)


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
