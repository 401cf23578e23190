"""Options and helpers every command group shares."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import shlex
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol, TypeVar

import typer

from qctl.cli.context import CliContext
from qctl.cli.launch import MIN_REFRESH
from qctl.cli.output import (
    OUTPUT_HELP,
    OutputFormat,
    as_dict,
    emit_object,
    emit_result,
    emit_rows,
    note,
)
from qctl.core import bulk, parse, verbs
from qctl.core.exits import ExitCode, Refused, message_for
from qctl.core.sanitize import sanitize
from qctl_kit.dsn import default_database_path, redact, sqlite_path
from qctl_kit.errors import InvalidInput, done_before

if TYPE_CHECKING:
    import psycopg

Output = Annotated[
    OutputFormat,
    typer.Option("--output", "-o", help=OUTPUT_HELP, case_sensitive=False),
]
Yes = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Answer yes to the confirmation (needed off a terminal)."),
]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Say what would be done; write nothing.")]
Retention = Annotated[
    str,
    typer.Option(
        "--older-than",
        "--retention",
        metavar="DURATION",
        help="Remove what is older than this (--retention: its earlier name).",
    ),
]
"""The age of what a ``vacuum`` verb removes, on every system (``--older-than``, as
every age flag is named; ``--retention`` keeps working)."""
Refresh = Annotated[
    float,
    typer.Option(
        "--refresh",
        metavar="SECONDS",
        min=MIN_REFRESH,
        help="Polling interval when the backend cannot push change hints (or the "
        "stream fails); with hints the screen updates as changes happen.",
    ),
]
"""``qctl top``'s polling interval on every system (DBOS pushes no hints: it polls)."""
PageLimit = Annotated[
    int,
    typer.Option(
        "--limit",
        "-n",
        metavar="N",
        min=1,
        help="Rows per page (-o json, jsonl and csv: every row unless given).",
    ),
]
After = Annotated[
    str | None,
    typer.Option(
        "--after",
        metavar="CURSOR",
        help="Continue after this cursor (the previous page's `next page:` on stderr).",
    ),
]
"""Every listing's one paging flag: a keyset cursor, never an offset to walk."""


LastOpt = Annotated[
    str, typer.Option("--last", metavar="DURATION", help="How far back (default 1h).")
]
ByOpt = Annotated[
    str, typer.Option("--by", metavar="minute|hour", help="Bucket size (default minute).")
]
"""``queues throughput``'s window and bucket on every system."""
BUCKETS = {"minute": timedelta(minutes=1), "hour": timedelta(hours=1)}
MAX_TARGETS = verbs.MAX_TARGETS
"""Default cap on what one bulk verb takes (``--max``): a selection that matches more is
refused, not cut."""
MaxOpt = Annotated[
    int, typer.Option("--max", metavar="N", min=1, help="Refuse when more than N match.")
]


def app(name: str, help: str) -> typer.Typer:
    """A command group with qctl's settings (plain help text: fast and greppable); its
    ``help`` line is its registry entry's (``System.commands``, ``SYSTEMLESS_COMMANDS``)."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
        add_completion=False,
    )


Verb = TypeVar("Verb", bound=Callable[..., Any])


def writes(verb: Verb) -> Verb:
    """Mark a verb that writes without a ``--dry-run`` (a signal, an enqueue): its help
    lists ``--reason``, as every write's does (``qctl.cli.main`` reads the mark)."""
    verb.qctl_writes = True  # type: ignore[attr-defined]
    return verb


Options = list[tuple[str, Any, Any]]
"""Command options in help order: parameter name, Typer annotation, default."""


