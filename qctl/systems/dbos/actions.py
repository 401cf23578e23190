"""Operator actions on a DBOS system database, once for the command line and the
dashboard.

Every workflow action goes through DBOS's own client library (``dbos.DBOSClient``,
``dbos/_client.py``), so its effect on the database is exactly DBOS's: cancel, resume
(optionally onto a queue), fork from a step (optionally on another application version),
rewind, delete, set a delay, pause/resume/trigger/backfill of schedules, and the latest
application version.

The workflow verbs are declarations the verb engine (``qctl.core.verbs``) runs in
batches, from the command line and the dashboard alike. DBOS silently ignores an unknown
id or a status its statement skips, which would read as success, so each batch reads
its workflows' statuses just before the client's call and hands the client only those
the verb takes; DBOS's own statement re-checks the status in its ``WHERE`` (cancel and
resume leave SUCCESS and ERROR alone, rewind refuses an active workflow, a delay moves
only a DELAYED one), and a read after the call counts as done only the workflows the
call changed. One that finished in between is left alone and counted under its reason.

The one action DBOS lacks is garbage collection (``vacuum_workflows``): open-source DBOS
has no function that deletes old workflows, so it is qctl's SQL, deleting exactly the
rows ``SystemDatabase.delete_workflows`` deletes (``dbos/_sys_db.py``), in short batches
and only for finished workflows.

The client is given a serializer that never deserializes (``_verbatim_serializer``): what
DBOS's client would unpickle stays the stored text.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from qctl.core.errors import NoSuchName, require_state
from qctl.core.verbs import Selection, Target, Verb, Written
from qctl.systems.dbos import INSTALL_HINT, reads
from qctl.systems.dbos.database import Database, marks
from qctl_kit.batches import BatchSize, SizedRun, sized_batches
from qctl_kit.config import MAINTENANCE_BATCH_SECONDS
from qctl_kit.errors import InvalidInput

if TYPE_CHECKING:
    from dbos import DBOSClient

VACUUM_BATCH = 500
"""Workflows deleted per vacuum transaction: keeps each transaction short."""


@dataclass(frozen=True)
class WorkflowOutcome:
    """One workflow forked (``fork``: the one verb that makes a new workflow)."""

    workflow_id: str
    name: str
    action: str
    status: str
    """The status when the action was decided."""
    dry_run: bool = False
    new_workflow_id: str | None = None
    """The id of the new workflow."""


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


def _open_client(db: Database) -> DBOSClient:
    """A ``DBOSClient`` on the same database (it never migrates)."""
    db.execute(db.queries("actions.sql").writable)  # refused read-only before DBOS's import
    import logging

    try:
        from dbos import DBOSClient
    except ImportError:
        raise InvalidInput(
            f"DBOS actions go through DBOS's client library: {INSTALL_HINT}"
        ) from None

    logging.getLogger("dbos").setLevel(logging.WARNING)
    return DBOSClient(
        system_database_url=db.client_url,
        dbos_system_schema=db.schema or "dbos",
        serializer=_verbatim_serializer(),
        system_database_pool_size=2,
        retry_connection_errors=False,
    )


@contextlib.contextmanager
def client(db: Database) -> Iterator[DBOSClient]:
    """A ``DBOSClient`` for one action, closed afterwards."""
    c = _open_client(db)
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


def shared_client(db: Database) -> DBOSClient:
    """The one ``DBOSClient`` every batch of a verb's run uses (making one opens a
    connection pool), closed with ``db``."""
    if db.dbos_client is None:
        db.dbos_client = _open_client(db)
    return db.dbos_client


def check_step(start_step: int) -> None:
    if start_step < 1:
        raise InvalidInput(f"--from-step: {start_step} is not a step number (1 or more)")


def check_timeout(timeout_seconds: float | None) -> None:
    if timeout_seconds is not None and not timeout_seconds > 0:
        raise InvalidInput("--timeout: must be positive")


def check_placement(
    db: Database,
    start_step: int,
    application_version: str | None,
    queue_name: str | None,
    queue_partition_key: str | None,
) -> None:
    """The checks of a fork or rewind that hold for every workflow (InvalidInput, exit
    2), before anything is written: DBOS takes an unregistered version silently, and a
    partition key on a queue without partitions."""
    check_step(start_step)
    if application_version is not None:
        known = [v["version_name"] for v in reads.list_application_versions(db)]
        if application_version not in known:
            raise InvalidInput(
                f"--application-version: no DBOS application version {application_version!r}"
                f" (registered: {', '.join(known) or 'none'})"
            )
    if queue_partition_key is not None and not (
        queue_name is not None and reads.queue_partitioned(db, queue_name) is not False
    ):
        queue = queue_name or "DBOS's internal queue (no --on-queue)"
        raise InvalidInput(f"--partition-key: {queue} is not partitioned")


def placements(
    db: Database,
    ids: Sequence[str],
    start_step: int,
    queue_name: str | None,
    queue_partition_key: str | None,
) -> tuple[dict[str, str | None], dict[str, str]]:
    """Each workflow's ``queue_partition_key`` for a fork or rewind (the given key, else
    its own), and why those that cannot go are refused: DBOS takes a step past the last
    silently, a workflow put on a partitioned queue without a key stays ENQUEUED
    forever, and a rewind drops the original's key. An id with no row gets None (the
    verb finds it gone)."""
    facts = reads.fork_facts(db, ids)
    partitioned = queue_name is not None and reads.queue_partitioned(db, queue_name)
    keys: dict[str, str | None] = {}
    refused: dict[str, str] = {}
    for i in ids:
        fact = facts.get(i)
        if fact is None:
            keys[i] = None
            continue
        last = fact["last_step"]
        key = None if queue_name is None else queue_partition_key or fact["queue_partition_key"]
        keys[i] = key
        if start_step > last + 1:
            refused[i] = f"has {last} step(s), so the last step to start from is {last + 1}"
        elif partitioned and key is None:
            refused[i] = f"has no partition key and queue {queue_name} is partitioned: give one"
    return keys, refused


def check_placed(
    db: Database,
    ids: Sequence[str],
    start_step: int,
    application_version: str | None,
    queue_name: str | None,
    queue_partition_key: str | None,
) -> dict[str, str | None]:
    """``check_placement``, then each of the workflows an operator named (a filter's
    are passed over instead): refused (exit 2) when one cannot go; their partition
    keys."""
    check_placement(db, start_step, application_version, queue_name, queue_partition_key)
    keys, refused = placements(db, ids, start_step, queue_name, queue_partition_key)
    if refused:
        first, why = next(iter(refused.items()))
        more = f" ({len(refused) - 1} more like it)" if len(refused) > 1 else ""
        raise InvalidInput(f"workflow {first} {why}{more}")
    return keys


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
    """Fork one workflow, naming its new one: a new workflow with the original's inputs
    and the steps before ``start_step`` copied; the rest runs again. Without
    ``application_version`` the fork has none, and executors of the latest version run
    it (DBOS's dequeue). ``forked_workflow_id`` names the new workflow (``dbos workflow
    fork --forked-workflow-id``: DBOS's ``SetWorkflowID`` around the fork),
    ``timeout_seconds`` gives it a timeout from its start."""
    check_timeout(timeout_seconds)
    keys = check_placed(
        db, [workflow_id], start_step, application_version, queue_name, queue_partition_key
    )
    if forked_workflow_id is not None:
        if not forked_workflow_id:
            raise InvalidInput("--forked-workflow-id: empty")
        if db.one(db.queries("reads.sql").workflow_exists, [forked_workflow_id]):
            raise InvalidInput(f"--forked-workflow-id: workflow {forked_workflow_id} exists")
    row = reads.get_workflow(db, workflow_id, payloads=False)
    outcome = WorkflowOutcome(row["workflow_id"], row["name"] or "", "fork", row["status"], dry_run)
    if dry_run:
        return outcome
    from dbos import SetWorkflowID

    with (
        client(db) as c,
        SetWorkflowID(forked_workflow_id)
        if forked_workflow_id is not None
        else contextlib.nullcontext(),
    ):
        new_id = c.fork_workflow(
            workflow_id,
            start_step,
            application_version=application_version,
            queue_name=queue_name,
            queue_partition_key=keys[workflow_id],
            timeout_seconds=timeout_seconds,
        ).get_workflow_id()
    return replace(outcome, new_workflow_id=new_id)


# --- the workflow verbs (qctl.core.verbs) --------------------------------------------


UNFINISHED = tuple(s for s in reads.STATUSES if s not in reads.FINISHED)
"""PENDING, ENQUEUED, DELAYED: a workflow an executor will still run."""
CANCELLABLE = (*UNFINISHED, "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
"""What ``cancel_workflows`` changes: all but SUCCESS and ERROR (which it leaves alone)
and CANCELLED (already so)."""
RESUMABLE = ("CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED", *UNFINISHED)
"""What ``resume_workflows`` re-enqueues: all but SUCCESS and ERROR."""
RESUME_ERROR = (
    "DBOS cannot resume an ERROR workflow; `qctl workflows rewind` runs it again under its"
    " id from a step, `qctl workflows fork` as a new workflow"
)
RESUME_SUCCESS = "finished; `qctl workflows rewind` or `fork` runs it again"
FINISHED_REASONS = {s: f"{s}: already finished" for s in reads.FINISHED}

Row = Mapping[str, Any]
Call = Callable[[Database, "DBOSClient", list[str]], Mapping[str, str] | None]
"""The client's call on the workflows of a batch the verb takes; what it refused (and
why), if anything."""


def selection_filter(f: reads.WorkflowFilter) -> dict[str, Any]:
    """A ``WorkflowFilter`` as a ``Selection``'s filter (JSON, for plan files and the
    audit trail): its fields, the statuses as ``states``."""
    where = {x.name: getattr(f, x.name) for x in fields(f) if x.name != "status"}
    return {**where, "states": list(f.status) or None}


def _filter(where: Mapping[str, Any]) -> reads.WorkflowFilter:
    rest = {k: v for k, v in where.items() if k != "states"}
    return reads.WorkflowFilter(**rest, status=tuple(where["states"]))


def _targets(rows: list[dict[str, Any]]) -> list[Target]:
    return [Target(str(r["workflow_uuid"]), r["status"], r["name"] or "") for r in rows]


def _page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    return _targets(reads.target_page(db, _filter(where), after, n))


def _lookup(db: Database, ids: Sequence[str]) -> list[Target]:
    return _targets(reads.target_states(db, ids))


def _through_client(
    accepts: tuple[str, ...], call: Call, became: Callable[[Row, Row | None], bool]
) -> Callable[[Database, list[str]], Written]:
    """A verb's write: the batch's statuses read, the client's call on those the verb
    takes, then read again: done are those the call changed as ``became`` says
    (``before``, ``after``: None when the row is gone)."""

    def write(db: Database, ids: list[str]) -> Written:
        before = {r["workflow_uuid"]: r for r in reads.target_states(db, ids)}
        taken = [i for i in ids if i in before and before[i]["status"] in accepts]
        if not taken:
            return Written([])
        with timeouts(db):
            refused = dict(call(db, shared_client(db), taken) or {})
        after = {r["workflow_uuid"]: r for r in reads.target_states(db, taken)}
        done = [i for i in taken if i not in refused and became(before[i], after.get(i))]
        return Written(done, refused)

    return write


def _now(status: str) -> Callable[[Row, Row | None], bool]:
    """The workflow is in ``status`` now, moved there by the call (or, already in it,
    written by the call: its ``updated_at``)."""
    return lambda b, a: (
        a is not None
        and a["status"] == status
        and (b["status"] != status or a["updated_at"] != b["updated_at"])
    )


def _verb(
    name: str, past: str, accepts: tuple[str, ...], effect: str, **rest: Any
) -> Verb[Database]:
    return Verb[Database](
        system="dbos",
        noun="workflows",
        name=name,
        past=past,
        accepts=accepts,
        effect=effect,
        page=_page,
        lookup=_lookup,
        **rest,
    )


CANCEL = _verb(
    "cancel",
    "cancelled",
    CANCELLABLE,
    "mark CANCELLED and take off their queues (DBOSClient.cancel_workflows; a running"
    " one stops when it next starts a step)",
    write=_through_client(
        CANCELLABLE, lambda db, c, ids: c.cancel_workflows(ids), _now("CANCELLED")
    ),
    reasons={s: r for s, r in FINISHED_REASONS.items() if s not in CANCELLABLE},
)
"""``workflows cancel``: DBOS's ``cancel_workflows``."""


