"""One verb on one DAG or workflow by id, as ``dags`` and ``workflows`` run them."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from qctl.cli import common
from qctl.cli.output import OutputFormat, emit_result
from qctl.systems.azync.cli import options

if TYPE_CHECKING:
    from qctl.systems.azync.ops.results import RunOutcome
    from qctl_store.contract import ConsoleStore


def act(
    ctx: typer.Context,
    group: str,
    entity: str,
    id: str,
    action: str,
    done: str,
    output: OutputFormat,
    call: Callable[[ConsoleStore, uuid.UUID, bool], RunOutcome],
    *,
    destructive: bool = False,
    yes: bool = False,
    dry_run: bool = False,
) -> None:
    """Resolve ``id`` (an ``entity`` id of command ``group``) and run the ops ``call``
    on it: its dry run first (the guards), so a refusal comes before any question; a
    destructive act shows the run and confirms, and with ``dry_run`` stops there."""
    if not dry_run:
        common.cli(ctx).require_writable(f"{group} {action}")
    st = options.store(ctx)
    ident = options.resolve(ctx, entity, id)
    plan = call(st, ident, True)
    label = "DAG" if entity == "dag" else entity
    what = f"{label} {plan.name} {ident} ({plan.state})"
    # Which tasks it cancels and leaves running, in the dry run and the question alike.
    effects = f": {plan.effects()}" if plan.effects() else ""
    if destructive and not common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would {action} {what}{effects}",
        f"{action.capitalize()} {what}{effects}?",
    ):
        return
    outcome = call(st, ident, False)
    emit_result(common.record_of(outcome), f"{done} {label} {ident}", output)
