"""Every system's ``qctl vacuum``: one core option (``--older-than``,
``qctl.cli.common.Retention``) and one result, for people, for cron's JSON and for the
audit trail alike::

    {"older_than": "30d", "dry_run": false,
     "tables": [{"table": "hopper_batches", "removed": 12}, ...], "total": 12}

(a dry run says ``"would_remove"``; null where a system cannot count a target before
removing it). The audit entry reads ``total`` as its done count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from qctl.cli.common import confirm, duration, reported
from qctl.cli.output import OutputFormat, emit_result, emit_rows
from qctl.core import audit
from qctl.core.parse import retention_age

Removed = Sequence[tuple[str, int | None]]
"""Rows removed (a dry run: that would be) per table; None: not counted."""


def older_than(value: str) -> timedelta:
    """``--older-than``'s age: more than 0 (``retention_age``)."""
    return retention_age(duration(value, "--older-than") or timedelta(0))


def record(age: str | None, dry_run: bool, removed: Removed) -> dict[str, Any]:
    """The one result of a vacuum (see the module's doc)."""
    key = "would_remove" if dry_run else "removed"
    return {
        "older_than": age,
        "dry_run": dry_run,
        "tables": [{"table": table, key: n} for table, n in removed],
        "total": sum(n or 0 for _, n in removed),
    }


def words(result: dict[str, Any]) -> str:
    """ "removed 15 row(s) older than 1d: 12 from hopper_batches, 3 from ..."."""
    key = "would_remove" if result["dry_run"] else "removed"
    parts = [f"{'?' if t[key] is None else t[key]} from {t['table']}" for t in result["tables"]]
    age = f" older than {result['older_than']}" if result["older_than"] else ""
    what = "would remove" if result["dry_run"] else "removed"
    return f"{what} {result['total']} row(s){age}: " + ", ".join(parts)


def run(
    age: str | None,
    count: Callable[[], Removed],
    remove: Callable[[], Removed],
    ask: Callable[[int | None], str],
    *,
    count_first: bool,
    dry_run: bool,
    yes: bool,
    output: OutputFormat,
    noun: str,
) -> None:
    """A vacuum verb: with ``dry_run`` the record of ``count()``. Else, with
    ``count_first`` (counting is cheap), nothing counted is the empty record with no
    question and no write; otherwise ``ask(the count, None when not counted)`` is
    confirmed, then ``remove()`` runs (a stop part-way reported as ``noun``:
    ``reported``) and its record is printed."""
    counted = count() if dry_run or count_first else None
    if dry_run and counted is not None:
        planned = record(age, True, counted)
        _emit(planned, f"dry run: {words(planned)}; nothing was changed", output)
        return
    if counted is not None and not any(n for _, n in counted):
        done = record(age, False, [(table, 0) for table, _ in counted])
    else:
        confirm(ask(None if counted is None else sum(n or 0 for _, n in counted)), yes)
        with reported(output, noun):
            done = record(age, False, remove())
    _emit(done, words(done), output)


def _emit(result: dict[str, Any], message: str, output: OutputFormat) -> None:
    """``result`` as every writing verb prints its record; CSV, a flat form, as a row
    per table."""
    if output != OutputFormat.CSV:
        emit_result(result, message, output)
        return
    audit.note(result)
    key = "would_remove" if result["dry_run"] else "removed"
    extra = {"older_than": result["older_than"], "dry_run": result["dry_run"]}
    emit_rows([{**t, **extra} for t in result["tables"]], ["table", key, *extra], output)
