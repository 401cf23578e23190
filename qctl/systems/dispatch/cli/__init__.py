"""The command groups of a dispatch database, one module per noun; the root command
picks them when the database holds dispatch's tables. Flags and output follow the azync
and DBOS groups (``-o``, ``--limit``/``--after``, ``--dry-run``, ``--yes``); field names
are dispatch's column names, JSON values exact (``timeout`` in nanoseconds, as stored)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.output import OutputFormat
from qctl.core.errors import NoSuchName, WrongState
from qctl.systems.dispatch import SYSTEM
from qctl_store.errors import InvalidInput

if TYPE_CHECKING:
    from qctl.systems.dispatch.database import Database

Many = list[str] | None


def group(noun: str) -> typer.Typer:
    app = common.app(noun, SYSTEM.commands[noun].help)
    app.callback()(lambda: None)  # a one-verb group stays a group (``qctl cron list``)
    return app


def database(ctx: typer.Context, gate: bool = True) -> Database:
    """The dispatch database of this invocation, opened once (versions gated unless
    ``gate`` is False)."""
    from qctl.systems.dispatch.database import Database

    return common.cli(ctx).database(Database, gate=gate)


def writable(ctx: typer.Context, action: str, dry_run: bool) -> Database:
    """The database for a writing verb, refused first when read-only (a dry run only
    reads)."""
    if not dry_run:
        common.cli(ctx).require_writable(action)
    return database(ctx)


def for_table(record: dict[str, Any]) -> dict[str, Any]:
    """A row as a table shows it: ``timeout`` as a duration."""
    if isinstance(record.get("timeout"), int):
        return {**record, "timeout": timedelta(microseconds=record["timeout"] // 1000)}
    return record


MAX_TARGETS = 10_000
"""Default cap on what one verb takes from a filter (``--max``)."""

MaxOpt = Annotated[
    int, typer.Option("--max", metavar="N", min=1, help="Refuse when more than N match.")
]


def capped(targets: list[str], max_targets: int, what: str) -> list[str]:
    """``targets`` (read with a limit of ``max_targets + 1``), refused when over the cap."""
    if len(targets) > max_targets:
        raise InvalidInput(
            f"more than {max_targets} {what} match: narrow the filter or raise --max"
        )
    return targets


def _record(results: list[Any], skipped: list[dict[str, str]]) -> dict[str, Any]:
    """One result record, or one for several (one JSON document either way)."""
    if len(results) == 1 and not skipped:
        return asdict(results[0])
    return {"count": len(results), "results": [asdict(r) for r in results], "skipped": skipped}


def _words(outcomes: list[Any], say: Callable[[Any], str], sep: str) -> str:
    """Each outcome in words, the first few of many then how many more."""
    from qctl.core.bulk import SAMPLE

    shown = [say(o) for o in outcomes[:SAMPLE]]
    more = len(outcomes) - SAMPLE
    return sep.join(shown) + (f"{sep}... and {more} more" if more > 0 else "")


def act_each(
    db: Database,
    targets: list[str],
    act: Callable[[Database, str, bool], Any],
    output: OutputFormat,
    dry_run: bool,
    yes: bool,
    ask: str,
    say: Callable[[Any], str],
) -> None:
    """``act(db, target, dry_run)`` on each target: every refusal (each target's dry
    run) before the one question, then one result record; ``say`` words one outcome.
    Of several targets, one that changed in between (a worker claimed it) is skipped and
    listed; one target alone is refused (exit 3)."""
    if not targets:
        raise NoSuchName("select", "nothing matches")
    plans = [act(db, t, True) for t in targets]
    would = _words(plans, say, "; ")
    if not common.proceed(dry_run, yes, output, _record(plans, []), would, ask):
        return
    results, skipped = [], []
    for target in targets:
        try:
            results.append(act(db, target, False))
        except WrongState as exc:
            if len(targets) == 1:
                raise
            skipped.append({"id": target, "reason": str(exc)})
    tail = f"\nskipped {len(skipped)} changed since they were read" if skipped else ""
    common.done(_record(results, skipped), _words(results, say, "\n") + tail, output)
