"""Reads of a DBOS system database, with qctl's own SQL on both backends.

Not DBOSClient's reads (``list_workflows``, ``list_application_versions``, ...): those
need the ``dbos`` package and its connection pool for every read-only command, decode
workflow payloads with the application's serializer (unpickling), and page by offset.
Writes go through DBOSClient (``actions``).

Rows carry DBOS's own field names (those of ``WorkflowStatus`` and ``StepInfo`` in
``dbos/_sys_db.py``) and its values: instants are epoch milliseconds as DBOS stores them.
Payloads come back as ``payload.Decoded`` (nothing is unpickled).

Listings page newest first by keyset over ``(created_at, workflow_uuid)``: the cursor
predicate starts with ``created_at <= ?`` so both backends walk DBOS's
``workflow_status_created_at_index`` backwards from the cursor instead of counting an
offset, and a page 100,000 deep costs what the first does.
"""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from qctl.core import triage
from qctl.core.errors import NoSuchName
from qctl.systems.dbos import payload
from qctl.systems.dbos.database import Database, marks
from qctl_kit.errors import InvalidInput
from qctl_kit.sqlfile import fill

STATUSES = (
    "PENDING",
    "ENQUEUED",
    "DELAYED",
    "SUCCESS",
    "ERROR",
    "CANCELLED",
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED",
)
"""``WorkflowStatusString`` of ``dbos/_sys_db.py``."""
FINISHED = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
"""Statuses no executor will move on its own: what vacuum may delete."""
INTERNAL_QUEUE = "_dbos_internal_queue"
"""The queue DBOS resumes and forks onto when none is named (``dbos/_utils.py``)."""

LIST_COLUMNS = [
    "workflow_id",
    "status",
    "name",
    "queue_name",
    "app_version",
    "executor_id",
    "created_at",
    "completed_at",
    "recovery_attempts",
]


class WorkflowRow(TypedDict):
    """A ``workflow_status`` row by ``WorkflowStatus``'s field names (``{status_columns}`` of
    ``queries/fragments.sql``);
    instants are epoch milliseconds."""

    workflow_id: str
    status: str
    name: str | None
    class_name: str | None
    config_name: str | None
    queue_name: str | None
    executor_id: str | None
    app_version: str | None
    app_id: str | None
    recovery_attempts: int | None
    created_at: int
    updated_at: int | None
    dequeued_at: int | None
    completed_at: int | None
    workflow_timeout_ms: int | None
    workflow_deadline_epoch_ms: int | None
    delay_until_epoch_ms: int | None
    deduplication_id: str | None
    priority: int | None
    queue_partition_key: str | None
    forked_from: str | None
    was_forked_from: bool | None
    parent_workflow_id: str | None
    authenticated_user: str | None
    assumed_role: str | None
    authenticated_roles: Any
    """JSON (a list of role names)."""
    attributes: Any
    """JSON (an object)."""
    schedule_name: str | None
    application_name: str | None


class WorkflowPayloads(WorkflowRow, total=False):
    """A workflow with its payloads: ``input``, ``output``, ``error`` from
    ``get_workflow``; ``output`` and ``error`` (cut) from a listing with payloads."""

    input: payload.Decoded | None
    output: payload.Decoded | None
    error: payload.Decoded | None


class Target(TypedDict):
    """A workflow an action acts on."""

    workflow_id: str
    name: str | None
    status: str


class Related(Target):
    """A child or a fork of a workflow."""

    created_at: int


class Child(Related):
    parent_workflow_id: str


class Step(TypedDict):
    """An ``operation_outputs`` row (``StepInfo``'s names)."""

    function_id: int
    function_name: str | None
    output: payload.Decoded | None
    error: payload.Decoded | None
    child_workflow_id: str | None
    started_at_epoch_ms: int | None
    completed_at_epoch_ms: int | None


class TimelineStep(TypedDict):
    """A step on a tree's timeline: no payloads, whether it failed."""

    workflow_id: str
    function_id: int
    function_name: str | None
    child_workflow_id: str | None
    started_at_epoch_ms: int | None
    completed_at_epoch_ms: int | None
    failed: bool


class Event(TypedDict):
    key: str
    value: payload.Decoded | None


class StreamValue(TypedDict):
    key: str
    offset: int
    function_id: int | None
    value: payload.Decoded | None
    """None for the close marker (``closed``)."""
    closed: bool


class Message(TypedDict):
    message_uuid: str
    topic: str | None
    message: payload.Decoded | None
    created_at_epoch_ms: int | None
    consumed: bool


class ErrorGroup(TypedDict):
    """Failed workflows with one error fingerprint (``error_groups``)."""

    error: payload.Decoded | None
    """The newest one's."""
    fingerprint: str
    count: int
    name: str | None
    """The least of their names; ``names`` counts them."""
    names: int
    status: str
    statuses: int
    first_created_at: int
    last_created_at: int
    workflow_id: str | None
    """The newest of them."""


