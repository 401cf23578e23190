"""The DAG decisions both backends share, made once in Python.

``prepare_dag`` rejects a bad workflow before anything is written (``InvalidInput`` with
a message naming the offending task or edge) and resolves everything azync's
``createDAG`` decides in Go rather than SQL: the stored failure policy, each task's
initial state, the ``$sleep`` payload form, the budget flags and the NULL-for-empty
columns. The backends only have to write the result. The rest are the other decisions
azync makes in Go: signal input, which DAGs the failure policy acts on and the reason
it records, and the shape of a compensation chain.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from qctl_kit import values
from qctl_kit.errors import InvalidInput, NotFound
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    TASK_KEY_COMPENSATION_PREFIX,
    DAGDep,
    DAGFailure,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGTask,
    DAGView,
    Job,
    JobState,
    OnFailurePolicy,
    TaskResult,
)

RESERVED_KEY_PREFIXES = ("$", TASK_KEY_COMPENSATION_PREFIX)


class Row(Protocol):
    """A result row read by column name: a psycopg dict row or an sqlite3.Row."""

    def __getitem__(self, key: str, /) -> Any: ...


@dataclass(frozen=True)
class PreparedTask:
    key: str
    kind: str
    state: JobState
    payload: str | None
    """JSON text, or None for SQL NULL."""
    run_at_offset_us: int
    """Microseconds after the backend's now; only a root ``$sleep`` starts its timer."""
    max_attempts: int
    max_attempts_explicit: bool
    compensation_kind: str | None
    compensation_payload: str | None
    signal_name: str | None
    ignore_dead_deps: bool
    snooze_budget: float | None
    """Seconds; None when the task has no Deadline."""


@dataclass(frozen=True)
class PreparedDAG:
    id: uuid.UUID
    name: str
    on_failure: OnFailurePolicy
    idempotency_key: str | None
    meta: dict[str, str]
    meta_json: str
    tasks: list[PreparedTask]
    deps: list[tuple[str, str]]
    """(task_key, depends_on_key) edges, in declaration order."""


def prepare_dag(p: DAGParams) -> PreparedDAG:
    if not isinstance(p, DAGParams):
        raise InvalidInput(f"expected DAGParams, not {type(p).__name__}")
    if not isinstance(p.id, uuid.UUID):
        raise InvalidInput("dag id must be a uuid.UUID")
    if not isinstance(p.name, str) or not p.name.strip():
        raise InvalidInput("dag name must be a non-empty string")
    if not isinstance(p.idempotency_key, str):
        raise InvalidInput("dag idempotency_key must be a string")
    on_failure = _policy(p.on_failure)
    meta = validate.meta(p.meta)
    if not p.tasks:
        raise InvalidInput(f"dag {p.name!r} has no tasks")

    keys: set[str] = set()
    for tk in p.tasks:
        _check_task(tk)
        if tk.key in keys:
            raise InvalidInput(f"duplicate task key {tk.key!r}")
        keys.add(tk.key)

    deps = _check_deps(p, keys)
    blocked = {task for task, _ in deps}
    tasks = [_prepare_task(tk, tk.key in blocked) for tk in p.tasks]
    return PreparedDAG(
        id=p.id,
        name=p.name,
        on_failure=on_failure,
        idempotency_key=p.idempotency_key or None,
        meta=meta,
        meta_json=validate.json_text(meta, "meta"),
        tasks=tasks,
        deps=deps,
    )


def _policy(value: OnFailurePolicy | str) -> OnFailurePolicy:
    if not value:
        return OnFailurePolicy.CANCEL  # azync stores an empty policy as cancel
    try:
        return OnFailurePolicy(value)
    except ValueError:
        raise InvalidInput(
            f"unknown on_failure {value!r} (one of cancel, suspend, or empty for cancel)"
        ) from None


def _check_task(tk: DAGTask) -> None:
    if not isinstance(tk, DAGTask):
        raise InvalidInput(f"tasks must be DAGTask values, not {type(tk).__name__}")
    if not isinstance(tk.key, str) or not tk.key:
        raise InvalidInput("task key must be a non-empty string")
    validate.hint_name(tk.key, "task key")
    for prefix in RESERVED_KEY_PREFIXES:
        if tk.key.startswith(prefix):
            raise InvalidInput(f"task key {tk.key!r} uses the reserved prefix {prefix!r}")
    validate.kind(tk.kind, f"task {tk.key!r} kind")
    validate.non_negative(tk.max_attempts, f"task {tk.key!r} max_attempts")
    values.duration(tk.sleep_for, f"task {tk.key!r} sleep_for")
    values.duration(tk.deadline, f"task {tk.key!r} deadline")
    for what in ("compensation_kind", "signal_name"):
        if not isinstance(getattr(tk, what), str):
            raise InvalidInput(f"task {tk.key!r} {what} must be a string")


