"""What the command line's bulk verbs of the Go systems share: targets by id or by a
filter capped at ``--max``, every target's dry run (and refusal) before one question,
then one result record; a target that changed in between is skipped and listed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any

import typer

from qctl.cli import common
from qctl.cli.output import OutputFormat
from qctl.core.errors import NoSuchName, WrongState
from qctl_store.errors import InvalidInput

MAX_TARGETS = 10_000
"""Default cap on what one verb takes from a filter (``--max``)."""

MaxOpt = Annotated[
    int, typer.Option("--max", metavar="N", min=1, help="Refuse when more than N match.")
]


def capped(targets: list[Any], max_targets: int, what: str) -> list[Any]:
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
    db: Any,
    targets: list[Any],
    act: Callable[[Any, Any, bool], Any],
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
            skipped.append({"id": str(target), "reason": str(exc)})
    tail = f"\nskipped {len(skipped)} changed since they were read" if skipped else ""
    common.done(_record(results, skipped), _words(results, say, "\n") + tail, output)
