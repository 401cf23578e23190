"""qctl's writes to an Oban database: the operator verbs, declared for the verb engine
(``qctl.core.verbs``), each batch one statement of ``queries/actions.sql`` with the
effect of Oban's own statement named there.

Every batch first refuses (exit 5) a schema qctl does not know (``Database.writable``)
and runs in its own transaction; Oban's signals go out on its commit. An executing job is
never retried or deleted here, and on oban-py never written: a cancel signals the node
running it. Queues are paused, resumed and scaled by Oban's signal alone, as Oban's own
calls do: the producers that run them act, and record it in their own rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from qctl.core.verbs import Target, Verb, Written
from qctl.systems.oban import reads
from qctl.systems.oban.database import ELIXIR, PY, Database
from qctl_kit.errors import InvalidInput


def _targets(rows: list[dict[str, Any]]) -> list[Target]:
    return [Target(str(r["id"]), r["state"], r["worker"]) for r in rows]


def _job_page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A keyset page of the jobs a filter matches (``states``, ``queues``, ``workers``;
    ``args``, ``meta``: objects the job's columns contain)."""
    params = {
        "states": list(where["states"]),
        "queues": where.get("queues") or None,
        "workers": where.get("workers") or None,
        **reads.contained(where.get("args"), where.get("meta")),
        "after": int(after) if after else None,
        "limit": n,
    }
    return _targets(db.all(reads.queries("actions.sql").job_targets_page, params))


def _job_lookup(db: Database, ids: Sequence[str]) -> list[Target]:
    rows = db.all(reads.queries("actions.sql").job_targets, {"ids": [int(i) for i in ids]})
    return _targets(rows)


Write = Callable[[Database, list[str]], Written]


def _job_writer(query: str) -> Write:
    """One batch of a job verb: ``query`` in its own transaction after the schema check;
    the statement skips rows another transaction holds, so each id it did not change is
    tried again alone, after waiting for that row's lock (``lock_job``)."""

    def run(db: Database, batch: list[str]) -> list[str]:
        params = {
            "ids": [int(i) for i in batch],
            "py": db.flavour == PY,
            "cancel_executing": db.flavour == ELIXIR,
            "channel": db.channel("signal"),
        }
        q = reads.queries("actions.sql")
        with db.transaction():
            if len(batch) == 1:
                db.all(q.lock_job, {"id": int(batch[0])})
            return [r["id"] for r in db.all(getattr(q, query), params)]

    def write(db: Database, ids: list[str]) -> Written:
        db.writable()
        done = run(db, ids)
        if len(ids) > 1:  # a batch of one waited for its lock already
            for id_ in sorted(set(ids) - set(done)):
                done += run(db, [id_])
        return Written(done)

    return write


def queue_targets(db: Database) -> list[Target]:
    """Every queue with unfinished jobs or a producer, by name, in the state its
    producers last recorded (oban-py): ``paused`` (every producer), ``active`` (none),
    ``mixed``, ``stopped`` (no producer runs it); ``unknown`` on Elixir, whose nodes keep
    it in memory. The names come from the dashboard's own read (the state-queue index):
    a queue holding only finished jobs has nothing to pause."""
    paused: dict[str, list[bool]] = {}
    for node in reads.nodes(db) if db.flavour == PY else []:
        paused.setdefault(node.queue, []).append(bool(node.paused))
    names = {q.queue for q in reads.list_queues(db, live=True, cap=1)} | set(paused)

    def state(name: str) -> str:
        if db.flavour != PY:
            return "unknown"
        flags = paused.get(name, [])
        if not flags:
            return "stopped"
        return "paused" if all(flags) else "mixed" if any(flags) else "active"

    return [Target(name, state(name), "") for name in sorted(names)]


def _queue_page(db: Database, where: Mapping[str, Any], after: str | None, n: int) -> list[Target]:
    """A page of the queues a filter matches (``match``: part of the name, any case;
    ``all``), by name after a cursor."""
    match = (where.get("match") or "").lower()
    return [
        t
        for t in queue_targets(db)
        if t.state in where["states"] and match in t.id.lower() and (after is None or t.id > after)
    ][:n]


def _queue_lookup(db: Database, names: Sequence[str]) -> list[Target]:
    wanted = set(names)
    return [t for t in queue_targets(db) if t.id in wanted]


def ident(db: Database, node: str | None, instance: str | None = None) -> str:
    """The ``ident`` a signal carries: ``any``, or ``<instance>.<node>`` as Oban's
    ``_scope_signal`` builds it, the instance named by the node's producer or peer rows
    (Oban's default name, ``Oban``, when none says)."""
    if not node:
        return "any"
    if instance:
        return f"{instance}.{node}"
    names = sorted({n.name for n in reads.nodes(db) if n.node == node})
    if len(names) > 1:
        raise InvalidInput(
            f"--node {node!r}: Oban instances {', '.join(names)} run there; pass --instance"
        )
    return f"{names[0] if names else 'Oban'}.{node}"