def _check_deps(p: DAGParams, keys: set[str]) -> list[tuple[str, str]]:
    edges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for d in p.deps:
        task, dep = getattr(d, "task_key", None), getattr(d, "depends_on_key", None)
        if task not in keys or dep not in keys:
            unknown = task if task not in keys else dep
            raise InvalidInput(f"edge {task!r} -> {dep!r} names unknown task {unknown!r}")
        assert isinstance(task, str) and isinstance(dep, str)
        if task == dep:
            raise InvalidInput(f"task {task!r} depends on itself")
        if (task, dep) in seen:
            raise InvalidInput(f"edge {task!r} -> {dep!r} is declared twice")
        seen.add((task, dep))
        edges.append((task, dep))
    cycle = find_cycle(keys, edges)
    if cycle:
        raise InvalidInput("dependency cycle (each task waits on the next): " + " -> ".join(cycle))
    return edges


def find_cycle(keys: set[str], edges: list[tuple[str, str]]) -> list[str]:
    """One dependency cycle as a closed path of keys, or [] when the graph is acyclic."""
    waits_on: dict[str, list[str]] = {k: [] for k in keys}
    for task, dep in edges:
        waits_on[task].append(dep)
    done: set[str] = set()
    for start in sorted(keys):
        if start in done:
            continue
        # Iterative depth-first walk: `path` is the current chain of waits.
        path = [start]
        stack = [iter(waits_on[start])]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                done.add(path.pop())
            elif nxt in path:
                return [*path[path.index(nxt) :], nxt]
            elif nxt not in done:
                path.append(nxt)
                stack.append(iter(waits_on[nxt]))
    return []


def _prepare_task(tk: DAGTask, has_deps: bool) -> PreparedTask:
    state = initial_state(tk.kind, has_deps)
    if tk.kind == KIND_SLEEP:
        # A timer has no handler to read a payload: azync replaces it with the duration.
        payload: str | None = '{"sleepSeconds":' + seconds_text(tk.sleep_for) + "}"
    else:
        payload = _json_or_null(tk.payload, f"task {tk.key!r} payload")
    offset = _us(tk.sleep_for) if state == JobState.SCHEDULED else 0
    budget = tk.deadline.total_seconds()
    return PreparedTask(
        key=tk.key,
        kind=tk.kind,
        state=state,
        payload=payload,
        run_at_offset_us=offset,
        max_attempts=tk.max_attempts,
        max_attempts_explicit=tk.max_attempts > 0,
        compensation_kind=tk.compensation_kind or None,
        compensation_payload=_json_or_null(
            tk.compensation_payload, f"task {tk.key!r} compensation_payload"
        ),
        signal_name=tk.signal_name or None,
        ignore_dead_deps=bool(tk.ignore_dead_deps),
        snooze_budget=budget or None,
    )


def initial_state(kind: str, has_deps: bool) -> JobState:
    if has_deps:
        return JobState.BLOCKED
    if kind == KIND_SLEEP:
        return JobState.SCHEDULED
    if kind == KIND_SIGNAL:
        return JobState.WAITING
    return JobState.PENDING


def _us(value: timedelta) -> int:
    return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds


def seconds_text(value: timedelta) -> str:
    """A duration in seconds as Go's JSON encoding of ``Duration.Seconds()`` prints it
    (``3600``, ``0.04``): plain decimal, no exponent, no trailing zeros."""
    us = _us(value)
    whole, frac = divmod(us, 1_000_000)
    return str(whole) if not frac else f"{whole}.{frac:06d}".rstrip("0")


def _json_or_null(value: object, what: str) -> str | None:
    """None is Go's nil RawMessage: stored as SQL NULL, not JSON null."""
    return None if value is None else validate.json_text(value, what)


def signal_payload(p: DAGSignalParams) -> str | None:
    """The signal's payload as JSON text (None for SQL NULL), after checking its name."""
    if not isinstance(p.name, str) or not p.name:
        raise InvalidInput("signal name must be a non-empty string")
    return _json_or_null(p.payload, "signal payload")


# --- failure policy and compensation ---------------------------------------------------

# CompensateDAG's allowed states: azync also accepts a paused DAG, beyond the seed's
# running and suspended.
COMPENSABLE_STATES = frozenset({DAGState.RUNNING, DAGState.SUSPENDED, DAGState.PAUSED})


def failures(rows: Iterable[Row]) -> list[DAGFailure]:
    """Triggering dead tasks (rows of id, on_failure, task_key) grouped per DAG with
    sorted keys, in id-string order: concurrent passes then lock DAGs in one order."""
    grouped: dict[str, DAGFailure] = {}
    for r in rows:
        dag_id = str(r["id"])
        if dag_id not in grouped:
            grouped[dag_id] = DAGFailure(uuid.UUID(dag_id), OnFailurePolicy(r["on_failure"]))
        grouped[dag_id].dead_tasks.append(r["task_key"])
    for f in grouped.values():
        f.dead_tasks.sort()
    return [grouped[k] for k in sorted(grouped)]


