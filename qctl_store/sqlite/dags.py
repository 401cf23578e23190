"""Declared DAG workflows on SQLite (``contract.DAGStore`` and ``TxDAGStore``).

The semantics are the PostgreSQL backend's (azync's ``driver/azyncpgx/dag_store.go``).
Every write runs in one ``BEGIN IMMEDIATE`` transaction, which already
serialises writers across threads and processes: reading the DAG header inside it is
the equivalent of PostgreSQL's ``FOR UPDATE`` header lock, and a verb always sees the
committed result of the verb it raced. The two steps PostgreSQL does in one statement
with ``DISTINCT ON`` or an ordered ``string_agg`` are one read plus batched writes
here, inside the same transaction.
"""

from __future__ import annotations

import sqlite3
import uuid
from datetime import timedelta

from qctl_kit import errors
from qctl_store import validate
from qctl_store.dagcheck import (
    COMPENSABLE_STATES,
    DAGReads,
    PreparedDAG,
    compensation_chain,
    failure_reason,
    failures,
    prepare_dag,
    refuse_missing_tasks,
    signal_payload,
)
from qctl_store.listing import DAGListing
from qctl_store.sqlite.base import SqliteBase, Tx, queries, td_us
from qctl_store.sqlite.rows import (
    caller_tx,
)
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    JSON,
    DAGFailure,
    DAGParams,
    DAGSignalParams,
    DAGState,
    OnFailurePolicy,
    Source,
)

Q = queries("dags.sql")
_DAG = Source.DAG.value


