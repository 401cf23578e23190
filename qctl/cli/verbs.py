"""The command line's side of the verb engine (``qctl.core.verbs``): the options every
bulk verb of every system takes, and one ``act`` that plans, asks, runs and reports.

A system's command passes its declared ``Verb``, its database opener and what the
operator selected; nothing here knows a system."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from qctl.cli import common
from qctl.cli.common import MAX_TARGETS, DryRun, MaxOpt, Output, Yes
from qctl.cli.output import OutputFormat, emit_result, emit_rows, note
from qctl.core import audit, verbs
from qctl.core.audit import describe
from qctl.core.errors import WrongState
from qctl_kit.errors import InvalidInput

H = TypeVar("H")

PlanIn = Annotated[
    Path | None,
    typer.Option(
        "--plan",
        metavar="FILE",
        help="Run exactly the targets of a plan --plan-out wrote (each checked again).",
        dir_okay=False,
    ),
]
PlanOut = Annotated[
    Path | None,
    typer.Option(
        "--plan-out",
        metavar="FILE",
        help="Write the plan (every target id and a digest) to FILE; a dry run.",
        dir_okay=False,
    ),
]
SAMPLE_COLUMNS = ["id", "state", "label"]


@dataclass(frozen=True)
class Run:
    """How the operator runs a bulk verb: the options every one takes (``running``)."""

    max_targets: int = MAX_TARGETS
    dry_run: bool = False
    plan_out: Path | None = None
    plan_in: Path | None = None
    yes: bool = False
    output: OutputFormat = OutputFormat.TABLE

    @property
    def planning(self) -> bool:
        """Only planning (a dry run or ``--plan-out``): it only reads."""
        return self.dry_run or self.plan_out is not None


RUN_OPTIONS: common.Options = [
    ("max_targets", MaxOpt, MAX_TARGETS),
    ("dry_run", DryRun, False),
    ("plan_out", PlanOut, None),
    ("plan_in", PlanIn, None),
    ("yes", Yes, False),
    ("output", Output, OutputFormat.TABLE),
]


def running(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` taking the options every bulk verb takes (``--max``, ``--dry-run``,
    ``--plan-out``, ``--plan``, ``--yes``, ``-o``) in place of its ``run: Run``
    parameter, the last: after its own options, in every verb's help alike."""
    return common.with_options("run", RUN_OPTIONS, lambda ctx, **given: Run(**given))(command)


def act(
    ctx: typer.Context,
    verb: verbs.Verb[H],
    writable: Callable[[typer.Context, str, bool], H],
    select: Callable[[H], verbs.Selection | None],
    run: Run,
) -> None:
    """``verb`` over ``select(handle)`` (None: the operator gave no selection), or over
    ``--plan``'s ids: a dry run (or ``--plan-out``) prints the plan; a real run asks on a
    terminal (naming the database and the count), runs in batches and prints the result.
    ``writable(ctx, title, planning)`` is the system's database for a writing verb,
    refused first when read-only unless only planning (a plan only reads)."""
    handle = writable(ctx, verb.title, run.planning)
    selection = select(handle)
    target = describe(common.cli(ctx).audit_where())
    if run.plan_in is not None:
        if selection is not None:
            raise InvalidInput(f"{verb.title}: give --plan or a selection, not both")
        planned = verbs.load(run.plan_in, verb, target)
    elif selection is None:
        raise InvalidInput(f"{verb.title}: give {verb.noun} ids, filter options or --plan")
    else:
        planned = verbs.plan(handle, verb, selection, target, run.max_targets)
    if run.plan_out is not None:
        verbs.save(planned, run.plan_out)
    if run.planning:
        saved = f"; the plan is in {run.plan_out}" if run.plan_out is not None else ""
        common.dry_run_report(
            planned.record(),
            planned.words(verb) + saved,
            run.output,
            planned.sample,
            SAMPLE_COLUMNS,
            len(planned.ids),
        )
        return
    common.confirm(planned.question(verb), run.yes)
    try:
        result = verbs.run(handle, verb, planned, from_file=run.plan_in is not None)
    except verbs.Stopped as stop:
        report(stop.result, verb, run.output)
        raise stop.__cause__ or stop from None
    report(result, verb, run.output)
    if not result.done:
        raise WrongState(verb.title, f"nothing {verb.past}{verbs.passed_over(result.skipped)}")


def report(result: verbs.Result, verb: verbs.Verb[Any], output: OutputFormat) -> None:
    """A run's result: the record in JSON forms (every id), a sentence and a sample of
    the ids in a table; a run stopped part-way after a batch committed says so on stderr,
    before the caller's error line, in every form (one stopped before any says nothing:
    the error line is the whole story)."""
    record = result.record()
    if result.stopped_part_way and not result.batches:  # nothing committed: the error alone
        audit.note(record)
        return
    if result.stopped_part_way:
        note(
            f"qctl: stopped part-way: {result.words(verb)} in {result.batches} committed "
            "batch(es); they stay done, and running the command again finishes the rest"
        )
        if output in (OutputFormat.JSON, OutputFormat.JSONL):
            emit_result(record, "", output)
        else:
            audit.note(record)
        return
    emit_result(record, result.words(verb), output)
    if output == OutputFormat.TABLE and result.ids:
        sys.stdout.write("\n")
        shown: list[dict[str, Any]] = [{"id": i} for i in result.ids[: verbs.SAMPLE]]
        emit_rows(shown, ["id"], output)
        more = len(result.ids) - verbs.SAMPLE
        if more > 0:
            sys.stdout.write(f"... and {more} more (-o json lists every id)\n")


