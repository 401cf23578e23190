"""``qctl maintain``: the housekeeping azync's engines do, for stores without Go workers
(or beside them; every step is idempotent and uses the same row locks as theirs)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.common import Output, SourceOpt, Yes
from qctl.cli.errors import Failed
from qctl.cli.output import OutputFormat, emit_rows, note
from qctl.cli.parse import ParseError
from qctl_store.contract import DAGStore, LeadershipLease, LeaseElector
from qctl_store.types import KIND_SIGNAL, KIND_SLEEP, Source

if TYPE_CHECKING:
    from qctl.cli.context import AnyStore

LEADERSHIP_NAME = "maintain"
"""The leadership handle maintainers compete for. azync itself only elects ``cron``
(queue/cron.go); its engines promote and reap in every worker without election, so
this name never takes leadership away from a Go process."""

INTERNAL_KINDS = frozenset({KIND_SLEEP, KIND_SIGNAL})
"""DAG timer/signal tasks: settled by complete_due_sleeps and signals, never promoted
(azync's conformance: internal kinds stay internal)."""

COLUMNS = ["step", "source", "count"]


def one_pass(store: AnyStore, sources: list[Source], max_reaps: int) -> list[dict[str, Any]]:
    """One maintenance pass: per source promote_due and reap_expired over its kinds,
    then the DAG scheduler steps in azync's load-bearing order."""
    rows: list[dict[str, Any]] = []
    for source in sources:
        kinds = [k for k in store.list_kinds(source) if k not in INTERNAL_KINDS]
        if not kinds:
            continue
        rows.append(
            {"step": "promote_due", "source": source, "count": store.promote_due(source, kinds)}
        )
        reaped, killed = store.reap_expired(source, kinds, max_reaps)
        rows.append({"step": "reap_expired", "source": source, "count": reaped, "killed": killed})
    if isinstance(store, DAGStore):
        rows.append({"step": "promote_unblocked", "count": store.promote_unblocked()})
        rows.append({"step": "deliver_buffered_signals", "count": store.deliver_buffered_signals()})
        rows.append({"step": "complete_due_sleeps", "count": store.complete_due_sleeps()})
        failures = store.apply_failure_policy()
        rows.append({"step": "apply_failure_policy", "count": len(failures), "failures": failures})
        rows.append({"step": "complete_dags", "count": store.complete_dags()})
    return rows


def maintain(
    ctx: typer.Context,
    once: Annotated[bool, typer.Option("--once", help="One pass, then exit.")] = False,
    interval: Annotated[
        str, typer.Option("--interval", metavar="DURATION", help="Time between passes.")
    ] = "5s",
    source: SourceOpt = None,
    max_reaps: Annotated[
        int,
        typer.Option(
            "--max-reaps", metavar="N", min=1, help="Lease expiries a job survives (azync: 5)."
        ),
    ] = 5,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Promote due jobs, reap expired leases, advance DAGs; under leader election
    ("maintain"), so several maintainers do not duplicate work. Ctrl-C stops (exit 0)."""
    pause = common.duration(interval, "--interval") or timedelta(0)
    if not once and pause <= timedelta(0):
        raise ParseError("--interval must be positive")
    store = common.writable(ctx, "maintain")
    if not isinstance(store, LeaseElector):
        raise Failed("this backend has no leader election")
    sources = common.sources(source)
    lease: LeadershipLease | None = None
    try:
        while True:
            if lease is not None and not lease.valid():
                note("maintain: leadership lost")
                lease.release()
                lease = None
            if lease is None:
                lease, acquired = store.acquire_leadership_lease(LEADERSHIP_NAME)
                if not acquired:
                    lease = None
            if lease is None:
                note("maintain: another maintainer holds leadership; skipping this pass")
            else:
                rows = one_pass(store, sources, max_reaps)
                emit_rows(rows, COLUMNS, output if once else _streaming(output))
            if once:
                return
            time.sleep(pause.total_seconds())
    except KeyboardInterrupt:
        note("maintain: stopped")
    finally:
        if lease is not None:
            lease.release()


def _streaming(output: OutputFormat) -> OutputFormat:
    """A long-running loop prints one JSON document per line (``json`` becomes ``jsonl``)."""
    return OutputFormat.JSONL if output == OutputFormat.JSON else output
