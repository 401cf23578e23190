"""The command line's side of the verb engine (``qctl.core.verbs``): the options every
bulk verb of every system takes, and one ``act`` that plans, asks, runs and reports.

A system's command passes its declared ``Verb``, its database handle and what the
operator selected; nothing here knows a system."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from qctl.cli import common
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


def act(
    ctx: typer.Context,
    verb: verbs.Verb[H],
    handle: H,
    selection: verbs.Selection | None,
    *,
    max_targets: int,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
    plan_in: Path | None,
    plan_out: Path | None,
) -> None:
    """``verb`` over ``selection`` (None: the operator gave none), or over ``--plan``'s
    ids: a dry run (or ``--plan-out``) prints the plan; a real run asks on a terminal
    (naming the database and the count), runs in batches and prints the result. The
    caller has already refused a write in read-only mode (a dry run only reads)."""
    target = describe(common.cli(ctx).audit_where())
    if plan_in is not None:
        if selection is not None:
            raise InvalidInput(f"{verb.title}: give --plan or a selection, not both")
        planned = verbs.load(plan_in, verb, target)
    elif selection is None:
        raise InvalidInput(f"{verb.title}: give {verb.noun} ids, filter options or --plan")
    else:
        planned = verbs.plan(handle, verb, selection, target, max_targets)
    if plan_out is not None:
        verbs.save(planned, plan_out)
    if dry_run or plan_out is not None:
        saved = f"; the plan is in {plan_out}" if plan_out is not None else ""
        common.dry_run_report(
            planned.record(), planned.words(verb) + saved, output, planned.sample, SAMPLE_COLUMNS
        )
        return
    common.confirm(planned.question(verb), yes)
    try:
        result = verbs.run(handle, verb, planned, from_file=plan_in is not None)
    except verbs.Stopped as stop:
        report(stop.result, verb, output)
        raise stop.__cause__ or stop from None
    report(result, verb, output)
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