def resume(queue_name: str | None = None) -> Verb[Database]:
    """``workflows resume``: DBOS's ``resume_workflows``, onto ``queue_name`` (else
    DBOS's internal queue); an executor runs each from its last completed step."""

    def call(db: Database, c: DBOSClient, ids: list[str]) -> None:
        c.resume_workflows(ids, queue_name=queue_name)

    return _verb(
        "resume",
        "resumed",
        RESUMABLE,
        f"re-enqueue on {queue_name or reads.INTERNAL_QUEUE} to run from their last"
        " completed step (DBOSClient.resume_workflows)",
        write=_through_client(RESUMABLE, call, _now("ENQUEUED")),
        reasons={"ERROR": f"ERROR: {RESUME_ERROR}", "SUCCESS": f"SUCCESS: {RESUME_SUCCESS}"},
    )


DELETE = _verb(
    "delete",
    "deleted",
    reads.STATUSES,
    "delete with their steps, inputs, outputs, events, messages and streams"
    " (DBOSClient.delete_workflows)",
    write=_through_client(
        reads.STATUSES, lambda db, c, ids: c.delete_workflows(ids), lambda b, a: a is None
    ),
)
"""``workflows delete``: DBOS's ``delete_workflows``, in any status (as DBOS's own)."""


def _placed(
    start_step: int,
    queue_name: str | None,
    queue_partition_key: str | None,
    each: Callable[[DBOSClient, str, str | None], object],
) -> Call:
    """A fork's or rewind's call: each workflow (DBOSClient takes one at a time) with its
    partition key, those ``placements`` refuses left out."""

    def call(db: Database, c: DBOSClient, ids: list[str]) -> Mapping[str, str]:
        keys, refused = placements(db, ids, start_step, queue_name, queue_partition_key)
        for i in ids:
            if i not in refused:
                each(c, i, keys[i])
        return refused

    return call