def with_options(
    param: str, options: Options, build: Callable[..., Any]
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command ``options`` in place of its parameter ``param`` (the command takes
    ``ctx`` first) and call it with ``build(ctx, **their values)`` as ``param``: one
    declaration of a filter that several commands share."""

    def wrap(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for p in signature.parameters.values():
            if p.name != param:
                params.append(p)
                continue
            params += [
                inspect.Parameter(name, p.KEYWORD_ONLY, annotation=hint, default=default)
                for name, hint, default in options
            ]

        def run(ctx: typer.Context, **kw: Any) -> None:
            given = {name: kw.pop(name) for name, _, _ in options}
            command(ctx, **{param: build(ctx, **given)}, **kw)

        run.__doc__ = command.__doc__
        run.__name__ = command.__name__
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[p.replace(kind=p.KEYWORD_ONLY) if p.name != "ctx" else p for p in params]
        )
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return wrap


def cli(ctx: typer.Context) -> CliContext:
    obj = ctx.find_object(CliContext)
    if obj is None:  # commands invoked without the root callback (library use)
        obj = CliContext.resolve()
        root = ctx.find_root()
        root.obj = obj
        root.call_on_close(obj.close)
    return obj


def invalid_indexes_note(names: Sequence[str], fix: str) -> None:
    """``db status``'s line, on every system, on the schema's invalid indexes: what they
    cost and ``fix``."""
    if names:
        note(
            f"invalid index(es): {', '.join(names)} (a cancelled CREATE INDEX CONCURRENTLY"
            " leaves one: never used by queries, yet kept up by every write; or one being"
            f" built right now): {fix}"
        )


def reindex_fix(schema: str) -> str:
    """How an operator rebuilds an invalid index of a schema qctl does not migrate."""
    return f'rebuild each with REINDEX INDEX CONCURRENTLY "{schema}".<name>'


def database_status(
    ctx: typer.Context,
    system: str,
    db: Any,
    fields: Mapping[str, Any],
    refusal: str | None,
    output: OutputFormat,
) -> None:
    """``qctl db status`` of a system over a SQL database of its own (``db`` has
    ``backend``, ``location``, ``schema``, ``read_only``): the context and where, the system's
    ``fields``; then, when qctl does not support the schema, ``refusal`` on stderr and
    exit 5 (after the report)."""
    invalid = db.invalid_indexes()
    emit_object(
        {
            "context": cli(ctx).context_name or "",
            "system": system,
            "backend": db.backend,
            "location": db.location,
            "schema": db.schema,
            **fields,
            "invalid_indexes": invalid,
            "read_only": db.read_only,
        },
        output,
    )
    invalid_indexes_note(invalid, reindex_fix(db.schema))
    if refusal is not None:
        note(refusal)
        raise typer.Exit(int(ExitCode.SCHEMA))


def tune_report(
    created: Sequence[str], present: Sequence[str], dry_run: bool, output: OutputFormat
) -> None:
    """``qctl db tune``'s report on every system: the console indexes ``created`` (a dry
    run: would create), or, with none, the ones ``present`` already."""
    if created:
        message = f"{'would create' if dry_run else 'created'} {', '.join(created)}"
    else:
        message = "nothing to tune" + (
            f": {', '.join(present)} exist{'s' if len(present) == 1 else ''}" if present else ""
        )
    if dry_run:
        dry_run_report({"indexes": list(created)}, message, output)
        return
    emit_result({"dry_run": False, "indexes": list(created)}, message, output)


def refuse_migrate(system: str, migrated_by: str) -> NoReturn:
    """``qctl db migrate`` on a system whose own application migrates its schema."""
    raise InvalidInput(f"qctl never migrates a {system} database: {migrated_by}")


@contextlib.contextmanager
def until_stopped() -> Iterator[None]:
    """A ``watch`` loop's end: Ctrl-C, or SIGTERM (how a supervisor stops it, as it stops
    ``maintain``), ends it quietly with exit 0: a stream that was asked to stop did not
    fail."""
    with contextlib.suppress(KeyboardInterrupt):
        yield


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def confirm(question: str, yes: bool, typed: str = "") -> None:
    """Ask on a terminal; without one, refuse unless --yes was given. With ``typed`` (a
    command that destroys a whole system's data or a schema-wide set: ``typed_name``),
    the operator types that name instead of y: a reflex answer cannot run it, and any
    other answer, an empty one included, declines."""
    if yes:
        return
    if not stdin_is_tty():
        raise Refused(f"{question} refused: stdin is not a terminal, pass --yes to confirm")
    question = sanitize(question, multiline=True)  # it names rows: database text
    if typed:
        try:
            answer = typer.prompt(
                f"{question}\nType {sanitize(typed)} to confirm",
                default="",
                show_default=False,
                err=True,
            )
        except typer.Abort:
            answer = ""
        if answer.strip() != typed:
            raise Refused(
                f"declined: {sanitize(answer.strip())!r} is not {sanitize(typed)!r};"
                " nothing was changed"
            )
        return
    try:
        answer = typer.confirm(question, default=False, err=True)
    except typer.Abort:
        answer = False
    if not answer:
        raise Refused("declined; nothing was changed")


def say_demo_reading(dsn: str, system: str, schema: str = "", noun: str = "jobs") -> None:
    """The line a demo says where the operator looks (after its headless summary, before
    its dashboard): the command that reads what it made, on ``dsn`` (its password
    redacted) and, on PostgreSQL, ``schema``."""
    from qctl_kit.dsn import is_postgres

    where = ["--schema", schema] if schema and is_postgres(dsn) else []
    words = ["qctl", "--dsn", redact(dsn), "--system", system, *where, noun, "list"]
    sys.stderr.write(f"qctl demo: read it with {shlex.join(words)}\n")


@dataclasses.dataclass(frozen=True)
class DemoSchema:
    owned: bool
    """The demo created it (its comment is the demo's mark)."""
    holds: bool
    """It holds the system's table already."""


@contextlib.contextmanager
def demo_connection(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """The autocommit connection a demo sets its schema up on, its failures said as every
    command says them (an unreachable server: one line, exit 6; never libpq's text with
    the DSN's password)."""
    import psycopg

    from qctl_kit.dsn import connect_timeout, postgres_params
    from qctl_kit.postgres.connect import mapped_errors

    with (
        mapped_errors(dsn),
        psycopg.connect(dsn, autocommit=True, **connect_timeout(postgres_params(dsn))) as conn,
    ):
        yield conn


def demo_schema(
    conn: psycopg.Connection[Any],
    schema: str,
    *,
    mark: str,
    table: str,
    label: str,
    scope: str,
    reset: bool,
    yes: bool,
) -> DemoSchema:
    """The PostgreSQL schema a system's demo runs in, created and marked with ``mark``
    (its comment) when absent. ``reset`` drops it first, only when it carries the mark.
    One the demo did not create that holds anything is refused unless it holds
    ``label``'s ``table``, and then confirmed (``scope``: what the workload touches)."""
    from psycopg import sql

    from qctl_kit.sqlfile import load

    query = load("qctl_kit.postgres.queries", "owned.sql").schema_state
    row = conn.execute(query, {"schema": schema, "table": table}).fetchone()
    present, comment, holds, relations = row or (False, None, False, 0)
    owned = bool(present) and comment == mark
    name = sql.Identifier(schema)
    if reset:
        if present and not owned:
            raise InvalidInput(f"--reset drops only a schema the demo created, not {schema}")
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(name))
        present = holds = False
    if present and not owned and relations:
        if not holds:
            raise InvalidInput(f"schema {schema} holds other tables but not {label}'s")
        confirm(
            f"schema {schema} holds {label}'s tables, not created by the demo: run the"
            f" demo's workload there ({scope})?",
            yes,
        )
    if not present:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
        conn.execute(sql.SQL("COMMENT ON SCHEMA {} IS {}").format(name, sql.Literal(mark)))
        owned = True
    return DemoSchema(owned, bool(holds))


def demo_built(build: Callable[[], Path], log: Path, failed: str) -> tuple[Path | None, str]:
    """What a demo builds on first use (``build()``: a system's own runtime), or None and
    why, after the last lines of the build's ``log``: the demo then runs stand-ins."""
    try:
        return build(), ""
    except RuntimeError as exc:
        if log.exists():
            sys.stderr.writelines(f"  {line}\n" for line in log.read_text().splitlines()[-5:])
        return None, f"{failed}: {exc}"


class DemoWorkload(Protocol):
    """A system's demo workload as ``run_demo`` runs it."""

    mark: dict[str, str]
    """What its jobs carry in their meta (``job_counts``'s ``mark``)."""
    errors: list[str]
    """What stopped part of it, said when the demo ends."""

    def stop(self) -> None: ...


def run_demo(
    cli: CliContext,
    db: Any,
    workload: DemoWorkload,
    where: dict[str, Any],
    *,
    system: str,
    screens: str,
    schema: str,
    no_tui: bool,
    seconds: float | None,
    job_counts: str,
    running: str,
    label: str,
    stopped: str = "a stand-in stopped",
) -> None:
    """Watch a started ``workload`` on ``db`` (``schema`` of the --dsn PostgreSQL database)
    in the dashboard of ``system`` (``screens``: its import string), or headless for
    ``seconds`` (``running`` says what runs) and then print its jobs per state
    (``job_counts``, over the workload's mark). Stops the workload, closes ``db`` and
    says each of its ``errors`` after ``stopped``. ``label`` names the demo's workers in
    the dashboard's location; ``where`` is the audit's name of the demo's database
    (``CliContext.demo_where``)."""
    import json
    import time

    from qctl import systems

    try:
        if no_tui:
            sys.stderr.write(
                f"qctl demo: {running} on {db.location} schema {schema} for {seconds or 60.0:g}s\n"
            )
            time.sleep(seconds or 60.0)
            workload.stop()
            mark = json.dumps(workload.mark)
            counts = {r["state"]: r["n"] for r in db.all(job_counts, {"mark": mark})}
            json.dump(counts, sys.stdout, indent=2, sort_keys=True)
            sys.stdout.write("\n")
            say_demo_reading(db.dsn, system, schema)
        else:
            from qctl.tui.app import run

            location = f"{db.location} schema {schema} ({label})"
            say_demo_reading(db.dsn, system, schema)
            run(
                db,
                system=systems.load(screens),
                location=location,
                poll_interval=1.0,
                audit_where=where,
            )
    finally:
        workload.stop()
        db.close()
    for error in workload.errors:
        sys.stderr.write(f"qctl demo: {stopped}: {error}\n")


def typed_name(ctx: typer.Context, schema: str) -> str:
    """The name the operator types to confirm a command that destroys a whole system's
    data or a schema-wide set (``confirm``'s ``typed``): the context's name when one is
    in use (what the operator calls that database), else on PostgreSQL ``schema`` (the
    one in effect), else the SQLite file's name."""
    c = cli(ctx)
    if c.context_name:
        return c.context_name
    if c.is_postgres:
        return schema
    return Path(sqlite_path(c.dsn)).name if c.dsn else default_database_path().name


def option_value(parser: Callable[[Any], Any], value: Any, option: str) -> Any:
    """``parser(value)``, its error message prefixed by the option that carried it."""
    try:
        return parser(value)
    except parse.ParseError as exc:
        raise parse.ParseError(f"{option}: {exc}") from None


def record_of(value: Any) -> dict[str, Any]:
    """A result record (an ops dataclass or a mapping) as a mapping for output."""
    return dict(value) if isinstance(value, Mapping) else as_dict(value)


def done(result: Any, message: str, output: OutputFormat) -> None:
    """Print what a writing verb did: ``message`` for people, ``result`` for machines."""
    emit_result(record_of(result), message, output)


SAMPLE_COLUMNS = ["id", "source", "kind", "state"]


def proceed(
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
    plan: Any,
    would: str,
    ask: str,
    typed: str = "",
) -> bool:
    """The gate of a destructive verb: with ``dry_run`` print ``plan`` (an ops record,
    marked ``"dry_run": true``) and ``would`` prefixed "dry run:" and return False;
    else confirm with ``ask`` (and ``typed``: ``confirm``'s)."""
    if dry_run:
        record = record_of(plan)
        # A job verb's plan over a filter carries a sample of the jobs: a list for JSON,
        # rows after the sentence in a table, left out of CSV's single row.
        people = output in (OutputFormat.TABLE, OutputFormat.CSV)
        sample = record.pop("sample", None) if people else None
        dry_run_report(record, would, output, sample or ())
        return False
    confirm(ask, yes, typed)
    return True


def dry_run_report(
    plan: Any,
    would: str,
    output: OutputFormat,
    sample: Sequence[Any] = (),
    columns: Sequence[str] = SAMPLE_COLUMNS,
    total: int = 0,
) -> None:
    """What a dry run would do, in every system's one form: ``plan`` marked
    ``"dry_run": true``, "dry run: {would}; nothing was changed" in a table, followed
    there by the ``sample`` rows (a few of the ``total`` targets) in ``columns`` and, when
    they are not all, how many of them it shows."""
    emit_result(
        {**record_of(plan), "dry_run": True}, f"dry run: {would}; nothing was changed", output
    )
    if sample and output == OutputFormat.TABLE:
        sys.stdout.write("\n")
        emit_rows([record_of(row) for row in sample], list(columns), output)
        if total > len(sample):
            sys.stdout.write(f"{len(sample)} of {total} shown (-o json lists every id)\n")


def counted_delete(
    plan: Any,
    count: int,
    say: Callable[[Any], str],
    ask: str,
    run: Callable[[], Any],
    *,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
    noun: str,
) -> None:
    """A delete whose dry run ``plan`` counted ``count`` rows (a dataclass with a
    ``dry_run`` field, ``say`` puts it in words): nothing to delete is said with no
    question and no write; else ``proceed``'s gate, then ``run()``, a stop part-way
    reported as ``noun`` (``reported``), and what it did."""
    if count or dry_run:
        if not proceed(dry_run, yes, output, plan, say(plan), ask):
            return
        with reported(output, noun):
            plan = run()
    result = dataclasses.replace(plan, dry_run=False)
    done(result, say(result), output)


@contextlib.contextmanager
def reported(output: OutputFormat, noun: str = "") -> Iterator[None]:
    """Around batched work (a vacuum's batched statements): when any error or
    interruption (Ctrl-C, SIGTERM) stops it after some of its batches committed
    (``done_before``), say what was done and what finishes it (``stopped_report``), its
    rows being ``noun`` ("dead job(s) deleted"), then fail with the cause's line and exit
    code."""
    try:
        yield
    except BaseException as exc:
        done = done_before(exc)
        if done is not None:
            error = message_for(exc) if isinstance(exc, Exception) else "interrupted"
            stopped_report(bulk.Report(done.rows, done.batches, error), output, noun)
        raise


def stopped_report(report: bulk.Report, output: OutputFormat, noun: str = "") -> None:
    """Batched work stopped part-way (the keys are in docs/cli.md): the record on stdout
    in JSON forms, the sentence on stderr in every form, before the cause's line, naming
    the command line that finishes it (each batch acts on what is still left)."""
    again = " ".join(shlex.quote(redact(a)) for a in ["qctl", *sys.argv[1:]])
    if output in (OutputFormat.JSON, OutputFormat.JSONL):
        record = {
            "stopped": True,
            "count": report.rows,
            "batches": report.batches,
            "error": report.error,
            "finish_with": again,
        }
        emit_result(record, "", output)
    said = f"qctl: stopped part-way: done {report.rows}" + (f" {noun}" if noun else "")
    said += f" in {report.batches} committed batch(es)" if report.batches else ""
    note(said + f"; they stay done. To finish, run again: {again}")


def duration(value: str | None, option: str) -> timedelta | None:
    """A duration option (at most 1000 years: ``parse.parse_duration``)."""
    if value is None:
        return None
    parsed: timedelta = option_value(parse.parse_duration, value, option)
    return parsed


def window_and_bucket(last: str, by: str) -> tuple[timedelta, timedelta]:
    """``--last`` and ``--by`` of ``queues throughput``, checked."""
    bucket = BUCKETS.get(by)
    if bucket is None:
        raise parse.ParseError(f"--by: {by!r} is not minute or hour")
    window = duration(last, "--last") or timedelta(0)
    if window <= timedelta(0):
        raise parse.ParseError("--last: must be more than 0")
    return window, bucket


def instant(value: str | None, option: str, *, ago: bool = True) -> datetime | None:
    """An instant option (``parse.parse_instant``; ``ago``: an unsigned duration is
    that long ago, else refused)."""
    if value is None:
        return None
    return option_value(lambda text: parse.parse_instant(text, ago=ago), value, option)


def json_value(value: str | None, option: str) -> Any:
    return None if value is None else option_value(parse.parse_json, value, option)