def failure_reason(dead_keys: Iterable[str]) -> str:
    return "dead tasks: " + ", ".join(sorted(dead_keys))


@dataclass(frozen=True)
class CompensationLink:
    key: str
    """comp:<original key>."""
    original: str
    kind: str
    state: JobState
    after: str | None
    """The link this one waits for (its predecessor in the chain), or None."""


def compensation_chain(candidates: Iterable[Row]) -> list[CompensationLink]:
    """The comp:<key> chain over succeeded tasks (rows of task_key, compensation_kind,
    newest completion first): the first runs at once, each next one waits for its
    predecessor, so work is undone in reverse completion order."""
    chain: list[CompensationLink] = []
    for c in candidates:
        after = chain[-1].key if chain else None
        chain.append(
            CompensationLink(
                key=TASK_KEY_COMPENSATION_PREFIX + c["task_key"],
                original=c["task_key"],
                kind=c["compensation_kind"],
                state=JobState.BLOCKED if after else JobState.PENDING,
                after=after,
            )
        )
    return chain


def refuse_missing_tasks(dag_id: uuid.UUID | str, missing: list[str]) -> None:
    """``retry_dag`` on a DAG whose task rows are gone (a dead task vacuumed) would mark
    it succeeded without running them: refuse, naming the keys (``""``: no row at all)."""
    if not missing:
        return
    keys = ", ".join(k for k in missing if k)
    raise NotFound(
        "retry dag",
        f"DAG {dag_id} has no row for task(s) {keys}" if keys else f"DAG {dag_id} has no task rows",
    )


class DAGReads(StoreBase):
    """The DAG reads, alike on both backends (``dags.sql``)."""

    def get_dag(self, id: uuid.UUID) -> DAGView:
        with self.read() as cur:
            row = cur.execute(self.queries("dags.sql").get_dag, self._dag_arg(id)).fetchone()
        if row is None:
            raise NotFound("get dag")
        return self.rows.dag_view(row)

    def dag_tasks(self, id: uuid.UUID) -> list[Job]:
        q = self.queries("dags.sql")
        with self.read() as cur:
            found = cur.execute(q.dag_exists, self._dag_arg(id)).fetchone()
            if not (found and found["present"]):
                raise NotFound("dag tasks")
            return self.rows.jobs(cur.execute(q.dag_tasks, self._dag_arg(id)).fetchall())

    def dag_deps(self, id: uuid.UUID) -> list[DAGDep]:
        with self.read() as cur:
            rows = cur.execute(self.queries("dags.sql").dag_deps, self._dag_arg(id)).fetchall()
        return [DAGDep(task_key=r["task_key"], depends_on_key=r["depends_on_key"]) for r in rows]

    def dag_name_state_counts(self) -> dict[str, dict[DAGState, int]]:
        out: dict[str, dict[DAGState, int]] = {}
        with self.read() as cur:
            for r in cur.execute(self.queries("dags.sql").dag_name_state_counts, ()).fetchall():
                out.setdefault(r["name"], {})[DAGState(r["state"])] = r["n"]
        return out

    def dag_task_counts(self, ids: list[uuid.UUID]) -> dict[uuid.UUID, dict[JobState, int]]:
        out: dict[uuid.UUID, dict[JobState, int]] = {}
        if not ids:
            return out
        d = self.dialect
        args = (d.array([d.arg_id(i, "ids") for i in ids]),)
        with self.read() as cur:
            for r in cur.execute(self.queries("dags.sql").dag_task_counts, args).fetchall():
                out.setdefault(self.rows.id(r["dag_id"]), {})[JobState(r["state"])] = r["n"]
        return out

    def find_dag_by_key(self, name: str, idempotency_key: str) -> uuid.UUID:
        args = {"name": name, "key": idempotency_key}
        with self.read() as cur:
            row = cur.execute(self.queries("dags.sql").live_dag_by_key, args).fetchone()
        if row is None:
            raise NotFound("find dag by key")
        return self.rows.id(row["id"])

    def task_results(
        self, dag_id: uuid.UUID, keys: list[str] | None = None
    ) -> dict[str, TaskResult]:
        args = {
            "dag_id": self.dialect.arg_id(dag_id, "dag_id"),
            "all": not keys,
            "keys": self.dialect.array(list(keys or [])),
        }
        with self.read() as cur:
            rows = cur.execute(self.queries("dags.sql").task_results, args).fetchall()
        return {
            r["task_key"]: TaskResult(
                result=None if r["skipped"] else self.rows.decode_json(r["result"]),
                skipped=bool(r["skipped"]),
            )
            for r in rows
        }

    def _dag_arg(self, id: uuid.UUID) -> tuple[Any]:
        return (self.dialect.arg_id(id, "id"),)
