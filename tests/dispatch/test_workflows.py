"""``qctl workflows list|show`` over runs dispatch's own runner wrote (engine
.StartWorkflow). At v0.1.0 the PostgreSQL store's GetCheckpoint is invalid SQL, so a
workflow with a step fails at its first step and no checkpoint is ever written; one
without steps completes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dispatch.conftest import Run, data
from tests.go.harness import Harness


@pytest.fixture(scope="module")
def runs(dispatch: Harness) -> dict[str, Any]:
    done = dispatch.call("workflow", name="wf.empty", payload={"user": 1})["run"]
    stepped = dispatch.call("workflow", name="wf.onboard", queues=["mail", "crm"])["run"]
    return {"done": done, "stepped": stepped}


def test_runs_as_dispatch_left_them(runs: dict[str, Any], qctl: Run) -> None:
    listed = data(qctl("workflows", "list", "-o", "json"))
    assert [r["id"] for r in listed] == [runs["stepped"]["id"], runs["done"]["id"]]
    done = data(qctl("workflows", "show", runs["done"]["id"][6:18], "-o", "json"))
    assert (done["name"], done["state"], done["input"], done["checkpoints"]) == (
        "wf.empty",
        "completed",
        {"user": 1},
        [],
    )
    stepped = data(qctl("workflows", "show", runs["stepped"]["id"], "-o", "json"))
    assert stepped["state"] == "failed" and stepped["checkpoints"] == []
    assert 'get checkpoint "mail"' in stepped["error"] and "syntax error" in stepped["error"]


def test_filters_and_pages(runs: dict[str, Any], qctl: Run) -> None:
    failed = data(qctl("workflows", "list", "--state", "failed", "-o", "json"))
    assert [r["id"] for r in failed] == [runs["stepped"]["id"]]
    named = data(qctl("workflows", "list", "--name", "wf.empty", "-o", "json"))
    assert [r["id"] for r in named] == [runs["done"]["id"]]
    first = qctl("workflows", "list", "--limit", "1", "-o", "json")
    cursor = first.stderr.split("next page: --after ")[1].split()[0]
    second = data(qctl("workflows", "list", "--limit", "1", "--after", cursor, "-o", "json"))
    assert [r["id"] for r in data(first) + second] == [runs["stepped"]["id"], runs["done"]["id"]]
    assert qctl("workflows", "list", "--state", "cancelled").exit_code == 2
    assert qctl("workflows", "show", "wfrun_nope").exit_code == 3
    assert qctl("workflow", "list").exit_code == 0  # the singular alias