def _placement_caveats(
    start_step: int, queue_name: str | None, queue_partition_key: str | None
) -> Callable[[Database, list[str]], list[str]]:
    def caveats(db: Database, ids: list[str]) -> list[str]:
        _, refused = placements(db, ids, start_step, queue_name, queue_partition_key)
        return [f"workflow {i} will be passed over: {why}" for i, why in refused.items()]

    return caveats


def fork_verb(
    start_step: int = 1,
    application_version: str | None = None,
    queue_name: str | None = None,
    queue_partition_key: str | None = None,
    timeout_seconds: float | None = None,
) -> Verb[Database]:
    """``workflows fork`` of several: DBOS's ``fork_workflow`` on each (the originals stay
    as they are; their forks are listed by ``workflows list --forked``)."""

    def each(c: DBOSClient, i: str, key: str | None) -> object:
        return c.fork_workflow(
            i,
            start_step,
            application_version=application_version,
            queue_name=queue_name,
            queue_partition_key=key,
            timeout_seconds=timeout_seconds,
        )

    return _verb(
        "fork",
        "forked",
        reads.STATUSES,
        f"start a new workflow with each one's inputs, from step {start_step}"
        " (DBOSClient.fork_workflow)",
        write=_through_client(
            reads.STATUSES,
            _placed(start_step, queue_name, queue_partition_key, each),
            lambda b, a: a is not None,
        ),
        caveats=_placement_caveats(start_step, queue_name, queue_partition_key),
        batch=1,
    )