class DAGMixin(DAGListing, DAGReads, SqliteBase):
    # --- creation -------------------------------------------------------------------

    def create_dag(self, p: DAGParams) -> tuple[bool, uuid.UUID | None]:
        dag = prepare_dag(p)
        with self.tx() as t:
            return self._create_dag(t, dag)

    def create_dag_tx(self, tx: sqlite3.Connection, p: DAGParams) -> tuple[bool, uuid.UUID | None]:
        """CreateDAG inside the caller's open transaction on their own connection to the
        same database file; it commits or rolls back with the caller's work."""
        dag = prepare_dag(p)
        with caller_tx(self, tx) as t:
            return self._create_dag(t, dag)

    def _create_dag(self, t: Tx, dag: PreparedDAG) -> tuple[bool, uuid.UUID | None]:
        dag_id = str(dag.id)
        row = t.one(
            Q.insert_dag,
            {
                "id": dag_id,
                "name": dag.name,
                "on_failure": dag.on_failure.value,
                "idempotency_key": dag.idempotency_key,
                "meta": dag.meta_json,
                "now": t.now,
            },
        )
        if row is None:
            # Only a live holder of (name, key) makes the insert do nothing, and BEGIN
            # IMMEDIATE keeps it from settling meanwhile.
            live = t.one(Q.live_dag_by_key, {"name": dag.name, "key": dag.idempotency_key})
            assert live is not None
            return False, uuid.UUID(live["id"])

        t.executemany(
            Q.insert_task,
            [
                {
                    "id": str(uuid.uuid4()),
                    "kind": tk.kind,
                    "state": tk.state.value,
                    "now": t.now,
                    "offset": tk.run_at_offset_us,
                    "max_attempts": tk.max_attempts,
                    "explicit": int(tk.max_attempts_explicit),
                    "payload": tk.payload,
                    "meta": dag.meta_json,
                    "dag_id": dag_id,
                    "task_key": tk.key,
                    "compensation_kind": tk.compensation_kind,
                    "compensation_payload": tk.compensation_payload,
                    "signal_name": tk.signal_name,
                    "ignore_dead_deps": int(tk.ignore_dead_deps),
                    "snooze_budget": tk.snooze_budget,
                }
                for tk in dag.tasks
            ],
        )
        if dag.deps:
            t.executemany(Q.insert_dep, [(dag_id, task, dep) for task, dep in dag.deps])
        self.bump_kinds(t, _DAG, (task.kind for task in dag.tasks), "enqueued")
        return True, None

    # --- signals --------------------------------------------------------------------

    def signal(self, p: DAGSignalParams) -> tuple[int, bool]:
        payload = signal_payload(p)
        with self.tx() as t:
            dag_id = str(p.dag_id)
            state = self._dag_state(t, dag_id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("signal dag")
            inbox = t.one(
                Q.insert_signal,
                {
                    "id": str(uuid.uuid4()),
                    "dag_id": dag_id,
                    "name": p.name,
                    "message_id": p.message_id or None,
                    "payload": payload,
                    "now": t.now,
                },
            )
            if inbox is None:
                return 0, True  # same message id already accepted: dropped, no effect
            delivered = t.execute(
                Q.deliver_signal_now,
                {"dag_id": dag_id, "name": p.name, "payload": payload, "now": t.now},
            ).rowcount
            if delivered > 0:
                t.execute(Q.consume_signal, (inbox["id"],))
            return delivered, False

    def deliver_buffered_signals(self) -> int:
        with self.tx() as t:
            # One read of the picks, then two batched writes: SQLite's UPDATE ... FROM
            # cannot return the picked signal ids to mark them consumed.
            picks = t.all(Q.buffered_deliveries)
            t.executemany(
                Q.hand_signal,
                [{"task_id": r["task_id"], "payload": r["payload"], "now": t.now} for r in picks],
            )
            consumed = sorted({r["signal_id"] for r in picks})
            t.executemany(Q.consume_signal, [(sid,) for sid in consumed])
            # Counted per inbox row, as PostgreSQL counts the consumed signals.
            return len(consumed)

    # --- scheduler passes -----------------------------------------------------------

    def promote_unblocked(self) -> int:
        with self.tx() as t:
            return t.execute(Q.promote_unblocked, {"now": t.now}).rowcount

    def complete_due_sleeps(self) -> int:
        with self.tx() as t:
            return t.execute(Q.complete_due_sleeps, {"now": t.now}).rowcount

    def apply_failure_policy(self) -> list[DAGFailure]:
        with self.tx() as t:
            # The candidates were read in this write transaction, so every one is
            # still running: no re-check under a lock as on PostgreSQL.
            out = failures(t.all(Q.triggering_dead_tasks))
            for f in out:
                dag_id, reason = str(f.dag_id), failure_reason(f.dead_tasks)
                if f.policy == OnFailurePolicy.SUSPEND:
                    t.execute(Q.suspend_running_dag, {"id": dag_id, "reason": reason, "now": t.now})
                else:
                    self._start_compensation(t, dag_id, reason)
            return out

    def complete_dags(self) -> int:
        with self.tx() as t:
            now = {"now": t.now}
            settled = t.execute(Q.complete_running_succeeded, now).rowcount
            # SQLite has no ordered string_agg: the reasons are built here from one read.
            dead: dict[str, list[str]] = {}
            for r in t.all(Q.tolerated_dead_tasks):
                dead.setdefault(r["dag_id"], []).append(r["task_key"])
            t.executemany(
                Q.fail_dag,
                [
                    {"id": dag_id, "reason": failure_reason(keys), "now": t.now}
                    for dag_id, keys in dead.items()
                ],
            )
            settled += len(dead)
            settled += t.execute(Q.complete_compensating_suspend, now).rowcount
            settled += t.execute(Q.complete_compensating_settle, now).rowcount
            return settled

    # --- compensation ---------------------------------------------------------------

    def _start_compensation(self, t: Tx, dag_id: str, reason: str | None) -> None:
        """Cancel the remaining tasks, insert the chain, and move the header to
        compensating, or to failed when there is nothing to compensate."""
        t.execute(Q.cancel_remaining_tasks, {"id": dag_id, "now": t.now})
        comps = self._insert_compensations(t, dag_id)
        t.execute(
            Q.settle_after_compensation_start,
            {"id": dag_id, "comps": int(comps), "reason": reason, "now": t.now},
        )

    def _insert_compensations(self, t: Tx, dag_id: str) -> bool:
        """The comp:<key> chain, newest completion first: the first pending, each next
        one blocked on its predecessor. A DAG that already has a chain keeps it.
        Returns whether the DAG now has a chain."""
        if self._has_compensations(t, dag_id):
            return True
        chain = compensation_chain(t.all(Q.compensation_candidates, (dag_id,)))
        for link in chain:
            t.execute(
                Q.insert_compensation,
                {
                    "id": str(uuid.uuid4()),
                    "state": link.state.value,
                    "now": t.now,
                    "comp_key": link.key,
                    "dag_id": dag_id,
                    "task_key": link.original,
                },
            )
            if link.after:
                t.execute(Q.insert_dep, (dag_id, link.key, link.after))
            self.bump_stat(t, _DAG, link.kind, "enqueued")
        return bool(chain)

    def _has_compensations(self, t: Tx, dag_id: str) -> bool:
        row = t.one(Q.has_compensations, (dag_id,))
        return bool(row and row["present"])

    def _dag_state(self, t: Tx, dag_id: str) -> DAGState | None:
        row = t.one(Q.dag_state, {"id": dag_id})
        return None if row is None else DAGState(row["state"])

    # --- results (the reads are dagcheck.DAGReads) ---------------------------------

    def ack_task_result(self, id: uuid.UUID, lease_token: uuid.UUID, result: JSON) -> None:
        text = None if result is None else validate.json_text(result, "result")
        with self.tx() as t:
            row = t.one(
                Q.ack_task_result,
                {"id": str(id), "token": str(lease_token), "result": text, "now": t.now},
            )
            if row is None:
                raise errors.NotFound("ack task result")
            self.bump_stat(t, row["source"], row["kind"], "processed")

    # --- manager verbs --------------------------------------------------------------

    def retry_dag(self, id: uuid.UUID) -> None:
        with self.tx() as t:
            dag_id = str(id)
            state = self._dag_state(t, dag_id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("retry dag")
            refuse_missing_tasks(id, [r["key"] for r in t.all(Q.missing_tasks, {"id": dag_id})])
            args = {"id": dag_id, "comps": int(self._has_compensations(t, dag_id)), "now": t.now}
            t.execute(Q.reset_dead_tasks, args)
            t.execute(Q.unpause_tasks, args)
            t.execute(Q.resume_dag, args)

    def pause_dag(self, id: uuid.UUID, reason: str) -> None:
        with self.tx() as t:
            dag_id = str(id)
            if self._dag_state(t, dag_id) != DAGState.RUNNING:
                raise errors.NotFound("pause dag")
            t.execute(Q.pause_dag, {"id": dag_id, "reason": reason, "now": t.now})
            t.execute(Q.pause_tasks, {"id": dag_id, "now": t.now})

    def compensate_dag(self, id: uuid.UUID) -> None:
        with self.tx() as t:
            dag_id = str(id)
            if self._dag_state(t, dag_id) not in COMPENSABLE_STATES:
                raise errors.NotFound("compensate dag")
            self._start_compensation(t, dag_id, None)

    def cancel_dag(self, id: uuid.UUID) -> None:
        with self.tx() as t:
            dag_id = str(id)
            state = self._dag_state(t, dag_id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("cancel dag")
            t.execute(Q.cancel_dag, {"id": dag_id, "now": t.now})
            t.execute(Q.cancel_remaining_tasks, {"id": dag_id, "now": t.now})

    def vacuum_dags(self, retention: timedelta) -> int:
        if not validate.retention(retention):
            return 0
        with self.tx() as t:
            return t.execute(Q.vacuum_dags, {"now": t.now, "retention": td_us(retention)}).rowcount
