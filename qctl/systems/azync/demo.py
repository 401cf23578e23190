"""A realistic, bounded workload for trying qctl: ``qctl demo`` runs it under ``qctl top``.

Only the public ``qctl_store`` API is used, the way a service built on azync would:

- queue jobs of several kinds with their own rates, run times, failure rates and retry
  budgets, worked by worker threads that lease, ack, reschedule, kill, skip and snooze;
  two kinds pile up dead jobs, and one kind's workers "crash" (they never settle), so
  its leases expire and the maintenance loop reaps them;
- scheduled jobs, and events fanned out to subscribers (one of them flaky);
- DAG runs: an ETL with a wide fan-out and fan-in, an approval flow with a signal and a
  sleep, and a saga whose failures trigger compensation (cancel policy) or suspension;
- workflow-as-code executions whose operations now and then end uncertain;
- a maintenance loop (promote due jobs, reap expired leases, the DAG scheduler passes,
  and vacuums that keep the database small).

``Demo(store).start()`` runs it in daemon threads until ``stop()`` (a
``threading.Event``) or ``duration`` seconds; ``summary()`` counts what happened.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from qctl.systems.azync.ops import maintain as ops_maintain
from qctl.systems.azync.ops import vacuum as ops_vacuum
from qctl_kit import errors
from qctl_store.types import (
    KIND_SIGNAL,
    KIND_SLEEP,
    WORKFLOW_TERMINAL_STATES,
    DAGDep,
    DAGFilter,
    DAGParams,
    DAGSignalParams,
    DAGState,
    DAGTask,
    DequeueParams,
    EnqueueParams,
    Job,
    OnFailurePolicy,
    PublishParams,
    ScheduleOperationParams,
    Source,
    Subscriber,
    WorkflowStartParams,
    WorkflowState,
)

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore


@dataclass(frozen=True)
class Profile:
    """How one kind behaves: enqueues per second, seconds of work, and what can go wrong."""

    rate: float
    work: float = 0.02
    fail: float = 0.0
    """Chance an attempt fails (rescheduled with backoff until the budget is spent)."""
    max_attempts: int = 5
    snooze: float = 0.0
    skip: float = 0.0
    crash: float = 0.0
    """Chance the worker dies mid-job: the lease is never settled and expires."""
    delay: tuple[float, float] = (0.0, 0.0)
    """Scheduled jobs: a random delay in this range (seconds)."""


QUEUE_KINDS: dict[str, Profile] = {
    "email.send": Profile(rate=3.0, fail=0.05),
    "image.resize": Profile(rate=1.0, work=0.15, fail=0.1, snooze=0.05),
    "webhook.deliver": Profile(rate=2.0, fail=0.35, max_attempts=4, skip=0.05),
    "billing.charge": Profile(rate=0.5, fail=0.3, max_attempts=2),
    "legacy.sync": Profile(rate=0.3, fail=1.0, max_attempts=2),
    "report.generate": Profile(rate=0.3, work=0.3, delay=(5, 60)),
    "search.reindex": Profile(rate=0.4, crash=0.3),
}
SUBSCRIBERS: dict[str, list[tuple[str, float]]] = {
    "user.created": [("audit.log", 0.0), ("welcome.mailer", 0.05)],
    "order.placed": [("fulfillment", 0.2), ("analytics", 0.0)],
    "payment.failed": [("dunning", 0.1)],
}
EVENT_RATE = 1.5
DAG_RATE = 0.2
WORKFLOW_RATE = 0.2
WORKFLOW = "checkout"
OPERATION, OPERATION_VERSION = "charge", "1"
"""The demo's workflow and its one operation, ``$op:charge@1`` as azync names its kind."""
MAX_PENDING = 400
"""Producers pause a kind whose backlog is this deep, so the demo stays bounded."""
RETENTION = timedelta(minutes=10)
MAX_REAPS = 3
"""The demo's reap budget (a crashing kind's jobs die after three lost leases)."""
LEASE = timedelta(seconds=15)
CRASH_LEASE = timedelta(seconds=3)
RUNTIME_MAX_ATTEMPTS = 3
"""The retry budget the demo's "runtime" resolves on a job's first lease, as azync's
workers do for jobs enqueued without an explicit one (DAG tasks, workflow tasks)."""


