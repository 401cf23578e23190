"""Declared DAG workflows on PostgreSQL (``contract.DAGStore`` and ``TxDAGStore``).

Same rows, locks and statements as azync's ``driver/azyncpgx/dag_store.go``: every verb
that changes a DAG's lifecycle first takes the header row lock (``FOR UPDATE``) and
re-checks the state under it, so a verb racing a scheduler pass or another verb observes
the winner's committed state instead of overwriting it. Workers are woken inside the
transaction (delivered on commit) for every task that becomes pending: created,
promoted, first compensation, retried or unpaused.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import psycopg

from qctl_kit import errors
from qctl_kit.postgres.connect import Cursor
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
from qctl_store.postgres.base import PgBase, queries
from qctl_store.postgres.rows import caller_tx
from qctl_store.types import (
    DAG_TERMINAL_STATES,
    JSON,
    KIND_SIGNAL,
    KIND_SLEEP,
    DAGFailure,
    DAGParams,
    DAGSignalParams,
    DAGState,
    JobState,
    OnFailurePolicy,
    Source,
)

Q = queries("dags.sql")
_DAG = Source.DAG.value
_INTERNAL_KINDS = frozenset({KIND_SLEEP, KIND_SIGNAL})


class DAGMixin(DAGListing, DAGReads, PgBase):
    # --- creation -------------------------------------------------------------------

    def create_dag(self, p: DAGParams) -> tuple[bool, uuid.UUID | None]:
        dag = prepare_dag(p)
        with self.tx() as cur:
            return self._create_dag(cur, dag)

    def create_dag_tx(
        self, tx: psycopg.Connection[Any], p: DAGParams
    ) -> tuple[bool, uuid.UUID | None]:
        """CreateDAG inside the caller's open transaction on ``tx``: it commits or
        rolls back with the caller's own writes, and so do its wake notifies."""
        dag = prepare_dag(p)
        with caller_tx(self, tx) as cur:
            return self._create_dag(cur, dag)

    def _create_dag(self, cur: Cursor, dag: PreparedDAG) -> tuple[bool, uuid.UUID | None]:
        row = cur.execute(
            Q.insert_dag,
            {
                "id": dag.id,
                "name": dag.name,
                "on_failure": dag.on_failure.value,
                "idempotency_key": dag.idempotency_key,
                "meta": dag.meta_json,
            },
        ).fetchone()
        if row is None:
            # Only a live holder of (name, key) makes the insert do nothing; it may have
            # settled since (Go returns an error then too).
            live = cur.execute(
                Q.live_dag_by_key, {"name": dag.name, "key": dag.idempotency_key}
            ).fetchone()
            if live is None:
                raise errors.Conflict(
                    "create dag: the run holding the idempotency key settled meanwhile; retry"
                )
            return False, live["id"]

        cur.executemany(
            Q.insert_task,
            [
                {
                    "id": uuid.uuid4(),
                    "kind": t.kind,
                    "state": t.state.value,
                    "offset": t.run_at_offset_us,
                    "max_attempts": t.max_attempts,
                    "explicit": t.max_attempts_explicit,
                    "payload": t.payload,
                    "meta": dag.meta_json,
                    "dag_id": dag.id,
                    "task_key": t.key,
                    "compensation_kind": t.compensation_kind,
                    "compensation_payload": t.compensation_payload,
                    "signal_name": t.signal_name,
                    "ignore_dead_deps": t.ignore_dead_deps,
                    "snooze_budget": t.snooze_budget,
                }
                for t in dag.tasks
            ],
        )
        if dag.deps:
            cur.executemany(Q.insert_dep, [(dag.id, task, dep) for task, dep in dag.deps])
        self.bump_kinds(cur, _DAG, (task.kind for task in dag.tasks), "enqueued")
        self.notify_in_tx(cur, _DAG, {t.kind for t in dag.tasks if t.state == JobState.PENDING})
        return True, None

    # --- signals --------------------------------------------------------------------

    def signal(self, p: DAGSignalParams) -> tuple[int, bool]:
        payload = signal_payload(p)
        with self.tx() as cur:
            state = self._lock_dag(cur, p.dag_id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("signal dag")
            inbox = cur.execute(
                Q.insert_signal,
                {
                    "id": uuid.uuid4(),
                    "dag_id": p.dag_id,
                    "name": p.name,
                    "message_id": p.message_id or None,
                    "payload": payload,
                },
            ).fetchone()
            if inbox is None:
                return 0, True  # same message id already accepted: dropped, no effect
            cur.execute(
                Q.deliver_signal_now, {"dag_id": p.dag_id, "name": p.name, "payload": payload}
            )
            delivered = cur.rowcount
            if delivered > 0:
                cur.execute(Q.consume_signal, (inbox["id"],))
            return delivered, False

    def deliver_buffered_signals(self) -> int:
        with self.tx() as cur:
            cur.execute(Q.deliver_buffered_signals)
            return cur.rowcount

    # --- scheduler passes -----------------------------------------------------------

    def promote_unblocked(self) -> int:
        with self.tx() as cur:
            kinds = [r["kind"] for r in cur.execute(Q.promote_unblocked).fetchall()]
            self.notify_in_tx(cur, _DAG, {k for k in kinds if k not in _INTERNAL_KINDS})
            return len(kinds)

    def complete_due_sleeps(self) -> int:
        with self.tx() as cur:
            cur.execute(Q.complete_due_sleeps)
            return cur.rowcount

    def apply_failure_policy(self) -> list[DAGFailure]:
        with self.tx() as cur:
            out: list[DAGFailure] = []
            for f in failures(cur.execute(Q.triggering_dead_tasks).fetchall()):
                reason = failure_reason(f.dead_tasks)
                if f.policy == OnFailurePolicy.SUSPEND:
                    cur.execute(Q.suspend_running_dag, {"id": f.dag_id, "reason": reason})
                    if cur.rowcount == 0:
                        continue  # left running under us: nothing to report
                else:
                    if self._lock_dag(cur, f.dag_id) != DAGState.RUNNING:
                        continue
                    self._start_compensation(cur, f.dag_id, reason)
                out.append(f)
            return out

    def complete_dags(self) -> int:
        with self.tx() as cur:
            settled = 0
            for sql in (
                Q.complete_running_succeeded,
                Q.complete_running_failed,
                Q.complete_compensating_suspend,
                Q.complete_compensating_settle,
            ):
                cur.execute(sql, {})
                settled += cur.rowcount
            return settled

    # --- compensation ---------------------------------------------------------------

    def _start_compensation(self, cur: Cursor, dag_id: uuid.UUID, reason: str | None) -> None:
        """Cancel the remaining tasks, insert the chain, and move the (locked) header to
        compensating, or to failed when there is nothing to compensate."""
        cur.execute(Q.cancel_remaining_tasks, (dag_id,))
        comps = self._insert_compensations(cur, dag_id)
        cur.execute(
            Q.settle_after_compensation_start, {"id": dag_id, "comps": comps, "reason": reason}
        )

    def _insert_compensations(self, cur: Cursor, dag_id: uuid.UUID) -> bool:
        """The comp:<key> chain, newest completion first: the first pending, each next
        one blocked on its predecessor. A DAG that already has a chain keeps it; the
        caller holds the header lock, which makes that check authoritative. Returns
        whether the DAG now has a chain."""
        if self._has_compensations(cur, dag_id):
            return True
        chain = compensation_chain(cur.execute(Q.compensation_candidates, (dag_id,)).fetchall())
        for link in chain:
            cur.execute(
                Q.insert_compensation,
                {
                    "id": uuid.uuid4(),
                    "state": link.state.value,
                    "comp_key": link.key,
                    "dag_id": dag_id,
                    "task_key": link.original,
                },
            )
            if link.after:
                cur.execute(Q.insert_dep, (dag_id, link.key, link.after))
            self.bump_stat(cur, _DAG, link.kind, "enqueued")
            if link.state == JobState.PENDING:
                self.notify_in_tx(cur, _DAG, [link.kind])
        return bool(chain)

    def _has_compensations(self, cur: Cursor, dag_id: uuid.UUID) -> bool:
        row = cur.execute(Q.has_compensations, (dag_id,)).fetchone()
        return bool(row and row["present"])

    def _lock_dag(self, cur: Cursor, dag_id: uuid.UUID) -> DAGState | None:
        row = cur.execute(Q.lock_dag, {"id": dag_id}).fetchone()
        return None if row is None else DAGState(row["state"])

    # --- results (the reads are dagcheck.DAGReads) ---------------------------------

    def ack_task_result(self, id: uuid.UUID, lease_token: uuid.UUID, result: JSON) -> None:
        text = None if result is None else validate.json_text(result, "result")
        with self.tx() as cur:
            row = cur.execute(
                Q.ack_task_result, {"id": id, "token": lease_token, "result": text}
            ).fetchone()
            if row is None:
                raise errors.NotFound("ack task result")
            self.bump_stat(cur, row["source"], row["kind"], "processed")

    # --- manager verbs --------------------------------------------------------------

    def retry_dag(self, id: uuid.UUID) -> None:
        with self.tx() as cur:
            state = self._lock_dag(cur, id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("retry dag")
            missing = [r["key"] for r in cur.execute(Q.missing_tasks, {"id": id}).fetchall()]
            refuse_missing_tasks(id, missing)
            # Read after the lock: a chain a racing policy pass just committed counts.
            comps = self._has_compensations(cur, id)
            wake = {
                r["kind"]
                for r in cur.execute(Q.reset_dead_tasks, {"id": id, "comps": comps}).fetchall()
            }
            wake |= {
                r["kind"] for r in cur.execute(Q.unpause_tasks, (id,)).fetchall() if r["runnable"]
            }
            cur.execute(Q.resume_dag, {"id": id, "comps": comps})
            self.notify_in_tx(cur, _DAG, wake)

    def pause_dag(self, id: uuid.UUID, reason: str) -> None:
        with self.tx() as cur:
            if self._lock_dag(cur, id) != DAGState.RUNNING:
                raise errors.NotFound("pause dag")
            cur.execute(Q.pause_dag, {"id": id, "reason": reason})
            cur.execute(Q.pause_tasks, (id,))

    def compensate_dag(self, id: uuid.UUID) -> None:
        with self.tx() as cur:
            if self._lock_dag(cur, id) not in COMPENSABLE_STATES:
                raise errors.NotFound("compensate dag")
            self._start_compensation(cur, id, None)

    def cancel_dag(self, id: uuid.UUID) -> None:
        with self.tx() as cur:
            state = self._lock_dag(cur, id)
            if state is None or state in DAG_TERMINAL_STATES:
                raise errors.NotFound("cancel dag")
            cur.execute(Q.cancel_dag, (id,))
            cur.execute(Q.cancel_remaining_tasks, (id,))

    def vacuum_dags(self, retention: timedelta) -> int:
        if not validate.retention(retention):
            return 0
        with self.tx() as cur:
            cur.execute(Q.vacuum_dags, (retention // timedelta(microseconds=1),))
            return cur.rowcount