def rewind(
    start_step: int = 1,
    application_version: str | None = None,
    queue_name: str | None = None,
    queue_partition_key: str | None = None,
) -> Verb[Database]:
    """``workflows rewind``: DBOS's ``rewind_workflow`` on each finished workflow (its
    history from ``start_step`` on dropped, re-enqueued under the same id, on its own
    application version unless ``application_version`` names another)."""

    def each(c: DBOSClient, i: str, key: str | None) -> object:
        return c.rewind_workflow(
            i,
            start_step=start_step,
            application_version=application_version,
            queue_name=queue_name,
            queue_partition_key=key,
        )

    return _verb(
        "rewind",
        "rewound",
        reads.FINISHED,
        f"drop their history from step {start_step} on and re-enqueue them under the same"
        " ids (DBOSClient.rewind_workflow)",
        write=_through_client(
            reads.FINISHED,
            _placed(start_step, queue_name, queue_partition_key, each),
            _now("ENQUEUED"),
        ),
        reasons={s: f"{s}: not finished" for s in UNFINISHED},
        caveats=_placement_caveats(start_step, queue_name, queue_partition_key),
        batch=1,
    )


def set_delay(delay_until_epoch_ms: int) -> Verb[Database]:
    """``workflows set-delay``: DBOS's ``set_workflow_delay`` on each DELAYED workflow
    (its statement changes only a DELAYED one)."""
    at = datetime.fromtimestamp(delay_until_epoch_ms / 1000, UTC)

    def call(db: Database, c: DBOSClient, ids: list[str]) -> None:
        for i in ids:
            c.set_workflow_delay(i, delay_until_epoch_ms=delay_until_epoch_ms)

    return _verb(
        "set-delay",
        "delayed",
        ("DELAYED",),
        f"start at {at:%Y-%m-%d %H:%M:%S} UTC (DBOSClient.set_workflow_delay)",
        write=_through_client(
            ("DELAYED",),
            call,
            lambda b, a: a is not None and a["delay_until_epoch_ms"] == delay_until_epoch_ms,
        ),
        batch=1,
    )


