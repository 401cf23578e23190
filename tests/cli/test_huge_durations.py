"""A duration too large for any instant (``--older-than 3000000d``) is a usage error in
every verb that takes one, dry run or not: one line, exit 2, nothing written."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Run


@pytest.mark.parametrize(
    "verb",
    [
        ["jobs", "retry", "--all", "--dry-run"],
        ["jobs", "vacuum-dead", "--dry-run"],
        ["vacuum", "completed", "--dry-run"],
        ["vacuum", "dead", "--dry-run"],
        ["events", "retain", "--dry-run"],
        ["workflows", "stalled"],
        ["vacuum", "completed", "--yes"],
        ["jobs", "list"],
    ],
    ids=" ".join,
)
def test_a_huge_older_than_is_a_usage_error(run: Run, verb: list[str]) -> None:
    result = run(*verb, "--older-than", "3000000d")
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == [
        "qctl: error: --older-than: duration '3000000d' is out of range (at most 366000 days)"
    ]
    assert result.stdout == ""


def test_a_timeout_past_postgresqls_limit_is_a_usage_error(run: Run) -> None:
    result = run("--lock-timeout", "30d", "jobs", "list")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "qctl: error: --lock-timeout: '30d' is longer than PostgreSQL allows (24 days)"
    ]