def job_command(
    app: typer.Typer,
    verb: verbs.Verb[H],
    writable: Callable[[typer.Context, str, bool], H],
    ids: Any,
    resolve: Callable[[H, str], str],
    where: Callable[..., Mapping[str, Any]],
    help: str,
) -> Callable[..., None]:
    """``qctl <noun> <verb>`` of a verb that selects its targets by id or by filter (a
    system's job, cron entry or DLQ entry verbs): the ids (``ids``: the argument as the
    system words it; ``resolve(handle, text)`` makes each whole), the filter options
    ``where`` declares (its parameters, in help order; it returns the filter they
    select), then the options, output and exit codes of every such verb (``act``);
    ``writable`` is the system's database for a writing verb. Returns the command, for a
    shorthand that runs it with some options fixed (dispatch's ``dlq replay-all``)."""

    def command(ctx: typer.Context, ids: list[str] | None, run: Run, **options: Any) -> None:
        chosen = where(**options)
        act(
            ctx,
            verb,
            writable,
            lambda h: verbs.Selection.given(ids, chosen, lambda i: resolve(h, i)),
            run,
        )

    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [  # typer reads the options from the signature
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
        inspect.Parameter("ids", keyword, annotation=ids, default=None),
        *(
            p.replace(kind=keyword)
            for p in inspect.signature(where, eval_str=True).parameters.values()
        ),
        inspect.Parameter("run", keyword, annotation=Run),
    ]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return app.command(verb.name, help=help)(running(command))


QueueNames = Annotated[
    list[str] | None,
    typer.Argument(metavar="[QUEUE]...", help="Queue names; or --match / --all."),
]
QueueMatch = Annotated[
    str | None,
    typer.Option("--match", metavar="TEXT", help="Every queue whose name contains TEXT."),
]
AllQueues = Annotated[bool, typer.Option("--all", help="Every queue the system knows.")]


QueueNode = Annotated[
    str | None,
    typer.Option("--node", metavar="NODE", help="Only the producers of this node."),
]
QueueInstance = Annotated[
    str | None,
    typer.Option(
        "--instance",
        metavar="NAME",
        help="The instance on --node (default: the one its rows name).",
    ),
]


def queue_selection(
    verb: verbs.Verb[H], names: list[str] | None, match: str | None, all_queues: bool
) -> Callable[[H], verbs.Selection | None]:
    """The queues a queue verb was given (names, ``--match`` or ``--all``), as ``act``'s
    ``select``: each typed name must name a queue of the opened database."""
    if names and all_queues:
        raise InvalidInput("give queue names, --match or --all, not both")
    selection = verbs.Selection.given(names, {"match": match, "all": all_queues}, str)

    def select(handle: H) -> verbs.Selection | None:
        verbs.require_named(handle, verb, names or [])
        return selection

    return select


def queue_command(
    app: typer.Typer,
    verb: verbs.Verb[H],
    writable: Callable[[typer.Context, str, bool], H],
    help: str,
    addressed: Callable[[str, str | None], verbs.Verb[H]] | None = None,
) -> None:
    """``qctl queues pause|resume`` of a system that can pause a queue: the same
    selection (names, ``--match``, ``--all``), options, output and exit codes on each;
    ``writable`` is the system's database for a writing verb (``act``).
    ``addressed(node, instance)``: the verb sent to one node alone, for a system whose
    nodes answer one at a time (Oban's ident); only such a system's command takes
    ``--node`` and ``--instance``."""

    def command(
        ctx: typer.Context,
        names: QueueNames = None,
        match: QueueMatch = None,
        all_queues: AllQueues = False,
        node: QueueNode = None,
        instance: QueueInstance = None,
        *,
        run: Run,
    ) -> None:
        if instance and not node:
            raise InvalidInput("--instance names an instance on --node: give --node too")
        chosen = addressed(node, instance) if addressed and node else verb
        act(ctx, chosen, writable, queue_selection(chosen, names, match, all_queues), run)

    declared = running(command)
    if addressed is None:  # typer reads the options from the signature
        signature = inspect.signature(declared)
        kept = [p for p in signature.parameters.values() if p.name not in ("node", "instance")]
        declared.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    app.command(verb.name, help=help)(declared)


def no_queue_command(app: typer.Typer, name: str, why: str) -> None:
    """``qctl queues pause|resume`` of a system that cannot pause a queue: a usage error
    (exit 2) saying so and what to do instead, not "no such command"."""

    @app.command(
        name,
        hidden=True,
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )
    def command(ctx: typer.Context) -> None:
        raise InvalidInput(f"queues {name}: {why}")


def changed_limits(
    before: Mapping[str, Any] | None, after: Mapping[str, Any], stopping: Collection[str] = ()
) -> str:
    """A queue's limits that change, each old → new, as every system's limit command
    says them in its dry run, question and result ("concurrency: none → 0, stops new
    starts": ``stopping`` names the limits at which 0 starts nothing)."""

    def shown(value: Any) -> str:
        return "none" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    lines = []
    for key, new in after.items():
        old = (before or {}).get(key)
        if old != new:
            stops = ", stops new starts" if new == 0 and key in stopping else ""
            lines.append(f"{key}: {shown(old)} → {shown(new)}{stops}")
    return "; ".join(lines) or "no limit changes"
