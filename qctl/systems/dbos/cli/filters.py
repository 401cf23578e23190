"""DBOS's workflow filters, declared once for ``workflows list`` and every verb that
selects by filter."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from qctl.cli import common, complete
from qctl.systems.dbos import reads
from qctl.systems.dbos.cli.base import to_ms

Many = list[str] | None
StatusOpt = Annotated[
    Many,
    typer.Option(
        "--state",
        "--status",
        metavar="STATUS",
        help="DBOS status (repeatable; --status: DBOS's word): " + ", ".join(reads.STATUSES) + ".",
        autocompletion=complete.choices(reads.STATUSES),
    ),
]
NameOpt = Annotated[
    Many, typer.Option("--name", metavar="NAME", help="Workflow name (repeatable).")
]
QueueOpt = Annotated[
    Many, typer.Option("--queue", metavar="QUEUE", help="Queue name (repeatable).")
]
VersionOpt = Annotated[
    Many,
    typer.Option(
        "--application-version",
        "--app-version",
        metavar="VERSION",
        help="Application version (repeatable; --app-version: DBOS's field name).",
    ),
]
AppNameOpt = Annotated[
    Many,
    typer.Option(
        "--application-name",
        metavar="NAME",
        help="Owning application (repeatable); as in DBOS's list, rows no application"
        " claims match too.",
    ),
]
ExecutorOpt = Annotated[
    Many, typer.Option("--executor", metavar="ID", help="Executor id (repeatable).")
]
UserOpt = Annotated[
    Many, typer.Option("--user", metavar="USER", help="Authenticated user (repeatable).")
]
ParentOpt = Annotated[
    Many, typer.Option("--parent", metavar="ID", help="Parent workflow id (repeatable).")
]
HasParentOpt = Annotated[
    bool | None,
    typer.Option(
        "--has-parent/--no-parent",
        help="Only child workflows (or only top-level ones).",
        show_default=False,
    ),
]
ForkedOpt = Annotated[
    bool | None,
    typer.Option("--forked/--not-forked", help="Only forks (or no forks).", show_default=False),
]
ScheduleOpt = Annotated[
    Many,
    typer.Option("--schedule", metavar="NAME", help="Started by this schedule (repeatable)."),
]
CreatedAfter = Annotated[
    str | None, typer.Option("--created-after", metavar="INSTANT", help="Created at or after.")
]
CreatedBefore = Annotated[
    str | None, typer.Option("--created-before", metavar="INSTANT", help="Created before.")
]
CompletedAfter = Annotated[
    str | None,
    typer.Option("--completed-after", metavar="INSTANT", help="Completed at or after."),
]
CompletedBefore = Annotated[
    str | None, typer.Option("--completed-before", metavar="INSTANT", help="Completed before.")
]
DequeuedAfter = Annotated[
    str | None,
    typer.Option("--dequeued-after", metavar="INSTANT", help="Dequeued (started) at or after."),
]
DequeuedBefore = Annotated[
    str | None,
    typer.Option("--dequeued-before", metavar="INSTANT", help="Dequeued (started) before."),
]
PrefixOpt = Annotated[str, typer.Option("--prefix", metavar="TEXT", help="Workflow id prefix.")]
AttrOpt = Annotated[
    Many,
    typer.Option(
        "--attribute",
        metavar="KEY=VALUE",
        help="Attribute equals (VALUE as JSON or text; repeatable: all must match).",
    ),
]

FILTERS: common.Options = [
    ("status", StatusOpt, None),
    ("name", NameOpt, None),
    ("queue", QueueOpt, None),
    ("application_version", VersionOpt, None),
    ("application_name", AppNameOpt, None),
    ("executor", ExecutorOpt, None),
    ("user", UserOpt, None),
    ("parent", ParentOpt, None),
    ("has_parent", HasParentOpt, None),
    ("forked", ForkedOpt, None),
    ("schedule", ScheduleOpt, None),
    ("created_after", CreatedAfter, None),
    ("created_before", CreatedBefore, None),
    ("completed_after", CompletedAfter, None),
    ("completed_before", CompletedBefore, None),
    ("dequeued_after", DequeuedAfter, None),
    ("dequeued_before", DequeuedBefore, None),
    ("prefix", PrefixOpt, ""),
    ("attribute", AttrOpt, None),
]
"""DBOS's workflow filters (``list_workflows`` of dbos/_sys_db.py), declared once for
``workflows list`` and every verb that selects by filter."""


def _attributes(items: list[str] | None) -> dict[str, Any]:
    import json

    from qctl.core.parse import ParseError, parse_key_value

    out: dict[str, Any] = {}
    for item in items or []:
        try:
            key, value = parse_key_value(item)
        except ParseError as exc:
            raise ParseError(f"--attribute: {exc}") from None
        try:
            out[key] = json.loads(value)
        except ValueError:
            out[key] = value
    return out


def workflow_filter(
    ctx: typer.Context | None = None,
    status: Many = None,
    name: Many = None,
    queue: Many = None,
    application_version: Many = None,
    application_name: Many = None,
    executor: Many = None,
    user: Many = None,
    parent: Many = None,
    has_parent: bool | None = None,
    forked: bool | None = None,
    schedule: Many = None,
    created_after: str | None = None,
    created_before: str | None = None,
    completed_after: str | None = None,
    completed_before: str | None = None,
    dequeued_after: str | None = None,
    dequeued_before: str | None = None,
    prefix: str = "",
    attribute: Many = None,
) -> reads.WorkflowFilter:
    """The ``WorkflowFilter`` of the filter options."""
    return reads.WorkflowFilter(
        status=tuple(s.upper() for s in status or ()),
        name=tuple(name or ()),
        queue_name=tuple(queue or ()),
        app_version=tuple(application_version or ()),
        application_name=tuple(application_name or ()),
        executor_id=tuple(executor or ()),
        user=tuple(user or ()),
        parent_workflow_id=tuple(parent or ()),
        has_parent=has_parent,
        is_fork=forked,
        schedule_name=tuple(schedule or ()),
        start_time=to_ms(common.instant(created_after, "--created-after")),
        end_time=to_ms(common.instant(created_before, "--created-before")),
        completed_after=to_ms(common.instant(completed_after, "--completed-after")),
        completed_before=to_ms(common.instant(completed_before, "--completed-before")),
        dequeued_after=to_ms(common.instant(dequeued_after, "--dequeued-after")),
        dequeued_before=to_ms(common.instant(dequeued_before, "--dequeued-before")),
        workflow_id_prefix=prefix,
        attributes=_attributes(attribute),
    )


def filtered(without: str = "") -> Any:
    """Give a command the filter options in place of its ``f`` parameter (``without``
    one a verb uses for something else: ``rewind --application-version`` is the version
    to run on, as in DBOS's ``rewind_workflow``)."""
    return common.with_options("f", [o for o in FILTERS if o[0] != without], workflow_filter)
