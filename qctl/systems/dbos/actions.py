"""Operator actions on a DBOS system database, once for the command line and the
dashboard.

Every workflow action goes through DBOS's own client library (``dbos.DBOSClient``,
``dbos/_client.py``), so its effect on the database is exactly DBOS's: cancel, resume
(optionally onto a queue), fork from a step (optionally on another application version),
rewind, delete, set a delay, pause/resume/trigger/backfill of schedules, and the latest
application version. qctl adds what an operator
needs around them: the target is looked up first (DBOS silently ignores an unknown id
or a state its statement skips, which would read as success), the verb's accepted
statuses are checked, and bulk forms skip and count what a verb does not apply to.

The one action DBOS lacks is garbage collection (``vacuum_workflows``): open-source DBOS
has no function that deletes old workflows, so it is qctl's SQL, deleting exactly the
rows ``SystemDatabase.delete_workflows`` deletes (``dbos/_sys_db.py``), in short batches
and only for finished workflows.

The client is given a serializer that never deserializes (``_verbatim_serializer``): what
DBOS's client would unpickle stays the stored text.

Refusals are the ones every system shares (``qctl.core.errors``). The records are DBOS's own
shape rather than azync's ``RunOutcome`` (``qctl.systems.azync.ops.results``): a DBOS
workflow id is any string (not a UUID), its field is ``status`` (DBOS's name), and a fork
has a new id to report.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qctl.core import bulk as core_bulk
from qctl.core.errors import NoSuchName, WrongState, require_state
from qctl.systems.dbos import INSTALL_HINT, reads
from qctl.systems.dbos.database import Database
from qctl_store.batches import BatchSize, SizedRun, sized_batches
from qctl_store.config import MAINTENANCE_BATCH_SECONDS
from qctl_store.errors import InvalidInput

if TYPE_CHECKING:
    from dbos import DBOSClient

BULK_CHUNK = 100
"""Ids per client call in a bulk action."""
VACUUM_BATCH = 500
"""Workflows deleted per vacuum transaction: keeps each transaction short."""


@dataclass(frozen=True)
class WorkflowOutcome:
    """One workflow acted on."""

    workflow_id: str
    name: str
    action: str
    status: str
    """The status when the action was decided."""
    dry_run: bool = False
    new_workflow_id: str | None = None
    """``fork``: the id of the new workflow."""


@dataclass(frozen=True)
class BulkOutcome:
    """A bulk action: what it acted on (or would), and what it skipped and why."""

    action: str
    acted: list[WorkflowOutcome]
    skipped: list[dict[str, str]] = field(default_factory=list)
    dry_run: bool = False

    @property
    def count(self) -> int:
        return len(self.acted)


@dataclass(frozen=True)
class Verb:
    action: str
    needs: tuple[str, ...]
    """Statuses it acts on (DBOS's statement skips the others)."""
    cannot: Mapping[str, str] = field(default_factory=dict)
    """Statuses it skips that an operator expects it to take: why, and what does it."""

    def skipped(self, statuses: Sequence[str]) -> str:
        """``; skipped N in another status`` for the ``statuses`` of the workflows it
        skipped, the ones of ``cannot`` counted apart with their reason ("" for none)."""
        said = [
            f"; skipped {n} in {status}: {why}"
            for status, why in self.cannot.items()
            if (n := statuses.count(status))
        ]
        other = sum(1 for s in statuses if s not in self.cannot)
        return (f"; skipped {other} in another status" if other else "") + "".join(said)


ANY = reads.STATUSES
RESUME_ERROR = (
    "DBOS cannot resume an ERROR workflow; `qctl workflows rewind` runs it again under its"
    " id from a step, `qctl workflows fork` as a new workflow"
)
VERBS = {
    v.action: v
    for v in [
        # DBOS's cancel_workflows leaves SUCCESS and ERROR alone; CANCELLED is already so.
        Verb("cancel", ("PENDING", "ENQUEUED", "DELAYED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")),
        # resume_workflows re-enqueues anything but SUCCESS and ERROR.
        Verb(
            "resume",
            ("CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED", "PENDING", "ENQUEUED", "DELAYED"),
            {"ERROR": RESUME_ERROR},
        ),
        # rewind_workflow: "Only a workflow in a terminal state can be rewound."
        Verb("rewind", reads.FINISHED),
        Verb("fork", ANY),
        Verb("delete", ANY),
        # set_workflow_delay: "Only affects DELAYED workflows."
        Verb("set-delay", ("DELAYED",)),
    ]
}


class Stored:
    """A value as the database holds it (base64 text), never decoded."""

    def __init__(self, text: str) -> None:
        self.text = text


def _verbatim_serializer() -> Any:
    from dbos import Serializer

    class VerbatimSerializer(Serializer):
        """DBOS's pickle serializer without the unpickling: what the client reads stays
        the stored text (``Stored``), and a value written back embeds that text as
        ``pickle.loads(<its bytes>)``, which the application unpickles to the very
        object it stored. qctl itself never runs a byte of it. Only schedule triggers
        and backfills write values (the schedule's context, inside the inputs)."""

        def serialize(self, data: Any) -> str:
            import base64
            import io
            import pickle

            class Pickler(pickle.Pickler):
                def reducer_override(self, obj: Any) -> Any:
                    if isinstance(obj, Stored):
                        return (pickle.loads, (base64.b64decode(obj.text),))
                    return NotImplemented

            buf = io.BytesIO()
            Pickler(buf).dump(data)
            return base64.b64encode(buf.getvalue()).decode()

        @classmethod
        def deserialize(cls, serialized_data: str) -> Any:
            return Stored(serialized_data)

        def name(self) -> str:
            return "py_pickle"

    return VerbatimSerializer()


@contextlib.contextmanager
def client(db: Database) -> Iterator[DBOSClient]:
    """A ``DBOSClient`` on the same database (it never migrates), closed afterwards."""
    db.execute("SELECT 1")  # the read-only refusal comes before any DBOS import
    import logging

    try:
        from dbos import DBOSClient
    except ImportError:
        raise InvalidInput(
            f"DBOS actions go through DBOS's client library: {INSTALL_HINT}"
        ) from None

    logging.getLogger("dbos").setLevel(logging.WARNING)
    c = DBOSClient(
        system_database_url=db.client_url,
        dbos_system_schema=db.schema or "dbos",
        serializer=_verbatim_serializer(),
        system_database_pool_size=2,
        retry_connection_errors=False,
    )
    try:
        with timeouts(db):
            yield c
    finally:
        c.destroy()


@contextlib.contextmanager
def timeouts(db: Database) -> Iterator[None]:
    """A client call PostgreSQL cancelled at a session limit as ``Timeout`` (exit 7)."""
    try:
        yield
    except Exception as exc:  # SQLAlchemy's, wrapping the driver's error
        timeout = db.timeout(exc)
        if timeout is None:
            raise
        raise timeout from None


def check(action: str, row: Mapping[str, Any]) -> None:
    """Refuse (WrongState, exit 3) ``action`` on a workflow in a status it does not take."""
    verb = VERBS[action]
    if row["status"] in verb.cannot:
        raise WrongState(
            action,
            f"workflow {row['workflow_id']} is {row['status']}; {verb.cannot[row['status']]}",
        )
    require_state(
        verb.action, f"workflow {row['workflow_id']}", row["status"], verb.needs, verb.action
    )


def _target(db: Database, workflow_id: str) -> reads.WorkflowRow:
    return reads.get_workflow(db, workflow_id, payloads=False)


def _one(
    db: Database,
    action: str,
    workflow_id: str,
    call: Callable[[DBOSClient, str], str | None],
    dry_run: bool,
) -> WorkflowOutcome:
    row = _target(db, workflow_id)
    check(action, row)
    outcome = WorkflowOutcome(row["workflow_id"], row["name"] or "", action, row["status"], dry_run)
    if dry_run:
        return outcome
    with client(db) as c:
        new_id = call(c, row["workflow_id"])
    if new_id:
        outcome = WorkflowOutcome(**{**outcome.__dict__, "new_workflow_id": new_id})
    return outcome


def check_step(start_step: int) -> None:
    if start_step < 1:
        raise InvalidInput(f"--from-step: {start_step} is not a step number (1 or more)")


def placement(
    db: Database,
    ids: Sequence[str],
    start_step: int,
    application_version: str | None,
    queue_name: str | None,
    queue_partition_key: str | None,
) -> dict[str, str | None]:
    """Checks of a fork or rewind before anything is written (InvalidInput, exit 2), and
    each workflow's ``queue_partition_key``. DBOS takes an unregistered version or a
    step past the last silently; onto a partitioned queue without a partition key the
    workflow stays ENQUEUED forever, and a rewind drops the original's key. So: the
    given key, else the original's; a partitioned queue with neither is refused."""
    check_step(start_step)
    if application_version is not None:
        known = [v["version_name"] for v in reads.list_application_versions(db)]
        if application_version not in known:
            raise InvalidInput(
                f"--application-version: no DBOS application version {application_version!r}"
                f" (registered: {', '.join(known) or 'none'})"
            )
    # An id with no row passes here: the action names it as missing (exit 3).
    facts: dict[str, reads.ForkFacts] = {
        i: {"queue_partition_key": None, "last_step": start_step} for i in ids
    }
    facts.update(reads.fork_facts(db, ids))
    past = [i for i in ids if start_step > facts[i]["last_step"] + 1]
    if past:
        last = facts[past[0]]["last_step"]
        raise InvalidInput(
            f"--from-step {start_step}: workflow {past[0]} has {last} step(s), so the last"
            f" step to start from is {last + 1}"
            + (f" ({len(past) - 1} more like it)" if len(past) > 1 else "")
        )
    partitioned = queue_name is not None and reads.queue_partitioned(db, queue_name)
    if queue_partition_key is not None and partitioned is False:
        queue = queue_name or "DBOS's internal queue (no --on-queue)"
        raise InvalidInput(f"--partition-key: {queue} is not partitioned")
    if queue_name is None:  # DBOS's internal queue, never partitioned
        return dict.fromkeys(ids)
    keys: dict[str, str | None] = {
        i: queue_partition_key or facts[i]["queue_partition_key"] for i in ids
    }
    missing = [i for i, k in keys.items() if k is None]
    if partitioned and missing:
        raise InvalidInput(
            f"queue {queue_name} is partitioned and workflow {missing[0]} has no partition"
            " key: give one with --partition-key"
        )
    return keys


def cancel(db: Database, workflow_id: str, dry_run: bool = False) -> WorkflowOutcome:
    """Cancel: DBOS marks it CANCELLED and takes it off its queue; a running workflow
    stops when it next starts a step."""
    return _one(db, "cancel", workflow_id, lambda c, i: c.cancel_workflow(i), dry_run)


def resume(
    db: Database, workflow_id: str, queue_name: str | None = None, dry_run: bool = False
) -> WorkflowOutcome:
    """Resume: re-enqueued (on ``queue_name``, else DBOS's internal queue) for an
    executor to run from its last completed step."""
    return _one(
        db,
        "resume",
        workflow_id,
        lambda c, i: c.resume_workflow(i, queue_name=queue_name).get_workflow_id() and None,
        dry_run,
    )


def fork(
    db: Database,
    workflow_id: str,
    start_step: int,
    application_version: str | None = None,
    queue_name: str | None = None,
    dry_run: bool = False,
    queue_partition_key: str | None = None,
    forked_workflow_id: str | None = None,
    timeout_seconds: float | None = None,
) -> WorkflowOutcome:
    """Fork: a new workflow with the original's inputs and the steps before
    ``start_step`` copied; the rest runs again. Without ``application_version`` the fork
    has none, and executors of the latest version run it (DBOS's dequeue).
    ``forked_workflow_id`` names the new workflow (``dbos workflow fork
    --forked-workflow-id``: DBOS's ``SetWorkflowID`` around the fork),
    ``timeout_seconds`` gives it a timeout from its start."""
    check_timeout(timeout_seconds)
    keys = placement(
        db, [workflow_id], start_step, application_version, queue_name, queue_partition_key
    )
    if forked_workflow_id is not None:
        if not forked_workflow_id:
            raise InvalidInput("--forked-workflow-id: empty")
        if db.one(
            "SELECT 1 AS x FROM {t}workflow_status WHERE workflow_uuid = %s", [forked_workflow_id]
        ):
            raise InvalidInput(f"--forked-workflow-id: workflow {forked_workflow_id} exists")

    def call(c: DBOSClient, i: str) -> str:
        from dbos import SetWorkflowID

        with (
            SetWorkflowID(forked_workflow_id)
            if forked_workflow_id is not None
            else contextlib.nullcontext()
        ):
            return c.fork_workflow(
                i,
                start_step,
                application_version=application_version,
                queue_name=queue_name,
                queue_partition_key=keys[i],
                timeout_seconds=timeout_seconds,
            ).get_workflow_id()

    return _one(db, "fork", workflow_id, call, dry_run)


def check_timeout(timeout_seconds: float | None) -> None:
    if timeout_seconds is not None and not timeout_seconds > 0:
        raise InvalidInput("--timeout: must be positive")


def rewind(
    db: Database,
    workflow_id: str,
    start_step: int = 1,
    application_version: str | None = None,
    queue_name: str | None = None,
    dry_run: bool = False,
    queue_partition_key: str | None = None,
) -> WorkflowOutcome:
    """Rewind a finished workflow to ``start_step`` under the same id: its history from
    that step on is dropped and it is re-enqueued (on its own application version unless
    ``application_version`` names another)."""
    keys = placement(
        db, [workflow_id], start_step, application_version, queue_name, queue_partition_key
    )
    return _one(
        db,
        "rewind",
        workflow_id,
        lambda c, i: (
            c.rewind_workflow(
                i,
                start_step=start_step,
                application_version=application_version,
                queue_name=queue_name,
                queue_partition_key=keys[i],
            ).get_workflow_id()
            and None
        ),
        dry_run,
    )


def delete(
    db: Database, workflow_id: str, delete_children: bool = False, dry_run: bool = False
) -> WorkflowOutcome:
    """Delete with its steps, inputs, outputs, events, messages and streams."""
    return _one(
        db,
        "delete",
        workflow_id,
        lambda c, i: c.delete_workflow(i, delete_children=delete_children),
        dry_run,
    )


def set_delay(
    db: Database, workflow_id: str, delay_until_epoch_ms: int, dry_run: bool = False
) -> WorkflowOutcome:
    """Move a DELAYED workflow's start to ``delay_until_epoch_ms``."""
    return _one(
        db,
        "set-delay",
        workflow_id,
        lambda c, i: c.set_workflow_delay(i, delay_until_epoch_ms=delay_until_epoch_ms),
        dry_run,
    )


BulkCall = Callable[..., list[str | None] | None]
"""A verb on a chunk of ids; a fork returns the new workflows' ids, in order."""


def _each(call: Callable[..., str | None]) -> BulkCall:
    """A bulk form of a DBOSClient call that takes one id (one statement per id)."""

    def run(c: DBOSClient, ids: list[str], **options: Any) -> list[str | None]:
        keys = options.pop("partition_keys", None)  # fork and rewind: each its own
        return [
            call(c, i, **options, **({"queue_partition_key": keys[i]} if keys else {})) for i in ids
        ]

    return run


BULK_CALLS: dict[str, BulkCall] = {
    "cancel": lambda c, ids: c.cancel_workflows(ids),
    # resume keeps the ids: its handles are no new workflows (fork's are).
    "resume": lambda c, ids, queue_name=None: (
        c.resume_workflows(ids, queue_name=queue_name) and None
    ),
    "delete": lambda c, ids: c.delete_workflows(ids),
    # DBOSClient has no bulk fork, rewind or delay: its one-workflow calls, id by id.
    "fork": _each(
        lambda c, i, start_step, **kw: c.fork_workflow(i, start_step, **kw).get_workflow_id()
    ),
    "rewind": _each(lambda c, i, **kw: c.rewind_workflow(i, **kw) and None),
    "set-delay": _each(lambda c, i, **kw: c.set_workflow_delay(i, **kw)),
}
"""Each bulk verb on a chunk of ids, with DBOSClient's parameter names as options."""
ONE_AT_A_TIME = frozenset({"fork", "rewind", "set-delay"})
"""The verbs DBOSClient takes one workflow at a time: their chunks are one id each, so a
failure part-way names the workflow it stopped at."""


def bulk(
    db: Database,
    action: str,
    targets: Sequence[Mapping[str, Any]],
    dry_run: bool = False,
    **options: Any,
) -> BulkOutcome:
    """``action`` on each of ``targets`` (rows with ``workflow_id``, ``name``,
    ``status``): those whose status the verb does not accept are skipped and listed."""
    verb = VERBS[action]
    if "start_step" in options:
        check_step(options["start_step"])
    acted: list[WorkflowOutcome] = []
    skipped: list[dict[str, str]] = []
    for row in targets:
        if row["status"] in verb.needs:
            acted.append(
                WorkflowOutcome(
                    row["workflow_id"], row["name"] or "", action, row["status"], dry_run
                )
            )
        else:
            skipped.append(
                {"workflow_id": row["workflow_id"], "status": row["status"], "reason": "status"}
            )
    if action in ("fork", "rewind") and acted:
        options["partition_keys"] = placement(
            db,
            [o.workflow_id for o in acted],
            options["start_step"],
            options.get("application_version"),
            options.get("queue_name"),
            options.pop("queue_partition_key", None),
        )
    if acted and not dry_run:
        acted = _call_in_chunks(db, action, acted, **options)
    return BulkOutcome(action, acted, skipped, dry_run)


def _call_in_chunks(
    db: Database, action: str, acted: list[WorkflowOutcome], **options: Any
) -> list[WorkflowOutcome]:
    """``BULK_CALLS[action]`` on ``acted``, a chunk per client call (one id per call for
    the verbs DBOSClient takes one at a time); a walk stopped part-way raises
    ``qctl.core.bulk.Stopped`` reporting workflow by workflow."""
    call = BULK_CALLS[action]
    size = 1 if action in ONE_AT_A_TIME else BULK_CHUNK
    chunks = [acted[i : i + size] for i in range(0, len(acted), size)]

    def run(c: DBOSClient, chunk: list[WorkflowOutcome]) -> list[WorkflowOutcome]:
        with timeouts(db):
            new_ids = call(c, [o.workflow_id for o in chunk], **options) or [None] * len(chunk)
        return [replace(o, new_workflow_id=n) for o, n in zip(chunk, new_ids, strict=True)]

    with client(db) as c:
        try:
            report = core_bulk.each(chunks, lambda chunk: run(c, chunk), _chunk_key)
        except core_bulk.Stopped as stop:
            done = [o for part in stop.report.done for o in part]
            after = chunks[len(stop.report.done) + 1 :]
            stop.report = core_bulk.Report(
                done=done,
                failed=stop.report.failed,
                not_tried=[o.workflow_id for part in after for o in part],
            )
            raise
    return [o for part in report.done for o in part]


def _chunk_key(chunk: list[WorkflowOutcome]) -> str:
    first = chunk[0].workflow_id
    return first if len(chunk) == 1 else f"{first} and {len(chunk) - 1} more (one call)"


def ids_targets(db: Database, ids: Sequence[str]) -> list[reads.Target]:
    """The rows of several ids typed by the operator (each must exist)."""
    rows: list[reads.Target] = []
    for text in ids:
        row = _target(db, reads.resolve_id(db, text))
        rows.append(
            {"workflow_id": row["workflow_id"], "name": row["name"], "status": row["status"]}
        )
    return rows


def unfinished_older_than(
    f: reads.WorkflowFilter, older_than_ms: int, now_ms: int | None = None
) -> reads.WorkflowFilter:
    """``f`` narrowed to what a global timeout cancels: workflows created more than
    ``older_than_ms`` ago that have not finished (the statuses ``cancel`` takes, unless
    ``f`` names statuses)."""
    if older_than_ms <= 0:
        raise InvalidInput("--older-than: must be positive")
    cutoff = (now_ms if now_ms is not None else int(time.time() * 1000)) - older_than_ms
    end = cutoff if f.end_time is None else min(f.end_time, cutoff)
    return replace(f, end_time=end, status=tuple(f.status) or VERBS["cancel"].needs)


def with_descendants(
    db: Database, targets: Sequence[reads.Target], max_targets: int
) -> list[reads.Target]:
    """``targets`` and every workflow they started, at any depth (what DBOSClient's
    ``cancel_children``/``delete_children`` reach), as the targets a bulk verb acts on:
    the dry run lists exactly the tree the real run acts on. Refused over
    ``max_targets``."""
    given = {t["workflow_id"] for t in targets}
    below = reads.descendants(db, list(given), max_targets - len(targets) + 1)
    return core_bulk.capped(
        [*targets, *(r for r in below if r["workflow_id"] not in given)],
        max_targets,
        "workflows (with their descendants)",
    )


def filter_targets(db: Database, f: reads.WorkflowFilter, limit: int) -> list[reads.Target]:
    """Every workflow matching ``f`` (newest first), at most ``limit``."""
    return reads.matching_ids(db, f, limit)


# --- schedules (DBOSClient) ----------------------------------------------------------


@dataclass(frozen=True)
class ScheduleOutcome:
    schedule_name: str
    action: str
    status: str
    dry_run: bool = False
    workflow_ids: list[str] = field(default_factory=list)
    """``trigger``/``backfill``: the workflows enqueued (DBOS's deterministic ids)."""
    already_run: list[str] = field(default_factory=list)
    """``backfill``: the window's slots that had a workflow already (not enqueued again)."""


def _pickled_context(db: Database, name: str) -> reads.Schedule:
    """The schedule, when its context is a pickle (DBOS's default serializer): a
    trigger re-embeds it verbatim, which an application with its own serializer could
    not read."""
    from qctl.systems.dbos.payload import PICKLE

    row = reads.get_schedule(db, name)
    context = row["context"]
    if context is None or context.serialization != PICKLE:
        raise InvalidInput(
            f"schedule {name}: its context is not a pickle, so the application uses its own "
            "serializer; trigger it from the application"
        )
    return row


def trigger_schedule(db: Database, name: str, dry_run: bool = False) -> ScheduleOutcome:
    """Enqueue the schedule's workflow now (``DBOSClient.trigger_schedule``)."""
    row = _pickled_context(db, name)
    if dry_run:
        return ScheduleOutcome(name, "trigger", row["status"], True)
    with client(db) as c:
        wf_id = c.trigger_schedule(name).get_workflow_id()
    return ScheduleOutcome(name, "trigger", row["status"], False, [wf_id])


def backfill_slots(row: reads.Schedule, start: datetime, end: datetime) -> list[str]:
    """The workflow ids of the schedule's slots strictly between ``start`` and ``end``,
    as ``backfill_schedule`` of ``dbos/_scheduler.py`` names them (cron read in the
    schedule's time zone, naive instants as UTC)."""
    from zoneinfo import ZoneInfo

    from croniter import croniter  # type: ignore[import-untyped]  # DBOS's dependency

    tz = ZoneInfo(row["cron_timezone"]) if row["cron_timezone"] else UTC
    start, end = (t if t.tzinfo else t.replace(tzinfo=UTC) for t in (start, end))
    it = croniter(row["schedule"], start.astimezone(tz), second_at_beginning=True)
    slots = []
    while (slot := it.get_next(datetime)) < end:
        slots.append(f"sched-{row['schedule_name']}-{slot.isoformat()}")
    return slots


def backfill_schedule(
    db: Database, name: str, start: datetime, end: datetime, dry_run: bool = False
) -> ScheduleOutcome:
    """Enqueue every execution the schedule would have run between ``start`` and ``end``
    (exclusive); DBOS's deterministic ids skip those that ran
    (``DBOSClient.backfill_schedule``, which returns every slot's id, enqueued or not: the
    slots that had a workflow are looked up first and reported apart)."""
    if end <= start:
        raise InvalidInput("--until must be after --since")
    row = _pickled_context(db, name)
    slots = backfill_slots(row, start, end)
    ran = set(reads.existing_ids(db, slots))
    outcome = ScheduleOutcome(
        name,
        "backfill",
        row["status"],
        dry_run,
        [i for i in slots if i not in ran],
        [i for i in slots if i in ran],
    )
    if not dry_run:
        with client(db) as c:
            c.backfill_schedule(name, start, end)
    return outcome


SCHEDULE_NEEDS = {"pause": "ACTIVE", "resume": "PAUSED"}
"""The status each schedule switch takes (DBOS's own calls change any row silently)."""


def _switch_schedule(db: Database, name: str, action: str, dry_run: bool) -> ScheduleOutcome:
    row = reads.get_schedule(db, name)
    require_state(action, f"schedule {name}", row["status"], (SCHEDULE_NEEDS[action],), action)
    if not dry_run:
        with client(db) as c:
            (c.pause_schedule if action == "pause" else c.resume_schedule)(name)
    return ScheduleOutcome(name, action, row["status"], dry_run)


def pause_schedule(db: Database, name: str, dry_run: bool = False) -> ScheduleOutcome:
    """Stop an ACTIVE schedule firing (``DBOSClient.pause_schedule``)."""
    return _switch_schedule(db, name, "pause", dry_run)


def resume_schedule(db: Database, name: str, dry_run: bool = False) -> ScheduleOutcome:
    """Let a PAUSED schedule fire again (``DBOSClient.resume_schedule``)."""
    return _switch_schedule(db, name, "resume", dry_run)


# --- application versions (DBOSClient) ----------------------------------------------


@dataclass(frozen=True)
class VersionOutcome:
    version_name: str
    action: str
    latest: str
    """The latest version when the action was decided."""
    dry_run: bool = False


def set_latest_version(
    db: Database, name: str, application_name: str | None = None, dry_run: bool = False
) -> VersionOutcome:
    """Make ``name`` the latest application version
    (``DBOSClient.set_latest_application_version``: its timestamp becomes now). DBOS's
    scheduler starts new runs on the latest version, and an executor of another version
    logs that it is not the latest. DBOS ignores an unknown name: it is looked up
    first. ``latest`` is the one the version's application saw as latest: its own
    versions and the unclaimed ones (``SystemDatabase._latest_application_version``)."""
    versions = reads.list_application_versions(db)
    row = next((v for v in versions if v["version_name"] == name), None)
    if row is None:
        known = ", ".join(v["version_name"] for v in versions) or "none"
        raise NoSuchName("set latest version", f"no DBOS application version {name!r} ({known})")
    owner = row["application_name"]
    if application_name and owner and owner != application_name:
        # DBOS refuses promoting a peer's version (version names are global).
        raise InvalidInput(
            f"version {name} belongs to application {owner!r}, not {application_name!r}"
        )
    owner = owner or application_name
    seen = [v for v in versions if not owner or v["application_name"] in (owner, None)]
    outcome = VersionOutcome(name, "set-latest", seen[0]["version_name"], dry_run)
    if not dry_run:
        with client(db) as c:
            c.set_latest_application_version(name, application_name=application_name)
    return outcome


# --- garbage collection (qctl's SQL: DBOS has none) ----------------------------------


UNFINISHED = tuple(s for s in reads.STATUSES if s not in reads.FINISHED)
"""PENDING, ENQUEUED, DELAYED: a workflow an executor will still run."""
KEPT_REASONS = {
    "unfinished_ancestor": "an ancestor is unfinished and may still wait for its result",
    "unfinished_descendant": "a descendant is unfinished and may still read its events or messages",
    "keep_last": "among the newest --keep-last of its name",
}
"""Why ``vacuum_workflows`` keeps a workflow old enough to go (the keys of ``kept``)."""
DRY_RUN_READ = 5000
"""Candidates a dry run reads at a time (it writes nothing, so holds no lock)."""
SQLITE_REST_SECONDS = 0.1
"""The least time a SQLite vacuum leaves the database unlocked between batches: longer
than the 100 ms a writer waiting in SQLite's default busy handler (DBOS sets
``busy_timeout``) sleeps between tries, so every waiting writer gets a turn."""


@dataclass(frozen=True)
class VacuumOutcome:
    action: str
    count: int
    """Workflows deleted (or, with ``dry_run``, that would be)."""
    batches: int
    older_than_ms: int
    status: list[str]
    dry_run: bool = False
    max_batch_seconds: float = 0.0
    keep_last: int = 0
    kept: dict[str, int] = field(default_factory=dict)
    """Workflows old enough but kept, per reason (``KEPT_REASONS``)."""
    analyzed: bool = False
    """PostgreSQL: the table's statistics were refreshed after the deletes."""


def _walk(db: Database, column: str, first: str, statuses: list[str], lock: str) -> Any:
    """A keyset walk over old candidates in ``column`` order (an index DBOS has), past
    those a batch kept: ``walk(cutoff, rows)`` returns the next ``rows`` (id, position)."""
    marks = ", ".join(["%s"] * len(statuses))
    last: list[Any] = []

    def walk(cutoff: int, rows: int) -> list[dict[str, Any]]:
        after = f" AND {column} >= %s AND ({column} > %s OR workflow_uuid > %s)" if last else ""
        params = [last[0], last[0], last[1]] if last else []
        found = db.all(
            f"SELECT workflow_uuid, {column} AS at FROM {{t}}workflow_status"
            f" WHERE status IN ({marks}) AND {first} {column} < %s{after}"
            f" ORDER BY {column}, workflow_uuid LIMIT %s{lock}",
            [*statuses, cutoff, *params, rows],
        )
        if found:
            last[:] = [found[-1]["at"], found[-1]["workflow_uuid"]]
        return found

    return walk


def _kept(db: Database, ids: list[str], protected: set[str]) -> dict[str, str]:
    """The reason (a ``KEPT_REASONS`` key) each of ``ids`` that must stay is kept for.

    A finished child of an unfinished workflow is kept: its parent reads its result
    (``getResult``) or events when it runs on, after a restart from the recorded steps
    too, and DBOS would wait forever for a deleted one. So is a finished workflow with an
    unfinished descendant, which may read its events or messages. DBOS records whose
    events a waiting workflow awaits only once it has them (the ``DBOS.getEvent``
    step), so a wait across unrelated workflows cannot be seen; across a tree it is
    kept. Both walks follow ``parent_workflow_id`` (DBOS's index on it, and the key)."""
    out = {i: "keep_last" for i in ids if i in protected}
    if not ids:
        return out
    marks = ", ".join(["%s"] * len(ids))
    live = ", ".join(f"'{s}'" for s in UNFINISHED)
    for reason, sql in (
        (
            "unfinished_ancestor",
            "WITH RECURSIVE up(id, anc) AS ("
            " SELECT workflow_uuid, parent_workflow_id FROM {t}workflow_status"
            f" WHERE workflow_uuid IN ({marks}) AND parent_workflow_id IS NOT NULL"
            " UNION SELECT up.id, p.parent_workflow_id FROM up"
            " JOIN {t}workflow_status p ON p.workflow_uuid = up.anc"
            " WHERE p.parent_workflow_id IS NOT NULL)"
            " SELECT DISTINCT up.id FROM up JOIN {t}workflow_status a"
            f" ON a.workflow_uuid = up.anc WHERE a.status IN ({live})",
        ),
        (
            "unfinished_descendant",
            "WITH RECURSIVE down(id, d) AS ("
            " SELECT parent_workflow_id, workflow_uuid FROM {t}workflow_status"
            f" WHERE parent_workflow_id IN ({marks})"
            " UNION SELECT down.id, c.workflow_uuid FROM down"
            " JOIN {t}workflow_status c ON c.parent_workflow_id = down.d)"
            " SELECT DISTINCT down.id FROM down JOIN {t}workflow_status x"
            f" ON x.workflow_uuid = down.d WHERE x.status IN ({live})",
        ),
    ):
        for row in db.all(sql, ids):
            out.setdefault(str(row["id"]), reason)
    return out


def _newest_of_each_name(db: Database, statuses: list[str], keep_last: int) -> set[str]:
    """The ``keep_last`` newest workflows of each name among ``statuses`` (by completion,
    then creation: DBOS on SQLite may record completions to the second): one pass over
    the history, before the first batch."""
    marks = ", ".join(["%s"] * len(statuses))
    rows = db.all(
        "SELECT workflow_uuid FROM (SELECT workflow_uuid, row_number() OVER (PARTITION BY"
        " name ORDER BY coalesce(completed_at, created_at) DESC, created_at DESC,"
        " workflow_uuid DESC) AS rn"
        f" FROM {{t}}workflow_status WHERE status IN ({marks})) newest WHERE rn <= %s",
        [*statuses, keep_last],
    )
    return {str(r["workflow_uuid"]) for r in rows}


def vacuum_workflows(
    db: Database,
    older_than_ms: int,
    status: Sequence[str] = reads.FINISHED,
    batch: int = VACUUM_BATCH,
    dry_run: bool = False,
    now_ms: int | None = None,
    keep_last: int = 0,
) -> VacuumOutcome:
    """Delete finished workflows that completed (or, for rows DBOS wrote without
    ``completed_at``, were created) more than ``older_than_ms`` ago, with their
    steps, inputs, outputs, events, messages and streams, at most ``batch`` per
    transaction (fewer while transactions run long: ``qctl_store.batches.BatchSize``).

    Only ``reads.FINISHED`` statuses may be named: a PENDING, ENQUEUED or DELAYED
    workflow is never deleted, and the status is re-checked inside each delete so a
    workflow resumed meanwhile survives. Kept too, and counted per reason in ``kept``:
    a workflow in a tree with an unfinished ancestor or descendant (``_kept``), and with
    ``keep_last`` the newest ``keep_last`` of each name.

    On SQLite the database is left unlocked between batches for as long as a batch held
    it (at least ``SQLITE_REST_SECONDS``), so the application's writers, which queue on
    the same lock, keep running. On PostgreSQL the table is analyzed after the deletes,
    so the planner's row count (and the SUCCESS estimate of ``reads.status_counts``)
    follows them."""
    bad = [s for s in status if s not in reads.FINISHED]
    if bad:
        raise InvalidInput(
            f"--status: {bad[0]} workflows are not finished; vacuum deletes only "
            + ", ".join(reads.FINISHED)
        )
    if older_than_ms <= 0:
        raise InvalidInput("--older-than: must be positive")
    if keep_last < 0:
        raise InvalidInput("--keep-last: must not be negative")
    cutoff = (now_ms if now_ms is not None else int(time.time() * 1000)) - older_than_ms
    statuses = list(status) or list(reads.FINISHED)
    protected = _newest_of_each_name(db, statuses, keep_last) if keep_last else set()
    # Locked as selected: a resume racing the batch waits for it (and then finds
    # nothing), and a row being changed right now is left for a later run. SQLite's
    # BEGIN IMMEDIATE already excludes every other writer.
    lock = " FOR UPDATE SKIP LOCKED" if db.postgres and not dry_run else ""
    # Two walks, each over an index DBOS has, so a batch reads only what it deletes:
    # completed_at (idx_workflow_status_completed_at) for what DBOS 3.x finished, and
    # created_at for rows an older DBOS finished without recording completed_at.
    walks = [
        _walk(db, "completed_at", "", statuses, lock),
        _walk(db, "created_at", "completed_at IS NULL AND", statuses, lock),
    ]
    kept: dict[str, int] = {}
    deleted = 0

    def take(walk: Any, rows: int) -> int:
        nonlocal deleted
        ids = [str(r["workflow_uuid"]) for r in walk(cutoff, rows)]
        reasons = _kept(db, ids, protected)
        for reason in reasons.values():
            kept[reason] = kept.get(reason, 0) + 1
        doomed = [i for i in ids if i not in reasons]
        if doomed and not dry_run:
            _delete_rows(db, doomed)
        deleted += len(doomed)
        return len(ids)

    def record(**fields: Any) -> VacuumOutcome:
        return VacuumOutcome(
            "vacuum", older_than_ms=older_than_ms, status=statuses, keep_last=keep_last, **fields
        )

    if dry_run:
        for walk in walks:
            while take(walk, DRY_RUN_READ) == DRY_RUN_READ:
                pass
        return record(count=deleted, batches=0, dry_run=True, kept=kept)

    def rest(took: float) -> None:
        time.sleep(SQLITE_REST_SECONDS)

    size = BatchSize(batch, MAINTENANCE_BATCH_SECONDS)

    def batches(walk: Any) -> SizedRun:
        return sized_batches(
            size,
            db.transaction,
            lambda _tx, rows: take(walk, rows),
            rest=None if db.postgres else rest,
        )

    runs = [batches(walk) for walk in walks]
    return record(
        count=deleted,
        batches=sum(r.batches for r in runs),
        max_batch_seconds=max(r.slowest for r in runs),
        kept=kept,
        analyzed=bool(deleted) and _analyze(db),
    )


def _analyze(db: Database) -> bool:
    """PostgreSQL: refresh ``workflow_status``'s statistics after a vacuum shrank it (its
    ``reltuples`` is the SUCCESS estimate, and autovacuum's ANALYZE comes only after a
    tenth of the table changed). False when the role may not (a table it does not own)."""
    if not db.postgres:
        return False  # qctl's SQLite counts are exact
    import psycopg

    try:
        db.execute("ANALYZE {t}workflow_status")
    except psycopg.errors.InsufficientPrivilege:
        return False
    return True


def _delete_rows(db: Database, ids: list[str]) -> None:
    """The rows ``SystemDatabase._delete_workflows`` deletes: the payload tables (no
    foreign key), then the status rows, whose delete cascades to notifications,
    workflow_events, workflow_events_history and streams."""
    marks = ", ".join(["%s"] * len(ids))
    for table in ("workflow_input", "workflow_output", "operation_outputs", "workflow_status"):
        db.execute(f"DELETE FROM {{t}}{table} WHERE workflow_uuid IN ({marks})", ids)
