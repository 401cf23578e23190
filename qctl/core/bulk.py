"""The bulk algorithm every system's verbs share: a selection (ids or a filter, never
both, never neither), capped at ``--max``, then the work target by target. A target
that changed since it was read is skipped and listed; any other failure (or Ctrl-C)
stops the walk, and the report says what was done, which target failed and which were
not tried, so the operator knows what to run to finish."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from qctl_store.errors import InvalidInput

SAMPLE = 5
"""How many of the targets a bulk dry run lists (it counts them all)."""

T = TypeVar("T")
R = TypeVar("R")


def select(
    ids: Sequence[str] | None,
    filtered: bool,
    verb: str,
    noun: str,
    filters: str = "at least one filter option",
) -> None:
    """Refuse a selection that names both ids and a filter, or neither."""
    if ids and filtered:
        raise InvalidInput(f"{verb}: give {noun} ids or filter options, not both")
    if not ids and not filtered:
        raise InvalidInput(f"{verb}: give {noun} ids or {filters}")


def capped(rows: list[T], max_targets: int, noun: str) -> list[T]:
    """``rows`` (read with a limit of ``max_targets + 1``), refused when over the cap."""
    if len(rows) > max_targets:
        raise InvalidInput(
            f"more than {max_targets} {noun} match: narrow the filter or raise --max"
        )
    return rows


@dataclass
class Report(Generic[R]):
    """What a bulk verb did before it stopped, in one shape for the two ways verbs work:
    target by target (``done`` holds each target's result; ``skipped``, ``failed`` and
    ``not_tried`` name targets) or in batches (azync's batched statements: ``rows`` done
    in ``batches`` committed transactions, no target named; the same command run again
    finishes, each verb acting on what is still left)."""

    done: list[R] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    """Targets passed over: ``id`` and ``reason`` (changed since they were read)."""
    failed: dict[str, str | None] | None = None
    """Where the walk stopped and why: ``id`` (the target; None in batches) and ``error``."""
    not_tried: list[str] = field(default_factory=list)
    """Targets after it, untouched."""
    batches: int | None = None
    """Batched work: the transactions committed; None target by target."""
    rows: int = 0
    """Batched work: the rows those transactions did."""

    @property
    def count(self) -> int:
        """How many were done: targets, or rows of batched work."""
        return len(self.done) if self.batches is None else self.rows


def batched(rows: int, batches: int, error: str) -> Report[Any]:
    """The report of batched work ``error`` stopped after ``rows`` in ``batches``."""
    return Report(failed={"id": None, "error": error}, batches=batches, rows=rows)


class Stopped(Exception):
    """A bulk walk stopped part-way: ``report`` says how far it got, ``__cause__`` why
    (the shells print the report, then fail with the cause's message and exit code)."""

    def __init__(self, report: Report[Any]) -> None:
        super().__init__("stopped part-way")
        self.report = report


def each(
    targets: Sequence[T],
    act: Callable[[T], R],
    key: Callable[[T], str],
    skip: tuple[type[Exception], ...] = (),
) -> Report[R]:
    """``act`` on each target in turn. A ``skip`` error skips that target (listed with
    its message); any other error, Ctrl-C included, raises ``Stopped`` from it. One
    target alone raises its error as it is: there is nothing else to report."""
    report: Report[R] = Report()
    for n, target in enumerate(targets):
        try:
            report.done.append(act(target))
        except BaseException as exc:
            if len(targets) == 1:
                raise
            if isinstance(exc, skip):
                report.skipped.append({"id": key(target), "reason": str(exc)})
                continue
            report.failed = {"id": key(target), "error": str(exc) or type(exc).__name__}
            report.not_tried = [key(t) for t in targets[n + 1 :]]
            raise Stopped(report) from exc
    return report