REWIND = rewind()
VERBS = (CANCEL, resume(), DELETE, REWIND)
"""The verbs with their default options, for the contract suite (``System.verbs``); a
fork leaves its original as it was, and a delay needs its instant."""


def unfinished_older_than(
    f: reads.WorkflowFilter, older_than_ms: int, now_ms: int | None = None
) -> reads.WorkflowFilter:
    """``f`` narrowed to what a global timeout cancels: workflows created more than
    ``older_than_ms`` ago (cancel takes only the unfinished)."""
    if older_than_ms <= 0:
        raise InvalidInput("--older-than: must be positive")
    cutoff = (now_ms if now_ms is not None else int(time.time() * 1000)) - older_than_ms
    return replace(f, end_time=cutoff if f.end_time is None else min(f.end_time, cutoff))


def with_descendants(db: Database, selection: Selection, max_targets: int) -> Selection:
    """The selected workflows and every workflow they started, at any depth (what
    DBOSClient's ``cancel_children``/``delete_children`` reach), as ids: the plan lists
    exactly the tree the run acts on. Refused over ``max_targets``."""
    ids = list(selection.ids)
    if selection.by == "filter":
        f = _filter({**selection.filter, "states": selection.filter.get("states") or ()})
        ids = [r["workflow_id"] for r in reads.matching_ids(db, f, max_targets + 1)]
    below = [r["workflow_id"] for r in reads.descendants(db, ids, max_targets + 1)]
    tree = list(dict.fromkeys([*ids, *below]))
    if len(tree) > max_targets:
        raise InvalidInput(
            f"more than {max_targets} workflows (with their descendants) match:"
            " narrow the selection or raise --max"
        )
    return Selection.of_ids(tree, by=f"{selection.by} with descendants")


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
    tables: dict[str, int] = field(default_factory=dict)
    """Rows deleted (or that would be) per table: the workflows' own and what the
    status rows' delete cascades to."""