class QueueStats(TypedDict):
    """A queue's registered limits (``queues``; None when unregistered) and its
    in-flight counts."""

    queue_name: str
    enqueued: int
    pending: int
    delayed: int
    oldest_enqueued_at: int | None
    concurrency: int | None
    worker_concurrency: int | None
    rate_limit_max: int | None
    rate_limit_period_sec: float | None
    partition_concurrency: int | None
    polling_interval_sec: float | None
    application_name: str | None
    registered: bool


class Schedule(TypedDict):
    """A ``workflow_schedules`` row; ``context`` decoded (``payload.decode_unnamed``)."""

    schedule_id: str
    schedule_name: str
    workflow_name: str
    workflow_class_name: str | None
    schedule: str
    status: str
    context: payload.Decoded | None
    last_fired_at: str | None
    """ISO 8601 text, as DBOS stores it."""
    automatic_backfill: bool
    cron_timezone: str | None
    queue_name: str | None
    application_name: str | None


class AppVersion(TypedDict):
    version_id: str
    version_name: str
    version_timestamp: int
    created_at: int
    application_name: str | None


class ForkFacts(TypedDict):
    """What a fork or rewind of one workflow is checked against (``fork_facts``)."""

    queue_partition_key: str | None
    last_step: int
    """Its highest recorded function id, 0 for none."""


class Finished(TypedDict):
    """Workflows of one name and status finished in one bucket (``overview``'s
    throughput)."""

    name: str | None
    status: str
    bucket: int
    """Epoch ms where the bucket starts."""
    n: int


class FinishedCount(Finished):
    """``Finished`` per queue too: a row of ``FinishedWindow``."""

    queue_name: str | None


class LatestError(TypedDict):
    """A failed workflow among the newest (``overview``)."""

    workflow_id: str
    name: str | None
    created_at: int
    error: payload.Decoded | None


class Overview(TypedDict):
    """The dashboard's refresh read (``overview``)."""

    by_name: dict[str, dict[str, int]]
    """Per workflow name, workflows per status: in flight now, finished in the window."""
    by_queue: dict[str, dict[str, int]]
    throughput: list[Finished]
    completed_last_window: int
    queues: list[QueueStats]
    errors: list[LatestError]


class Change(TypedDict):
    """A workflow created, started or completed (``changes_since``, ``qctl watch``)."""

    entity: str
    event: str
    """``WATCH_EVENTS``' name: created, started or completed."""
    workflow_id: str
    name: str | None
    status: str
    queue_name: str | None
    at: int
    """Epoch ms of the event."""


@dataclass(frozen=True)
class WorkflowFilter:
    """The filters of ``DBOSClient.list_workflows``, by its parameter names."""

    status: Sequence[str] = ()
    name: Sequence[str] = ()
    queue_name: Sequence[str] = ()
    app_version: Sequence[str] = ()
    executor_id: Sequence[str] = ()
    user: Sequence[str] = ()
    """``authenticated_user``."""
    application_name: Sequence[str] = ()
    """The owning applications; as in DBOS's list, rows no application claims
    (``application_name`` NULL, shared by every application) match too."""
    parent_workflow_id: Sequence[str] = ()
    forked_from: Sequence[str] = ()
    is_fork: bool | None = None
    """True: forks only (``forked_from`` set); False: no forks."""
    was_forked_from: bool | None = None
    start_time: int | None = None
    """created_at at or after (epoch ms)."""
    end_time: int | None = None
    """created_at before."""
    completed_after: int | None = None
    completed_before: int | None = None
    dequeued_after: int | None = None
    """``started_at_epoch_ms`` (DBOS's ``dequeued_at``) at or after."""
    dequeued_before: int | None = None
    has_parent: bool | None = None
    workflow_id_prefix: str = ""
    schedule_name: Sequence[str] = ()
    attributes: dict[str, Any] = field(default_factory=dict)

    def empty(self) -> bool:
        return self == WorkflowFilter()

    def __post_init__(self) -> None:
        bad = [s for s in self.status if s not in STATUSES]
        if bad:
            raise InvalidInput(
                f"--status: unknown DBOS status {bad[0]!r} (one of {', '.join(STATUSES)})"
            )