def signal(
    action: str,
    accepts: tuple[str, ...],
    node: str | None = None,
    instance: str | None = None,
    **extra: Any,
) -> Write:
    """One batch of a queue verb: Oban's signal ``action`` for each queue of the batch
    still in a state the verb ``accepts`` (read again first: a queue another operator
    paused meanwhile is not signalled again), for every node or ``node`` alone."""

    def write(db: Database, names: list[str]) -> Written:
        db.writable()
        params = {
            "names": [t.id for t in _queue_lookup(db, names) if t.state in accepts],
            "channel": db.channel("signal"),
            "action": action,
            "ident": ident(db, node, instance),
            "extra": json.dumps(extra) if extra else None,
        }
        with db.transaction():
            rows = db.all(reads.queries("actions.sql").signal_queues, params)
        return Written([r["id"] for r in rows])

    return write


_FINISHED = {s: f"{s}: already finished" for s in reads.FINISHED_STATES}

CANCEL = Verb[Database](
    system="oban",
    noun="jobs",
    name="cancel",
    past="cancelled",
    accepts=("available", "scheduled", "suspended", "retryable", "executing"),
    effect="cancel (a waiting job now; an executing one through Oban's pkill signal to"
    " the node running it)",
    page=_job_page,
    lookup=_job_lookup,
    write=_job_writer("cancel_jobs"),
    reasons=_FINISHED,
)
"""``jobs cancel``: Oban's ``cancel_many_jobs`` / ``cancel_all_jobs``."""

RETRY = Verb[Database](
    system="oban",
    noun="jobs",
    name="retry",
    past="retried",
    accepts=("scheduled", "retryable", "completed", "cancelled", "discarded"),
    effect="make available now (max_attempts raised when spent)",
    page=_job_page,
    lookup=_job_lookup,
    write=_job_writer("retry_jobs"),
    reasons={
        "executing": "executing (Oban never retries an executing job)",
        "available": "available: already waiting to run",
        "suspended": "suspended: waits for what suspended it",
    },
    filter_states=("retryable", "discarded", "cancelled"),
)
"""``jobs retry``: Oban's ``retry_many_jobs`` / ``retry_all_jobs``."""

DELETE = Verb[Database](
    system="oban",
    noun="jobs",
    name="delete",
    past="deleted",
    accepts=("available", "scheduled", "suspended", "retryable", *reads.FINISHED_STATES),
    effect="delete for good",
    page=_job_page,
    lookup=_job_lookup,
    write=_job_writer("delete_jobs"),
    reasons={"executing": "executing (Oban never deletes an executing job)"},
    filter_states=reads.FINISHED_STATES,
)
"""``jobs delete``: Oban's ``delete_many_jobs`` / ``delete_all_jobs``."""

_NO_NODE = {"stopped": "stopped: no node runs it"}


def queue_verb(name: str, node: str | None = None, instance: str | None = None,
               limit: int | None = None) -> Verb[Database]:  # fmt: skip
    """``queues pause|resume|scale``, for every node or ``node`` alone (``limit``: a
    scale's new limit)."""
    where = f" on node {node}" if node else " on every node"
    if name == "pause":
        accepts: tuple[str, ...] = ("active", "mixed", "unknown")
        effect = f"pause (Oban's pause signal{where}: its producers stop fetching)"
        reasons = {"paused": "already paused", **_NO_NODE}
        write = signal("pause", accepts, node, instance)
    elif name == "resume":
        accepts = ("paused", "mixed", "unknown")
        effect = f"resume (Oban's resume signal{where}: its producers fetch again)"
        reasons = {"active": "not paused", **_NO_NODE}
        write = signal("resume", accepts, node, instance)
    else:
        accepts = ("active", "paused", "mixed", "unknown")
        effect = f"scale to {limit} (Oban's scale signal{where})"
        reasons = dict(_NO_NODE)
        write = signal("scale", accepts, node, instance, limit=limit)
    return Verb[Database](
        system="oban",
        noun="queues",
        name=name,
        past={"pause": "paused", "resume": "resumed"}.get(name, "scaled"),
        accepts=accepts,
        effect=effect,
        page=_queue_page,
        lookup=_queue_lookup,
        write=write,
        reasons=reasons,
    )


PAUSE = queue_verb("pause")
RESUME = queue_verb("resume")

VERBS = (CANCEL, RETRY, DELETE, PAUSE, RESUME)
