"""``qctl subscribers``: who receives which event types."""

from __future__ import annotations

from typing import Annotated

import typer

from qctl.cli import common
from qctl.cli.common import DryRun, Output, Yes
from qctl.cli.output import OutputFormat, emit_rows, rows_of
from qctl.core.parse import ParseError
from qctl.systems.azync import SYSTEM
from qctl.systems.azync.cli import options
from qctl.systems.azync.ops import events as ops_events

app = common.app("subscribers", SYSTEM.commands["subscribers"].help)


@app.command("list")
def list_subscribers(
    ctx: typer.Context,
    event_type: Annotated[str, typer.Option("--event-type", "-t", help="Only this type.")] = "",
    output: Output = OutputFormat.TABLE,
) -> None:
    """Subscriptions: event type, subscriber, attempt budget."""
    views = options.store(ctx).list_subscriber_views(event_type)
    emit_rows(
        rows_of(views),
        ["event_type", "subscriber", "max_attempts", "created_at", "updated_at"],
        output,
    )


@app.command("register")
@common.writes
def register(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Subscriber name (the delivery job kind).")
    ],
    event_type: Annotated[str, typer.Argument(metavar="EVENT_TYPE", help="Event type to receive.")],
    max_attempts: Annotated[
        int,
        typer.Option("--max-attempts", metavar="N", min=1, help="Attempt budget per delivery."),
    ] = 25,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Subscribe NAME to EVENT_TYPE. Updates the budget when already subscribed."""
    store = options.writable(ctx, "subscribers register")
    done = ops_events.register_subscriber(store, name, event_type, max_attempts)
    common.done(
        done,
        f"registered {name} for {event_type} (max attempts {max_attempts})",
        output,
    )


@app.command("delete")
def delete(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Subscriber name.")],
    event_type: Annotated[
        str | None,
        typer.Argument(
            metavar="EVENT_TYPE", help="Only this subscription (default: all of NAME's)."
        ),
    ] = None,
    drain: Annotated[
        bool,
        typer.Option(
            "--drain",
            help="Also delete NAME's deliveries not run yet (pending, scheduled or paused).",
        ),
    ] = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    output: Output = OutputFormat.TABLE,
) -> None:
    """Unsubscribe NAME (from EVENT_TYPE, or from everything)."""
    if drain and event_type:
        raise ParseError(
            "--drain deletes every undelivered delivery of NAME; it cannot be narrowed "
            "to one event type (delete the subscription, then use qctl jobs delete)"
        )
    if not dry_run:
        common.cli(ctx).require_writable("subscribers delete")
    store = options.store(ctx)
    plan = ops_events.delete_subscriber(store, name, event_type or "", drain, dry_run=True)
    drained_text = f" and delete {plan.drained} undelivered deliveries" if drain else ""
    what = f"{name}" + (f" from {event_type}" if event_type else " from every event type")
    if common.proceed(
        dry_run,
        yes,
        output,
        plan,
        f"would delete {plan.count} subscription(s){drained_text}",
        f"Unsubscribe {what}{drained_text}?",
    ):
        done = ops_events.delete_subscriber(store, name, event_type or "", drain)
        common.done(
            done,
            f"removed {done.count} subscription(s) of {name}"
            + (f", deleted {done.drained} undelivered deliveries" if drain else ""),
            output,
        )