@dataclass(frozen=True)
class Cursor:
    """Where a newest-first page ends: the last row's ``created_at`` and id."""

    created_at: int | str
    """Epoch ms, or the text an SQLite writer put there instead (which SQLite sorts after
    every integer)."""
    workflow_id: str

    def encode(self) -> str:
        raw = json.dumps([self.created_at, self.workflow_id], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            created_at, workflow_id = json.loads(raw)
            return cls(
                created_at if isinstance(created_at, str) else int(created_at), str(workflow_id)
            )
        except (ValueError, TypeError):
            raise InvalidInput(
                f"--after: {text!r} is not a cursor printed by `qctl workflows list`"
            ) from None


def condition(db: Database, name: str, **fragments: str) -> str:
    """Condition ``name`` of ``queries/conditions.sql`` (this backend's, where the file
    has one per backend), its tokens filled: a part of a ``{where}``."""
    return fill(db.statement("conditions.sql", name), **fragments)


def _in(
    db: Database, column: str, values: Sequence[Any], where: list[str], params: list[Any]
) -> None:
    if values:
        where.append(condition(db, "in_list", column=column, values=marks(len(values))))
        params.extend(values)


def _like_prefix(prefix: str) -> str:
    return prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def filter_sql(db: Database, f: WorkflowFilter) -> tuple[str, list[Any]]:
    """``WHERE`` conditions (``ws.`` columns) and their parameters: each filter given is
    a condition of ``queries/conditions.sql`` on its column, joined by AND (a statement
    names the result ``{where}``)."""
    where: list[str] = []
    params: list[Any] = []
    _in(db, "ws.status", f.status, where, params)
    _in(db, "ws.name", f.name, where, params)
    _in(db, "ws.queue_name", f.queue_name, where, params)
    _in(db, "ws.application_version", f.app_version, where, params)
    _in(db, "ws.executor_id", f.executor_id, where, params)
    _in(db, "ws.authenticated_user", f.user, where, params)
    if f.application_name:
        where.append(
            condition(
                db,
                "in_list_or_unclaimed",
                column="ws.application_name",
                values=marks(len(f.application_name)),
            )
        )
        params.extend(f.application_name)
    _in(db, "ws.parent_workflow_id", f.parent_workflow_id, where, params)
    _in(db, "ws.forked_from", f.forked_from, where, params)
    _in(db, "ws.schedule_name", f.schedule_name, where, params)
    for column, present in (
        ("ws.forked_from", f.is_fork),
        ("ws.parent_workflow_id", f.has_parent),
    ):
        if present is not None:
            where.append(condition(db, "is_not_null" if present else "is_null", column=column))
    if f.was_forked_from is not None:
        where.append(condition(db, "equals", column="ws.was_forked_from"))
        params.append(f.was_forked_from)
    for column, name, value in (
        ("ws.created_at", "at_least", f.start_time),
        ("ws.created_at", "before", f.end_time),
        ("ws.completed_at", "at_least", f.completed_after),
        ("ws.completed_at", "before", f.completed_before),
        ("ws.started_at_epoch_ms", "at_least", f.dequeued_after),
        ("ws.started_at_epoch_ms", "before", f.dequeued_before),
    ):
        if value is not None:
            where.append(condition(db, name, column=column))
            params.append(value)
    if f.workflow_id_prefix:
        where.append(condition(db, "prefix", column="ws.workflow_uuid"))
        params.append(_like_prefix(f.workflow_id_prefix))
    for key, value in f.attributes.items():
        where.append(condition(db, "attribute"))
        if db.postgres:
            params.append(json.dumps({key: value}))
        else:
            params.extend([f'$."{key}"', json.dumps(value)])
    return " AND ".join(where) or condition(db, "every"), params


def _row(row: dict[str, Any]) -> dict[str, Any]:
    """SQLite's 0/1 as booleans, and the JSON columns (TEXT on SQLite) decoded."""
    if row.get("was_forked_from") is not None:
        row["was_forked_from"] = bool(row["was_forked_from"])
    for key in ("attributes", "authenticated_roles"):
        if isinstance(row.get(key), str):
            with contextlib.suppress(ValueError):
                row[key] = json.loads(row[key])
    return row


def list_workflows(
    db: Database,
    f: WorkflowFilter,
    limit: int,
    after: Cursor | None = None,
    payloads: bool = False,
) -> list[WorkflowPayloads]:
    """One page, newest first (``created_at`` then id, descending); with ``payloads``,
    each workflow's ``output`` and ``error`` too, read from their first ``LIST_PAYLOAD``
    characters (as DBOS's own ``dbos workflow list`` shows them, whole)."""
    where, params = filter_sql(db, f)
    if after is not None:
        where += " AND " + condition(db, "newest_first_after")
        params += [after.created_at, after.created_at, after.workflow_id]
    q = db.queries("reads.sql")
    rows = db.all(
        db.fill(q.list_workflows_payloads if payloads else q.list_workflows, where=where),
        [*params, limit],
    )
    if payloads:
        for row in rows:
            serialization = row.pop("serialization")
            for name in ("output", "error"):
                length = row.pop(f"{name}_length")
                row[name] = payload.decode(row[name], serialization, length)
    return [cast(WorkflowPayloads, _row(r)) for r in rows]


FAILED = ("ERROR", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
"""The statuses ``error_groups`` groups: workflows that ended without a result."""


def error_groups(db: Database, f: WorkflowFilter, limit: int) -> list[ErrorGroup]:
    """Failed workflows (``FAILED``, within ``f``) grouped by the fingerprint of their
    error (``qctl.core.triage``: values folded, so ``card declined for 7`` and ``... for
    8`` are one group; NULL, as recovery's give-up leaves it, is a group too), largest
    group first: ``count``, the names and statuses in it, its first and last
    ``created_at``, its newest workflow's id, and the ``error`` of that newest one,
    decoded from its first ``LIST_PAYLOAD`` characters. The database groups by exact
    error, name and status (the most recent ``triage.SCAN`` of those groups are read);
    the fingerprints merge them here. Error-first triage, as Oban Web's errors view."""
    where, params = filter_sql(db, f)
    q = db.queries("reads.sql")
    rows = db.all(db.fill(q.error_groups, where=where), [*params, triage.SCAN])
    grouper = triage.Grouper()
    statuses: dict[str, set[str]] = {}
    decoded: list[payload.Decoded | None] = []
    for i, row in enumerate(rows):
        value = payload.decode(row["error"], row["serialization"], row["length"])
        decoded.append(value)
        text = "" if value is None else value.text()
        grouper.add(
            i,
            text,
            row["last_created_at"],
            row["name"] or "",
            row["count"],
            row["first_created_at"],
        )
        statuses.setdefault(triage.fingerprint(text), set()).add(row["status"])
    groups: list[dict[str, Any]] = []
    for g in grouper.result(len(rows), True).groups[:limit]:
        newest = rows[g.newest]
        # Its newest workflow, to open: by the group's last created_at (indexed).
        found = db.one(
            db.fill(q.error_group_newest, where=where),
            [*params, newest["last_created_at"], newest["error"]],
        )
        names = [n for n in g.labels if n]
        groups.append(
            {
                "error": decoded[g.newest],
                "fingerprint": g.fingerprint,
                "count": g.count,
                "name": min(names) if names else None,
                "names": len(names),
                "status": min(statuses[g.fingerprint]),
                "statuses": len(statuses[g.fingerprint]),
                "first_created_at": g.first_seen,
                "last_created_at": g.last_seen,
                "workflow_id": found["workflow_uuid"] if found else None,
            }
        )
    return cast(list[ErrorGroup], groups)


def queue_workflows(db: Database, queue_name: str, limit: int) -> list[WorkflowRow]:
    """A queue's running (PENDING) workflows, then its ENQUEUED ones in the order DBOS
    dequeues them (priority, then oldest first: ``SystemDatabase.start_queued_workflows``)."""
    rows = db.all(db.queries("reads.sql").queue_workflows, [queue_name, limit])
    return [cast(WorkflowRow, _row(r)) for r in rows]


def cursor_of(row: WorkflowRow) -> Cursor:
    created = row["created_at"]
    return Cursor(created if isinstance(created, int) else str(created), str(row["workflow_id"]))


def matching_ids(db: Database, f: WorkflowFilter, limit: int) -> list[Target]:
    """Id, name and status of up to ``limit`` workflows matching ``f``, newest first (the
    targets of a bulk action)."""
    where, params = filter_sql(db, f)
    return db.all(  # type: ignore[return-value]
        db.fill(db.queries("reads.sql").matching_ids, where=where), [*params, limit]
    )


def target_page(
    db: Database, f: WorkflowFilter, after: str | None, limit: int
) -> list[dict[str, Any]]:
    """A keyset page, in id order after ``after``, of the workflows ``f`` matches: id,
    status and name only (a verb's selection; nothing is decoded)."""
    where, params = filter_sql(db, f)
    if after is not None:
        where += " AND " + condition(db, "id_after")
        params.append(after)
    return db.all(db.fill(db.queries("reads.sql").target_page, where=where), [*params, limit])


def target_states(db: Database, ids: Sequence[str]) -> list[dict[str, Any]]:
    """Id, status, name, ``updated_at`` and ``delay_until_epoch_ms`` of those of ``ids``
    that exist (a verb's re-check around its write), 500 ids a statement (SQLite's
    parameter limit)."""
    found: list[dict[str, Any]] = []
    for i in range(0, len(ids), 500):
        chunk = list(ids[i : i + 500])
        found += db.all(
            db.fill(db.queries("reads.sql").target_states, ids=marks(len(chunk))), chunk
        )
    return found


def resolve_id(db: Database, text: str) -> str:
    """A workflow id typed whole, or a prefix of one (at least 4 characters): unique, or
    the top-level workflow whose id begins every match; an ambiguous one lists some."""
    if not text:
        raise InvalidInput("workflow id: empty")
    q = db.queries("reads.sql")
    if db.one(q.workflow_exists, [text]):
        return text
    if len(text) < 4:
        raise NoSuchName("get workflow", f"no DBOS workflow {text!r}")
    like = _like_prefix(text)
    rows = db.all(q.workflows_by_prefix, [like])
    if not rows:
        raise NoSuchName("get workflow", f"no DBOS workflow {text!r}")
    if len(rows) == 1:
        return str(rows[0]["workflow_uuid"])
    # DBOS names a child ``<parent id>-<n>``: a parent's prefix matches its whole tree,
    # so the one top-level workflow whose id begins every match is the one meant.
    root = rows[0]
    if root["parent_workflow_id"] is None and not db.one(
        q.prefix_outside, [like, _like_prefix(root["workflow_uuid"])]
    ):
        return str(root["workflow_uuid"])
    shown = ", ".join(r["workflow_uuid"] for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
    raise InvalidInput(f"workflow id prefix {text!r} is ambiguous ({shown}): type more of it")


def get_workflow(db: Database, workflow_id: str, payloads: bool = True) -> WorkflowPayloads:
    """One workflow with its input, output and error decoded (DBOS keeps them in
    ``workflow_input``/``workflow_output``, older rows in ``workflow_status``)."""
    q = db.queries("reads.sql")
    row = db.one(q.get_workflow_payloads if payloads else q.get_workflow, [workflow_id])
    if row is None:
        raise NoSuchName("get workflow", f"no DBOS workflow {workflow_id!r}")
    row = _row(row)
    if payloads:
        serialization = row.pop("serialization")
        for key in ("input", "output", "error"):
            row[key] = payload.decode(row[key], serialization)
    return cast(WorkflowPayloads, row)


RAW_FIELDS = (
    "input",
    "output",
    "error",
    "step:N:output",
    "step:N:error",
    "event:KEY",
    "message:UUID",
    "stream:KEY:OFFSET",
)
"""The stored payloads ``raw_payload`` reads, by the name an operator gives."""


def raw_payload(db: Database, workflow_id: str, name: str) -> str | None:
    """One payload of a workflow exactly as DBOS stored it (``RAW_FIELDS``), neither
    decoded nor cut: ``None`` when the column is NULL. Raises ``NoSuchName`` when the
    step, event, message or stream value does not exist."""
    q = db.queries("reads.sql")
    kind, _, rest = name.partition(":")
    if kind in ("input", "output", "error") and not rest:
        sql = q[f"raw_{kind}"]
        params: list[Any] = []
    elif kind == "step" and rest.count(":") == 1 and rest.partition(":")[2] in ("output", "error"):
        number, _, column = rest.partition(":")
        sql = q[f"raw_step_{column}"]
        params = [_number(number, name)]
    elif kind == "event" and rest:
        sql = q.raw_event
        params = [rest]
    elif kind == "message" and rest:
        sql = q.raw_message
        params = [rest]
    elif kind == "stream" and ":" in rest:
        key, _, offset = rest.rpartition(":")
        sql = q.raw_stream
        params = [key, _number(offset, name)]
    else:
        fields = ", ".join(RAW_FIELDS)
        raise InvalidInput(f"--raw: {name!r} is not a stored payload (one of {fields})")
    row = db.one(sql, [workflow_id, *params])
    if row is None:
        raise NoSuchName("raw payload", f"workflow {workflow_id} has no {name}")
    return None if row["v"] is None else str(row["v"])


def _number(text: str, name: str) -> int:
    if not text.isdigit():
        raise InvalidInput(f"--raw: {name!r}: {text!r} is not a number")
    return int(text)


def list_steps(db: Database, workflow_id: str) -> list[Step]:
    """The recorded steps (``operation_outputs``), by function id."""
    rows = db.all(db.queries("reads.sql").list_steps, [workflow_id])
    for row in rows:
        serialization = row.pop("serialization")
        row["output"] = payload.decode(row["output"], serialization)
        row["error"] = payload.decode(row["error"], serialization)
    return cast(list[Step], rows)


def steps_of(db: Database, workflow_ids: Sequence[str], limit: int) -> list[TimelineStep]:
    """The steps of several workflows (a tree's) on one timeline, by start: no payloads,
    only whether a step failed; at most ``limit``."""
    if not workflow_ids:
        return []
    rows = db.all(
        db.fill(db.queries("reads.sql").steps_of, ids=marks(len(workflow_ids))),
        [*workflow_ids, limit],
    )
    for row in rows:
        row["failed"] = bool(row["failed"])
    return cast(list[TimelineStep], rows)


def related(db: Database, column: str, workflow_id: str) -> list[Related]:
    """Workflows whose ``column`` (``parent_workflow_id`` or ``forked_from``, both
    indexed) is ``workflow_id``."""
    assert column in ("parent_workflow_id", "forked_from")
    return db.all(db.queries("reads.sql")[f"related_{column}"], [workflow_id])  # type: ignore[return-value]


def children(db: Database, parent_ids: Sequence[str], limit: int) -> list[Child]:
    """The child workflows of any of ``parent_ids`` (one level of a workflow's tree, over
    DBOS's index on ``parent_workflow_id``), oldest first, at most ``limit``."""
    if not parent_ids:
        return []
    return db.all(  # type: ignore[return-value]
        db.fill(db.queries("reads.sql").children, ids=marks(len(parent_ids))),
        [*parent_ids, limit],
    )


def descendants(db: Database, parent_ids: Sequence[str], limit: int) -> list[Child]:
    """Every workflow started under any of ``parent_ids``, at any depth, breadth first
    (DBOS's ``cancel_children`` walk, ``SystemDatabase.cancel_workflows``): at most
    ``limit``."""
    seen = set(parent_ids)
    found: list[Child] = []
    level = list(parent_ids)
    while level and len(found) < limit:
        rows = [
            r
            for i in range(0, len(level), 500)
            for r in children(db, level[i : i + 500], limit - len(found))
            if r["workflow_id"] not in seen
        ][: limit - len(found)]
        seen.update(r["workflow_id"] for r in rows)
        found += rows
        level = [r["workflow_id"] for r in rows]
    return found


def list_events(db: Database, workflow_id: str) -> list[Event]:
    rows = db.all(db.queries("reads.sql").list_events, [workflow_id])
    for row in rows:
        row["value"] = payload.decode(row["value"], row.pop("serialization"))
    return cast(list[Event], rows)


STREAM_CLOSED = '"__DBOS_STREAM_CLOSED__"'
"""The value DBOS writes (portable JSON) to close a stream (``dbos/_sys_db.py``)."""


def list_streams(db: Database, workflow_id: str) -> list[StreamValue]:
    """The values the workflow wrote to its streams (``DBOS.write_stream``), by key and
    offset (the table's primary key); a stream's close marker is ``closed``, not a value."""
    rows = db.all(db.queries("reads.sql").list_streams, [workflow_id])
    for row in rows:
        serialization = row.pop("serialization")
        row["closed"] = serialization == payload.PORTABLE_JSON and row["value"] == STREAM_CLOSED
        row["value"] = None if row["closed"] else payload.decode(row["value"], serialization)
    return cast(list[StreamValue], rows)


def list_messages(db: Database, workflow_id: str) -> list[Message]:
    """Messages sent to the workflow (``notifications``), oldest first."""
    rows = db.all(db.queries("reads.sql").list_messages, [workflow_id])
    for row in rows:
        row["message"] = payload.decode(row["message"], row.pop("serialization"))
        row["consumed"] = bool(row["consumed"])
        if row["topic"] == "__null__topic__":  # DBOS's sentinel for "no topic"
            row["topic"] = None
    return cast(list[Message], rows)


def queue_stats(db: Database) -> list[QueueStats]:
    """Per queue: its registered limits (``queues``) and its in-flight counts.

    The counts read only ENQUEUED/PENDING rows (DBOS's partial index
    ``idx_workflow_status_in_flight_v2``) and DELAYED ones (``idx_workflow_status_delayed``),
    never the finished history."""
    q = db.queries("reads.sql")
    limits = {r["name"]: r for r in db.all(q.queue_limits)}
    counts = db.all(q.queue_in_flight) + db.all(q.queue_delayed)
    counts = [c for c in counts if c["queue_name"] is not None]
    names = sorted(set(limits) | {c["queue_name"] for c in counts})
    out: list[QueueStats] = []
    for name in names:
        lim = limits.get(name, {})
        mine = {c["status"]: c for c in counts if c["queue_name"] == name}
        enq = mine.get("ENQUEUED")
        out.append(
            {
                "queue_name": name,
                "enqueued": int(enq["n"]) if enq else 0,
                "pending": int(mine["PENDING"]["n"]) if "PENDING" in mine else 0,
                "delayed": int(mine["DELAYED"]["n"]) if "DELAYED" in mine else 0,
                "oldest_enqueued_at": int(enq["oldest"]) if enq else None,
                "concurrency": lim.get("concurrency"),
                "worker_concurrency": lim.get("worker_concurrency"),
                "rate_limit_max": lim.get("rate_limit_max"),
                "rate_limit_period_sec": lim.get("rate_limit_period_sec"),
                "partition_concurrency": lim.get("partition_concurrency"),
                "polling_interval_sec": lim.get("polling_interval_sec"),
                "application_name": lim.get("application_name"),
                "registered": name in limits,
            }
        )
    return out


def list_schedules(
    db: Database,
    status: Sequence[str] = (),
    workflow_name: Sequence[str] = (),
    schedule_name_prefix: str = "",
) -> list[Schedule]:
    """Schedules by name, filtered as ``DBOSClient.list_schedules`` filters them."""
    where: list[str] = []
    params: list[Any] = []
    _in(db, "status", status, where, params)
    _in(db, "workflow_name", workflow_name, where, params)
    if schedule_name_prefix:
        where.append(condition(db, "prefix", column="schedule_name"))
        params.append(_like_prefix(schedule_name_prefix))
    rows = db.all(
        db.fill(
            db.queries("reads.sql").list_schedules,
            where=" AND ".join(where) or condition(db, "every"),
        ),
        params,
    )
    for row in rows:
        # Written with the application's serializer, which the row does not name.
        row["context"] = payload.decode_unnamed(row["context"])
        row["automatic_backfill"] = bool(row["automatic_backfill"])
    return cast(list[Schedule], rows)


def get_schedule(db: Database, name: str) -> Schedule:
    for row in list_schedules(db):
        if row["schedule_name"] == name:
            return row
    raise NoSuchName("get schedule", f"no DBOS schedule {name!r}")


def existing_ids(db: Database, ids: Sequence[str]) -> list[str]:
    """Those of ``ids`` that name a workflow (500 ids a statement: a backfill's window
    can hold more slots than SQLite takes parameters)."""
    found: list[str] = []
    for i in range(0, len(ids), 500):
        chunk = list(ids[i : i + 500])
        sql = db.fill(db.queries("reads.sql").existing_ids, ids=marks(len(chunk)))
        found += [r["workflow_uuid"] for r in db.all(sql, chunk)]
    return found


def fork_facts(db: Database, ids: Sequence[str]) -> dict[str, ForkFacts]:
    """Per workflow id, what a fork or rewind is checked against."""
    facts: dict[str, ForkFacts] = {}
    for i in range(0, len(ids), 500):
        chunk = list(ids[i : i + 500])
        sql = db.fill(db.queries("reads.sql").fork_facts, ids=marks(len(chunk)))
        for r in db.all(sql, chunk):
            facts[r["workflow_uuid"]] = {
                "queue_partition_key": r["queue_partition_key"],
                "last_step": int(r["last"] or 0),
            }
    return facts


def queue_partitioned(db: Database, queue_name: str) -> bool | None:
    """Whether the registered queue has a partition limit (then every workflow on it
    needs a ``queue_partition_key``, ``DBOSClient.register_queue``); None when the
    ``queues`` table has no row for it (a queue declared only in code)."""
    row = db.one(db.queries("reads.sql").queue_partitioned, [queue_name])
    return None if row is None else any(v is not None for v in row.values())


def list_application_versions(db: Database) -> list[AppVersion]:
    """Newest first, as ``DBOSClient.list_application_versions`` orders them."""
    return db.all(db.queries("reads.sql").list_application_versions)  # type: ignore[return-value]


@dataclass(frozen=True)
class StatusCounts:
    counts: dict[str, int]
    estimated: tuple[str, ...] = ()
    """Statuses whose count is an estimate (SUCCESS on PostgreSQL: no index has it)."""


def status_counts(db: Database) -> StatusCounts:
    """Workflows per status without scanning the history: every status but SUCCESS is
    counted exactly from DBOS's partial indexes (in-flight, delayed, failed); SUCCESS is
    the table's size less those, exact on SQLite (``count(*)`` reads its smallest
    index), estimated on PostgreSQL from the planner's row count."""
    q = db.queries("reads.sql")
    rows = db.all(q.status_in_flight) + db.all(q.status_delayed) + db.all(q.status_failed)
    counts = {str(r["status"]): int(r["n"]) for r in rows}
    row = db.one(db.statement("reads.sql", "workflow_total"), [db.schema] if db.postgres else [])
    estimated = ("SUCCESS",) if db.postgres else ()
    total = int(row["n"]) if row else 0
    counts["SUCCESS"] = max(0, total - sum(counts.values()))
    return StatusCounts(counts, estimated)


@dataclass
class FinishedWindow:
    """The finished part of ``overview``, kept between refreshes so that a refresh reads
    what can have changed rather than the whole window (which grows with the window's
    completions): per ``bucket_ms`` (epoch ms where it starts) its rows of name,
    queue_name, status and count. The window is whole buckets: from the bucket
    ``window_ms`` before the current one to the current one.

    The first refresh reads the window; each next one recounts whole buckets from
    ``overlap`` buckets before the bucket that was current at the previous refresh and
    replaces them (a range of ``idx_workflow_status_completed_at``), and drops those that
    left the window. The overlap is there because completed_at is an executor's clock,
    taken before its commit: a row can land in a bucket already read. A finished
    workflow deleted or resumed in a bucket before the overlap stays counted until its
    bucket leaves the window (``clear`` forgets what was kept)."""

    window_ms: int = 3_600_000
    bucket_ms: int = 60_000
    overlap: int = 2
    buckets: dict[int, list[FinishedCount]] = field(default_factory=dict)
    current: int | None = None
    """The bucket current at the previous refresh; None: nothing read yet."""

    def clear(self) -> None:
        self.buckets, self.current = {}, None

    def refresh(self, db: Database, now_ms: int) -> list[FinishedCount]:
        """The window's rows (oldest bucket first), read from where they can have changed."""
        size = int(self.bucket_ms)  # written in: PostgreSQL groups by the same expression only
        current = now_ms // size * size
        start = (current - self.window_ms) // size * size
        since = start if self.current is None else max(start, self.current - self.overlap * size)
        rows = cast(
            list[FinishedCount],
            db.all(db.fill(db.queries("reads.sql").finished_buckets, bucket_ms=str(size)), [since]),
        )
        self.buckets = {b: kept for b, kept in self.buckets.items() if start <= b < since}
        for row in rows:
            self.buckets.setdefault(int(row["bucket"]), []).append(row)
        self.current = current
        return [row for b in sorted(self.buckets) for row in self.buckets[b]]


def overview(db: Database, now_ms: int, finished: FinishedWindow | None = None) -> Overview:
    """The dashboard's refresh read, each part over an index DBOS has: workflows
    finished in the window per name, queue, status and bucket (the throughput:
    ``finished``, kept by the caller between refreshes; none: read whole), in-flight
    ones per name, queue and status (``idx_workflow_status_in_flight_v2``, delayed ones
    by ``idx_workflow_status_delayed``) and the latest errors
    (``idx_workflow_status_failed``).

    ``by_name`` and ``by_queue`` are the counts per status of both together;
    ``throughput`` the finished rows (``bucket``: epoch ms where the bucket starts)."""
    finished_rows = (finished or FinishedWindow()).refresh(db, now_ms)
    q = db.queries("reads.sql")
    in_flight = db.all(q.overview_in_flight) + db.all(q.overview_delayed)
    by_name: dict[str, dict[str, int]] = {}
    by_queue: dict[str, dict[str, int]] = {}
    rows: list[Mapping[str, Any]] = [*finished_rows, *in_flight]
    for row in rows:
        status, n = str(row["status"]), int(row["n"])
        for table, key in ((by_name, row["name"]), (by_queue, row["queue_name"])):
            if key is not None:
                counts = table.setdefault(str(key), {})
                counts[status] = counts.get(status, 0) + n
    errors = db.all(q.latest_errors)
    for row in errors:
        row["error"] = payload.decode(row["error"], row.pop("serialization"))
    return {
        "by_name": by_name,
        "by_queue": by_queue,
        "throughput": [
            Finished(name=r["name"], status=r["status"], bucket=r["bucket"], n=r["n"])
            for r in finished_rows
        ],
        "completed_last_window": sum(int(r["n"]) for r in finished_rows),
        "queues": queue_stats(db),
        "errors": cast(list[LatestError], errors),
    }


WATCH_EVENTS = (
    ("created", "created_at"),
    ("started", "started_at_epoch_ms"),
    ("completed", "completed_at"),
)
"""What ``watch`` reports, each read over the index DBOS has on its column."""


@dataclass
class WatchMarks:
    """How far ``changes_since`` has read: per event, the last instant seen and the ids
    seen at that instant (a later row with the same millisecond is not lost)."""

    at: dict[str, int] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=dict)


def changes_since(db: Database, watched: WatchMarks, limit: int = 500) -> list[Change]:
    """Workflows created, started or completed since ``watched`` (oldest first), and its
    marks advanced past them. DBOS keeps no change log, so this is a poll."""
    q = db.queries("reads.sql")
    out: list[Change] = []
    for event, column in WATCH_EVENTS:
        since = watched.at.get(event)
        if since is None:  # start from now: report what happens next
            row = db.one(db.fill(q.watch_latest, column=column))
            start = int(row["m"]) if row and row["m"] is not None else 0
            # The latest instant's rows are history too; one that comes later with the
            # same millisecond is not.
            present = db.all(db.fill(q.watch_at, column=column), [start])
            watched.at[event] = start
            watched.seen[event] = {str(r["workflow_uuid"]) for r in present}
            continue
        rows = db.all(db.fill(q.watch_since, column=column), [since, limit])
        seen = watched.seen.setdefault(event, set())
        for row in rows:
            at = int(row["at"])
            if at == since and row["workflow_id"] in seen:
                continue
            if at > since:
                since, seen = at, set()
            seen.add(row["workflow_id"])
            out.append(cast(Change, {"entity": "workflow", "event": event, **row}))
        watched.at[event], watched.seen[event] = since, seen
    out.sort(key=lambda r: (r["at"], r["workflow_id"]))
    return out