class Demo:
    def __init__(
        self,
        store: ConsoleStore,
        *,
        speed: float = 1.0,
        duration: float | None = None,
        seed: int | None = None,
        stop: threading.Event | None = None,
        maintain: bool = True,
    ) -> None:
        self.store = store
        self.maintain = maintain
        """Run the maintenance loop (promote, reap, DAG scheduling, vacuums): only where
        every row is the demo's own."""
        self.speed = speed
        self.duration = duration
        self.stop_event = stop or threading.Event()
        self.rng = random.Random(seed)
        self.counts: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._blocked: set[str] = set()
        self.started = 0.0

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> Demo:
        self.started = time.monotonic()
        loops: list[tuple[str, Callable[[], None]]] = [
            ("producer", self._produce),
            ("queue-worker-1", lambda: self._work(Source.QUEUE, list(QUEUE_KINDS))),
            ("queue-worker-2", lambda: self._work(Source.QUEUE, list(QUEUE_KINDS))),
            ("event-worker", lambda: self._work(Source.EVENT, self._subscriber_names())),
            ("dag-worker", self._work_dags),
            ("workflow-worker", self._work_workflows),
        ]
        if self.maintain:
            loops.append(("maintenance", self._maintain))
        for name, fn in loops:
            t = threading.Thread(target=self._guard(fn), name=f"demo-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        self.stop_event.set()

    def join(self, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))

    def wait(self) -> None:
        """Block until the duration ends or ``stop()``."""
        while not self._done():
            self.stop_event.wait(0.2)
        self.stop()
        self.join()

    def _done(self) -> bool:
        if self.stop_event.is_set():
            return True
        return self.duration is not None and time.monotonic() - self.started >= self.duration

    def _sleep(self, seconds: float) -> bool:
        """Sleep (scaled by speed); False once the demo should stop."""
        if self._done():
            return False
        return not self.stop_event.wait(seconds / self.speed)

    def _count(self, what: str, n: int = 1) -> None:
        if n:
            with self._lock:
                self.counts[what] += n

    def _guard(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Keep a loop alive through store errors (a lost database, a lost race)."""

        def run() -> None:
            while not self._done():
                try:
                    fn()
                    return
                except errors.StoreError as exc:
                    with self._lock:
                        self.errors[type(exc).__name__] += 1
                    self._sleep(1.0)

        return run

    def summary(self) -> dict[str, int]:
        with self._lock:
            out = dict(sorted(self.counts.items()))
            out.update({f"error.{k}": v for k, v in sorted(self.errors.items())})
        return out

    # --- setup and producers -------------------------------------------------------------

    def _setup(self) -> None:
        for event_type, subs in SUBSCRIBERS.items():
            for name, _ in subs:
                self.store.register_subscriber(Subscriber(name, event_type, max_attempts=5))

    def _subscriber_names(self) -> list[str]:
        return [name for subs in SUBSCRIBERS.values() for name, _ in subs]

    def _produce(self) -> None:
        self._setup()
        # One of every workload first, so each screen has something to show at once
        # (and a short run exercises every path, however slow the machine).
        self._publish()
        for make in (lambda: etl_dag(3), approval_dag, lambda: saga_dag(suspend=False)):
            self._create_dag(make())
        self._start_workflow()
        tick = 0.1
        last_check = 0.0
        while self._sleep(tick):
            now = time.monotonic()
            if now - last_check > 3:
                last_check = now
                depths = self.store.kind_depths(Source.QUEUE)
                self._blocked = {k for k, d in depths.items() if d.pending > MAX_PENDING}
            for kind, prof in QUEUE_KINDS.items():
                if kind not in self._blocked and self.rng.random() < prof.rate * tick:
                    self._enqueue(kind, prof)
            if self.rng.random() < EVENT_RATE * tick:
                self._publish()
            if self.rng.random() < DAG_RATE * tick:
                self._create_dag(self._random_dag())
            if self.rng.random() < WORKFLOW_RATE * tick:
                self._start_workflow()

    def _enqueue(self, kind: str, prof: Profile) -> None:
        delay = self.rng.uniform(*prof.delay) if prof.delay[1] else 0.0
        p = EnqueueParams(
            kind=kind,
            payload={"n": self.rng.randrange(1_000_000), "demo": True},
            meta={"tenant": self.rng.choice(["acme", "globex", "initech"])},
            delay=timedelta(seconds=delay),
            max_attempts=prof.max_attempts,
            max_attempts_explicit=True,
        )
        if kind == "email.send" and self.rng.random() < 0.2:
            p.idempotency_key = f"welcome-{self.rng.randrange(50)}"
            p.idempotency_ttl = timedelta(minutes=1)
        self._count("jobs.enqueued" if self.store.enqueue(p) else "jobs.deduplicated")

    def _publish(self) -> None:
        event_type = self.rng.choice(list(SUBSCRIBERS))
        agg = f"{self.rng.randrange(10_000)}"
        n = self.store.publish(
            PublishParams(
                type=event_type,
                payload={"id": agg, "amount": self.rng.randrange(5, 500)},
                aggregate_type=event_type.split(".")[0],
                aggregate_id=agg,
                version=1,
            )
        )
        self._count("events.published")
        self._count("events.deliveries", n)

    def _random_dag(self) -> DAGParams:
        which = self.rng.random()
        if which < 0.4:
            return etl_dag(self.rng.randrange(3, 7))
        if which < 0.7:
            return approval_dag()
        return saga_dag(suspend=self.rng.random() < 0.4)

    def _create_dag(self, p: DAGParams) -> None:
        inserted, _ = self.store.create_dag(p)
        self._count(f"dags.created.{p.name}" if inserted else "dags.deduplicated")

    def _start_workflow(self) -> None:
        inserted, _ = self.store.start_workflow(
            WorkflowStartParams(name=WORKFLOW, version="1", input={"cart": uuid.uuid4().hex[:8]})
        )
        self._count("workflows.started" if inserted else "workflows.deduplicated")

    # --- workers -------------------------------------------------------------------------

    def _work(self, source: Source, kinds: list[str]) -> None:
        while self._sleep(0.05):
            busy = False
            for kind in kinds:
                crashy = QUEUE_KINDS.get(kind, Profile(0)).crash > 0
                for job in self._lease(source, kind, CRASH_LEASE if crashy else LEASE):
                    busy = True
                    self._settle(job, self._profile(source, kind))
            if not busy and not self._sleep(0.3):
                return

    def _lease(self, source: Source, kind: str, lease: timedelta = LEASE) -> list[Job]:
        params = DequeueParams(
            kind=kind,
            limit=4,
            lease=lease,
            default_max_attempts=RUNTIME_MAX_ATTEMPTS,
            override_default=True,
        )
        return self.store.dequeue_batch(source, params)

    def _profile(self, source: Source, kind: str) -> Profile:
        if source == Source.EVENT:
            fail = next((f for subs in SUBSCRIBERS.values() for n, f in subs if n == kind), 0.0)
            return Profile(rate=0, fail=fail)
        return QUEUE_KINDS.get(kind, Profile(rate=0))

    def _settle(self, job: Job, prof: Profile, result: Any = None) -> None:
        """Play one attempt of ``job`` as ``prof`` says; NotFound means the lease was lost
        (reaped or cancelled meanwhile), which real workers see too."""
        assert job.lease_token is not None
        token = job.lease_token
        self._sleep(self.rng.uniform(0.2, 1.0) * prof.work)
        roll = self.rng.random()
        try:
            if roll < prof.crash:
                self._count("jobs.crashed")  # never settled: the lease expires
            elif roll < prof.crash + prof.fail:
                budget = min(n for n in (job.max_attempts, prof.max_attempts) if n > 0)
                if job.attempt >= budget:
                    self.store.dead(job.id, token, self._error(job))
                    self._count("jobs.dead")
                else:
                    backoff = timedelta(seconds=min(30.0, 0.5 * 2**job.attempt))
                    self.store.reschedule(job.id, token, backoff, self._error(job))
                    self._count("jobs.retried")
            elif roll < prof.crash + prof.fail + prof.snooze:
                self.store.snooze(job.id, token, timedelta(seconds=5), "snooze budget spent")
                self._count("jobs.snoozed")
            elif roll < prof.crash + prof.fail + prof.snooze + prof.skip:
                self.store.skip(job.id, token, "nothing to do")
                self._count("jobs.skipped")
            elif job.source == Source.DAG:
                self.store.ack_task_result(job.id, token, result)
                self._count("dag.tasks.done")
            else:
                self.store.ack(job.id, token)
                self._count("jobs.acked")
        except errors.NotFound:
            self._count("jobs.lost_lease")

    def _error(self, job: Job) -> str:
        return self.rng.choice(
            [
                f"{job.kind}: upstream returned 503",
                f"{job.kind}: timeout after 30s",
                f"{job.kind}: connection reset by peer",
                f"{job.kind}: validation failed: field 'email' is required",
            ]
        )

    def _work_dags(self) -> None:
        kinds = dag_kinds()
        fail = {"saga.ship": 0.5, "etl.transform": 0.08, "saga.refund": 0.1}
        signalled: set[uuid.UUID] = set()
        while self._sleep(0.1):
            busy = False
            for kind in kinds:
                for job in self._lease(Source.DAG, kind):
                    busy = True
                    prof = Profile(rate=0, fail=fail.get(kind, 0.0), max_attempts=2)
                    self._settle(job, prof, {"task": job.task_key, "rows": self.rng.randrange(999)})
            if self.rng.random() < 0.3:
                self._approve(signalled)
            if not busy and not self._sleep(0.3):
                return

    def _approve(self, signalled: set[uuid.UUID]) -> None:
        """Approve waiting approval runs (a human clicking a button, some seconds later)."""
        runs, _ = self.store.list_dags(
            DAGFilter(name="approval.flow", state=DAGState.RUNNING), 0, 20
        )
        for run in runs:
            if run.id in signalled or self.rng.random() < 0.5:
                continue
            delivered, _ = self.store.signal(
                DAGSignalParams(run.id, "approved", f"approve-{run.id}", {"by": "ops"})
            )
            if delivered:
                signalled.add(run.id)
                self._count("dags.signalled")

    def _work_workflows(self) -> None:
        task_kind = f"$wf:{WORKFLOW}"
        op_kind = f"$op:{OPERATION}@{OPERATION_VERSION}"
        while self._sleep(0.1):
            busy = False
            for job in self._lease(Source.WORKFLOW, task_kind):
                busy = True
                self._workflow_step(job, op_kind)
            for job in self._lease(Source.WORKFLOW, op_kind):
                busy = True
                self._operation(job)
            if not busy and not self._sleep(0.3):
                return

    def _workflow_step(self, job: Job, op_kind: str) -> None:
        """Replay the history as azync's workflow worker does (workflow/worker.go): a
        settled or suspended execution is left alone; a recorded charge outcome settles
        it (OperationCompleted: succeeded, OperationFailed: failed, each with its terminal
        history event); else the charge is scheduled once."""
        assert job.run_id is not None and job.lease_token is not None
        wf = job.run_id
        try:
            state = self.store.get_workflow_execution(wf).state
            history = self.store.list_history(wf)
            outcome = next(
                (h for h in history if h.type in ("OperationCompleted", "OperationFailed")), None
            )
            if state in WORKFLOW_TERMINAL_STATES or state == WorkflowState.SUSPENDED:
                pass
            elif outcome is not None and outcome.type == "OperationFailed":
                reason = str((outcome.payload or {}).get("error") or "operation failed")
                self.store.fail_workflow(wf, reason)
                self.store.append_history(wf, "WorkflowFailed", {"reason": reason})
                self._count("workflows.failed")
            elif outcome is not None:
                result = {"charged": True, "seq": outcome.seq}
                self.store.complete_workflow(wf, result)
                self.store.append_history(wf, "WorkflowCompleted", result)
                self._count("workflows.completed")
            elif not any(h.type == "OperationScheduled" for h in history):
                self._schedule_charge(wf, op_kind, history[-1].seq + 1 if history else 1)
            self.store.ack(job.id, job.lease_token)
        except errors.NotFound:
            self._count("jobs.lost_lease")

    def _schedule_charge(self, wf: uuid.UUID, op_kind: str, seq: int) -> None:
        """The operation job and OperationScheduled event azync's ExecuteOperation writes
        (workflow/operation.go): the execution key is the scheduling event's sequence."""
        key = f"{wf}:{seq}"
        name, version = OPERATION, OPERATION_VERSION
        amount = {"amount": self.rng.randrange(5, 500)}
        job_id = self.store.schedule_operation(
            ScheduleOperationParams(
                workflow_id=wf,
                kind=op_kind,
                payload={
                    "name": name,
                    "version": version,
                    "input": amount,
                    "execution_key": key,
                    "workflow_name": WORKFLOW,
                    "scheduled_seq": 0,
                },
                meta={
                    "execution_key": key,
                    "workflow_name": WORKFLOW,
                    "op_name": name,
                    "op_version": version,
                },
                execution_key=key,
                max_attempts=3,
            )
        )
        self.store.append_history(
            wf,
            "OperationScheduled",
            {
                "name": name,
                "version": version,
                "job_id": str(job_id),
                "execution_key": key,
                "input": amount,
            },
        )

    def _operation(self, job: Job) -> None:
        assert job.run_id is not None and job.lease_token is not None
        roll = self.rng.random()
        try:
            if roll < 0.15:
                self.store.mark_uncertain(
                    job.id, job.lease_token, "charge timed out: outcome unknown"
                )
                self._count("workflows.uncertain")
                return
            self.store.append_history(
                job.run_id,
                "OperationCompleted",
                {
                    "name": job.meta.get("op_name", ""),
                    "version": job.meta.get("op_version", ""),
                    "execution_key": job.meta.get("execution_key", ""),
                    "result": {"ok": True},
                },
            )
            self.store.ack(job.id, job.lease_token)
            self.store.schedule_task(job.run_id, f"$wf:{WORKFLOW}")
            self._count("workflows.operations")
        except errors.NotFound:
            self._count("jobs.lost_lease")

    # --- maintenance ---------------------------------------------------------------------

    def _maintain(self) -> None:
        """The pass ``qctl maintain`` runs, every second; vacuums every 30 s."""
        last_vacuum = time.monotonic()
        vacuums = [
            *ops_vacuum.completed(Source.QUEUE, RETENTION),
            *ops_vacuum.completed(Source.EVENT, RETENTION),
            ops_vacuum.dags(RETENTION),
            ops_vacuum.workflows(RETENTION),
        ]
        while self._sleep(1.0):
            for step in ops_maintain.one_pass(self.store, list(Source), MAX_REAPS):
                self._count(f"maint.{step.step}", step.count)
                if step.killed:
                    self._count("maint.reaped_dead", step.killed)
            if time.monotonic() - last_vacuum > 30:
                last_vacuum = time.monotonic()
                for done in ops_vacuum.execute(self.store, vacuums):
                    self._count("maint.vacuumed", done.count or 0)


# --- DAG shapes ---------------------------------------------------------------------------


def dag_kinds() -> list[str]:
    """Every task and compensation kind the demo's DAGs run (internal kinds excluded)."""
    kinds = {
        k
        for p in (etl_dag(1), approval_dag(), saga_dag(False))
        for t in p.tasks
        for k in (t.kind, t.compensation_kind)
    }
    return sorted(kinds - {"", KIND_SLEEP, KIND_SIGNAL})


def etl_dag(width: int) -> DAGParams:
    """extract -> transform_0..n (fan-out) -> load (fan-in) -> publish."""
    parts = [f"transform_{i}" for i in range(width)]
    tasks = [DAGTask("extract", "etl.extract", compensation_kind="etl.cleanup")]
    tasks += [DAGTask(p, "etl.transform", {"part": i}) for i, p in enumerate(parts)]
    tasks += [DAGTask("load", "etl.load"), DAGTask("publish", "etl.publish")]
    deps = [DAGDep(p, "extract") for p in parts] + [DAGDep("load", p) for p in parts]
    deps.append(DAGDep("publish", "load"))
    return DAGParams(name="etl.nightly", tasks=tasks, deps=deps, meta={"demo": "1"})


def approval_dag() -> DAGParams:
    """submit -> wait for the "approved" signal -> cool-off sleep -> finalize."""
    tasks = [
        DAGTask("submit", "approval.submit"),
        DAGTask("approval", KIND_SIGNAL, signal_name="approved"),
        DAGTask("cool_off", KIND_SLEEP, sleep_for=timedelta(seconds=5)),
        DAGTask("finalize", "approval.finalize"),
    ]
    deps = [
        DAGDep("approval", "submit"),
        DAGDep("cool_off", "approval"),
        DAGDep("finalize", "cool_off"),
    ]
    return DAGParams(name="approval.flow", tasks=tasks, deps=deps)


def saga_dag(suspend: bool) -> DAGParams:
    """reserve -> charge -> ship; a failed ship compensates (refund, release) or suspends."""
    tasks = [
        DAGTask("reserve", "saga.reserve", compensation_kind="saga.release"),
        DAGTask("charge", "saga.charge", compensation_kind="saga.refund"),
        DAGTask("ship", "saga.ship", max_attempts=1),
    ]
    deps = [DAGDep("charge", "reserve"), DAGDep("ship", "charge")]
    return DAGParams(
        name="order.saga",
        tasks=tasks,
        deps=deps,
        on_failure=OnFailurePolicy.SUSPEND if suspend else OnFailurePolicy.CANCEL,
    )
