"""The maintenance pass azync's engines run, for stores without Go workers (or beside
them: every step is idempotent and takes the same row locks as theirs), and the loop
``qctl maintain`` and ``qctl demo`` run it in."""

from __future__ import annotations

import contextlib
import textwrap
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from qctl.core.errors import is_connection_error
from qctl.systems.azync.ops.results import MaintainStep
from qctl_kit import errors
from qctl_store.types import KIND_SIGNAL, KIND_SLEEP, Source

if TYPE_CHECKING:
    from qctl_store.contract import ConsoleStore, LeadershipLease

LEADERSHIP_NAME = "maintain"
"""The leadership handle maintainers compete for. azync itself only elects ``cron``
(queue/cron.go); its engines promote and reap in every worker without election, so
this name never takes leadership away from a Go process."""

DEFAULT_MAX_REAPS = 5
"""azync's default reap budget (``queue`` engine ``MaxReaps``): lease expiries a job
survives before it is dead. Must match the Go deployment's."""

INTERNAL_KINDS = frozenset({KIND_SLEEP, KIND_SIGNAL})
"""DAG timer/signal tasks: settled by complete_due_sleeps and signals, never promoted
(promoted to pending, nothing would ever lease and complete them)."""

REAPED_SOURCES = frozenset({Source.QUEUE, Source.EVENT, Source.DAG})
"""The sources azync reaps: only its queue, event and DAG engines run a reaper
(azync's ``internal/engine/maintenance.go``). Workflow-task leases are never extended
(``workflow/worker.go``), so a lapsed one says nothing of its worker: reaping it would
hand a running task to a second worker, or kill it with its execution still running."""

BACKOFF_MAX = 30.0


def one_pass(store: ConsoleStore, sources: list[Source], max_reaps: int) -> list[MaintainStep]:
    """One maintenance pass: per source promote_due over its kinds and, where azync
    reaps (``REAPED_SOURCES``), reap_expired; then the DAG scheduler steps in azync's
    load-bearing order."""
    steps: list[MaintainStep] = []
    for source in sources:
        kinds = [k for k in store.list_kinds(source) if k not in INTERNAL_KINDS]
        if not kinds:
            continue
        steps.append(MaintainStep("promote_due", store.promote_due(source, kinds), source))
        if source not in REAPED_SOURCES:
            continue
        reaped, killed = store.reap_expired(source, kinds, max_reaps)
        steps.append(MaintainStep("reap_expired", reaped, source, killed))
    steps.append(MaintainStep("promote_unblocked", store.promote_unblocked()))
    steps.append(MaintainStep("deliver_buffered_signals", store.deliver_buffered_signals()))
    steps.append(MaintainStep("complete_due_sleeps", store.complete_due_sleeps()))
    failures = store.apply_failure_policy()
    steps.append(MaintainStep("apply_failure_policy", len(failures), failures=list(failures)))
    steps.append(MaintainStep("complete_dags", store.complete_dags()))
    return steps


def run(
    open_store: Callable[[], ConsoleStore],
    sources: list[Source],
    max_reaps: int,
    interval: float,
    stop: threading.Event,
    log: Callable[[str], None],
    on_pass: Callable[[list[MaintainStep]], None],
    once: bool = False,
) -> None:
    """Run ``one_pass`` every ``interval`` seconds under leader election until ``stop``
    is set. A lost connection is one ``log`` line: the store and the lease are dropped,
    and after a back-off (1 s, doubling to 30 s) a new store is opened and leadership
    re-acquired. A statement that timed out (``errors.Timeout``) is one ``log`` line and
    the next pass runs at the usual interval. Other errors propagate."""
    store: ConsoleStore | None = None
    lease: LeadershipLease | None = None
    backoff = 1.0

    def drop() -> None:
        nonlocal store, lease
        if lease is not None:
            with contextlib.suppress(Exception):
                lease.release()
        if store is not None:
            with contextlib.suppress(Exception):
                store.close()
        store, lease = None, None

    try:
        while not stop.is_set():
            try:
                if store is None:
                    store = open_store()
                if lease is not None and not lease.valid():
                    log("maintain: leadership lost")
                    with contextlib.suppress(Exception):
                        lease.release()
                    lease = None
                if lease is None:
                    lease, acquired = store.acquire_leadership_lease(LEADERSHIP_NAME)
                    lease = lease if acquired else None
                if lease is None:
                    log("maintain: another maintainer holds leadership; skipping this pass")
                else:
                    on_pass(one_pass(store, sources, max_reaps))
                backoff = 1.0
            except errors.Timeout as exc:
                if once:
                    raise
                # Another session's lock (a migration, a long transaction) stopped this
                # pass: the connection and the leadership stay, the next pass tries again.
                log(f"maintain: {' '.join(str(exc).split())}; next pass in {interval:g}s")
                stop.wait(interval)
                continue
            except Exception as exc:
                if once or not is_connection_error(exc):
                    raise
                # Cut at a word, marked, so the line never ends mid-word.
                text = textwrap.shorten(str(exc), 160, placeholder=" …") or type(exc).__name__
                log(f"maintain: connection lost ({text}); reconnecting in {backoff:g}s")
                drop()
                stop.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                continue
            if once:
                return
            stop.wait(interval)
    finally:
        drop()