def _walk(db: Database, column: str, unrecorded: bool, statuses: list[str], lock: str) -> Any:
    """A keyset walk over old candidates in ``column`` order (an index DBOS has), past
    those a batch kept: ``walk(cutoff, rows)`` returns the next ``rows`` (id, position).
    ``unrecorded``: only rows without ``completed_at``."""
    last: list[Any] = []
    status = reads.condition(db, "in_list", column="status", values=marks(len(statuses)))
    completed = reads.condition(db, "is_null", column="completed_at")
    before = reads.condition(db, "before", column=column)
    after = reads.condition(db, "oldest_first_after", column=column)
    candidates = db.queries("actions.sql").vacuum_candidates

    def walk(cutoff: int, rows: int) -> list[dict[str, Any]]:
        where = [status, *([completed] if unrecorded else []), before, *([after] if last else [])]
        params = [last[0], last[0], last[1]] if last else []
        found = db.all(
            db.fill(candidates, where=" AND ".join(where), column=column, lock=lock),
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
    q = db.queries("actions.sql")
    for reason in ("unfinished_ancestor", "unfinished_descendant"):
        for row in db.all(db.fill(q[reason], ids=marks(len(ids))), ids):
            out.setdefault(str(row["id"]), reason)
    return out


def _newest_of_each_name(db: Database, statuses: list[str], keep_last: int) -> set[str]:
    """The ``keep_last`` newest workflows of each name among ``statuses`` (by completion,
    then creation: DBOS on SQLite may record completions to the second): one pass over
    the history, before the first batch."""
    rows = db.all(
        db.fill(db.queries("actions.sql").newest_of_each_name, statuses=marks(len(statuses))),
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
    transaction (fewer while transactions run long: ``qctl_kit.batches.BatchSize``).

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
        raise InvalidInput(
            "--older-than: 0 would delete every finished workflow, however recent;"
            " give an age above 0"
        )
    if keep_last < 0:
        raise InvalidInput("--keep-last: must not be negative")
    cutoff = (now_ms if now_ms is not None else int(time.time() * 1000)) - older_than_ms
    statuses = list(status) or list(reads.FINISHED)
    protected = _newest_of_each_name(db, statuses, keep_last) if keep_last else set()
    # Locked as selected (a dry run writes nothing, so locks nothing). SQLite's BEGIN
    # IMMEDIATE already excludes every other writer.
    lock = db.queries("actions.sql").skip_locked if db.postgres and not dry_run else ""
    # Two walks, each over an index DBOS has, so a batch reads only what it deletes:
    # completed_at (idx_workflow_status_completed_at) for what DBOS 3.x finished, and
    # created_at for rows an older DBOS finished without recording completed_at.
    walks = [
        _walk(db, "completed_at", False, statuses, lock),
        _walk(db, "created_at", True, statuses, lock),
    ]
    kept: dict[str, int] = {}
    tables = dict.fromkeys(WORKFLOW_TABLES, 0)
    deleted = 0

    def take(walk: Any, rows: int) -> int:
        nonlocal deleted
        ids = [str(r["workflow_uuid"]) for r in walk(cutoff, rows)]
        reasons = _kept(db, ids, protected)
        for reason in reasons.values():
            kept[reason] = kept.get(reason, 0) + 1
        doomed = [i for i in ids if i not in reasons]
        if doomed:
            for table, n in _rows_of(db, doomed).items():
                tables[table] += n
            if not dry_run:
                _delete_rows(db, doomed)
        deleted += len(doomed)
        return len(ids)

    def record(**fields: Any) -> VacuumOutcome:
        return VacuumOutcome(
            "vacuum",
            older_than_ms=older_than_ms,
            status=statuses,
            keep_last=keep_last,
            tables=tables,
            **fields,
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
        db.execute(db.queries("actions.sql").analyze_postgres)
    except psycopg.errors.InsufficientPrivilege:
        return False
    return True


WORKFLOW_TABLES = {
    "workflow_status": "workflow_uuid",
    "workflow_input": "workflow_uuid",
    "workflow_output": "workflow_uuid",
    "operation_outputs": "workflow_uuid",
    "notifications": "destination_uuid",
    "workflow_events": "workflow_uuid",
    "workflow_events_history": "workflow_uuid",
    "streams": "workflow_uuid",
}
"""The tables holding a workflow's rows, and the column naming it (DBOS's migrations,
``dbos/_migration.py``)."""


def _rows_of(db: Database, ids: list[str]) -> dict[str, int]:
    """The rows of each ``WORKFLOW_TABLES`` table that deleting ``ids`` removes."""
    rows_of = db.queries("actions.sql").rows_of
    counts = {}
    for table, column in WORKFLOW_TABLES.items():
        sql = db.fill(rows_of, table=table, column=column, ids=marks(len(ids)))
        row = db.one(sql, ids)
        counts[table] = int(row["n"]) if row else 0
    return counts


def _delete_rows(db: Database, ids: list[str]) -> None:
    """The rows ``SystemDatabase._delete_workflows`` deletes: the payload tables (no
    foreign key), then the status rows, whose delete cascades to notifications,
    workflow_events, workflow_events_history and streams."""
    delete = db.queries("actions.sql").delete_rows
    for table in ("workflow_input", "workflow_output", "operation_outputs", "workflow_status"):
        db.execute(db.fill(delete, table=table, ids=marks(len(ids))), ids)
