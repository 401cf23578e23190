"""The verb contract suite: every operator verb every registered system declares
(``System.verbs``, run by ``qctl.core.verbs``) behaves the same way, from the command line
and the dashboard alike, as River's driver tests run one suite over every driver.

A system's provider (``tests/<system>/contract.py``) gives, besides its database:

- ``verb_rows(target, verb, n)``: ``n`` fresh rows the verb (``"jobs retry"``) acts on,
  made as the system's own software makes them, and the filter options that select
  exactly those rows;
- ``change(target, verb, id)``: that row moved on as a worker (or another operator)
  would, so that the verb no longer acts on it; the reason the engine must count it
  under;
- optionally ``observe(target, verb, ids)``: for a verb whose effect is not its
  targets' state (a cron trigger enqueues a job), what it changes, per id (None: the
  targets' states are what it changes).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from qctl.cli.main import app
from qctl.core import verbs
from qctl.core.verbs import Selection, Verb
from qctl.systems import load, systems
from qctl.tui.app import QctlTop
from qctl.tui.widgets import ConfirmDialog
from tests.conftest import require_pg
from tests.systems.contract import Target, backends, open_database, target_id, unchanged
from tests.systems.test_contract import provider, system
from tests.tui.helpers import until

pytestmark = pytest.mark.timeout(300)

CASES = [
    pytest.param(s.name, b, v.title, id=f"{target_id(s.name, b)}-{v.title.replace(' ', '-')}")
    for s in systems()
    if s.verbs
    for b in backends(provider(s.name))
    for v in load(s.verbs)
]
N = 4


def qctl(t: Target, *args: str) -> Result:
    return CliRunner().invoke(app, [*t.args, *args])


def data(result: Result) -> Any:
    assert result.exit_code == 0, (result.exit_code, result.output)
    return json.loads(result.stdout)


def declared(name: str, title: str) -> Verb[Any]:
    return next(v for v in load(system(name).verbs) if v.title == title)


@pytest.fixture(scope="module")
def targets() -> Iterator[dict[tuple[str, str], Target]]:
    """One database per system and backend, made once for the module."""
    require_pg()
    keys = sorted({(str(c.values[0]), str(c.values[1])) for c in CASES})
    made: dict[tuple[str, str], Target] = {}
    stack = [open_database(provider(n), b) for n, b in keys]
    try:
        for key, ctx in zip(keys, stack, strict=True):
            made[key] = ctx.__enter__()
        yield made
    finally:
        for ctx in reversed(stack[: len(made)]):
            ctx.__exit__(None, None, None)


@pytest.fixture
def audit_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path / "qctl" / "audit.jsonl"


def states(name: str, t: Target, verb: Verb[Any], ids: list[str]) -> dict[str, Any]:
    """What the verb changes of each target: its state, or what the provider observes."""
    observe = getattr(provider(name), "observe", None)
    seen = observe(t, verb.title, ids) if observe else None
    if seen is not None:
        return dict(seen)
    with provider(name).handle(t) as handle:
        return {x.id: x.state for x in verb.lookup(handle, ids)}


def moved(before: dict[str, str], after: dict[str, str]) -> bool:
    """Every row changed state, or is gone (a delete)."""
    return all(after.get(i) != s for i, s in before.items())


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_by_ids(
    name: str, backend: str, title: str, targets: dict[tuple[str, str], Target], audit_log: Path
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    ids, _ = provider(name).verb_rows(t, title, N)
    with unchanged(t):
        plan = data(qctl(t, *title.split(), *ids, "--dry-run", "-o", "json"))
    assert plan["dry_run"] is True and sorted(plan["ids"]) == sorted(ids)
    assert plan["selected"] == N and plan["skipped"] == {} and sum(plan["states"].values()) == N
    before = states(name, t, verb, ids)
    result = data(qctl(t, *title.split(), *ids, "--yes", "-o", "json"))
    assert (result["verb"], result["system"], result["selected"]) == (title, name, N)
    assert result["done"] == N and sorted(result["ids"]) == sorted(ids)
    assert result["skipped"] == {} and result["stopped_part_way"] is False
    assert moved(before, states(name, t, verb, ids))
    [entry] = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert (entry["verb"], entry["done"], entry["skipped"], entry["ids_count"]) == (title, N, 0, N)
    assert sorted(entry["ids"]) == sorted(ids)


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_by_filter_with_max(
    name: str,
    backend: str,
    title: str,
    targets: dict[tuple[str, str], Target],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    ids, where = provider(name).verb_rows(t, title, N)
    with unchanged(t):
        capped = qctl(t, *title.split(), *where, "--max", str(N - 1), "--yes")
        assert capped.exit_code == 2 and f"more than {N - 1}" in capped.stderr, capped.output
        plan = data(qctl(t, *title.split(), *where, "--dry-run", "-o", "json"))
        # a table's sample says it is one
        monkeypatch.setattr(verbs, "SAMPLE", N - 1)
        table = qctl(t, *title.split(), *where, "--dry-run")
        assert table.exit_code == 0 and f"{N - 1} of {N} shown" in table.stdout, table.output
    assert sorted(plan["ids"]) == sorted(ids) and plan["selection"]["by"] == "filter"
    before = states(name, t, verb, ids)
    result = data(qctl(t, *title.split(), *where, "--yes", "-o", "json"))
    assert result["done"] == N and sorted(result["ids"]) == sorted(ids)
    assert moved(before, states(name, t, verb, ids))


@pytest.mark.parametrize(
    ("name", "backend", "title"), [c for c in CASES if str(c.values[2]).startswith("queues ")]
)
def test_a_queue_named_that_does_not_exist_is_not_found(
    name: str,
    backend: str,
    title: str,
    targets: dict[tuple[str, str], Target],
    audit_log: Path,
) -> None:
    """A queue name is typed, not read from a listing: one that names nothing is a typo
    to say (exit 3, as ``jobs show`` of an unknown id), alone or beside a real queue,
    and nothing is planned or written."""
    t = targets[name, backend]
    real, _ = provider(name).verb_rows(t, title, 1)
    with unchanged(t):
        for names in (["nosuchqueue"], [real[0], "nosuchqueue"]):
            for flag in ("--yes", "--dry-run"):
                result = qctl(t, *title.split(), *names, flag)
                said = (result.exit_code, result.stderr, result.stdout)
                assert said == (3, "qctl: error: no queue 'nosuchqueue'\n", ""), said
    # the attempts are audited as refused: exit 3, nothing done
    entries = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert {(e["exit_status"], e["done"]) for e in entries} == {(3, 0)}


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_plan_file_runs_exactly_its_ids(
    name: str,
    backend: str,
    title: str,
    targets: dict[tuple[str, str], Target],
    tmp_path: Path,
    audit_log: Path,
) -> None:
    t = targets[name, backend]
    ids, where = provider(name).verb_rows(t, title, N)
    plan_file = tmp_path / "plan.json"
    with unchanged(t):
        qctl(t, *title.split(), *where, "--plan-out", str(plan_file), "-o", "json")
    saved = json.loads(plan_file.read_text())
    assert sorted(saved["ids"]) == sorted(ids) and saved["digest"]
    extra, _ = provider(name).verb_rows(t, title, 1)  # matches the filter, not the plan
    reason = provider(name).change(t, title, ids[0])
    result = data(qctl(t, *title.split(), "--plan", str(plan_file), "--yes", "-o", "json"))
    assert result["done"] == N - 1 and result["skipped"] == {reason: 1}
    assert result["plan_digest"] == saved["digest"] and extra[0] not in result["ids"]
    assert json.loads(audit_log.read_text().splitlines()[-1])["plan"] == saved["digest"]
    tampered = {**saved, "ids": [*saved["ids"], extra[0]]}
    plan_file.write_text(json.dumps(tampered))
    with unchanged(t):
        refused = qctl(t, *title.split(), "--plan", str(plan_file), "--yes")
    assert refused.exit_code == 2 and "digest" in refused.stderr


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_a_target_changed_after_the_plan_is_skipped(
    name: str, backend: str, title: str, targets: dict[tuple[str, str], Target]
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    ids, _ = provider(name).verb_rows(t, title, N)
    with provider(name).handle(t) as handle:
        planned = verbs.plan(handle, verb, Selection.of_ids(ids), "contract")
        reason = provider(name).change(t, title, ids[1])
        result = verbs.run(handle, verb, planned)
    assert result.done == N - 1 and result.skipped == {reason: 1} and ids[1] not in result.ids
    assert not result.stopped_part_way


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_a_run_stopped_part_way_says_what_it_committed(
    name: str,
    backend: str,
    title: str,
    targets: dict[tuple[str, str], Target],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    ids, _ = provider(name).verb_rows(t, title, N)
    monkeypatch.setattr(verbs, "BATCH", 1)
    calls = []

    def second_fails(handle: Any, batch: list[str]) -> verbs.Written:
        calls.append(batch)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return verb.write(handle, batch)

    failing = dataclasses.replace(verb, write=second_fails)
    before = states(name, t, verb, ids)
    with provider(name).handle(t) as handle:
        planned = verbs.plan(handle, failing, Selection.of_ids(ids), "contract")
        with pytest.raises(verbs.Stopped) as stopped:
            verbs.run(handle, failing, planned)
    result = stopped.value.result
    assert result.stopped_part_way and result.done == 1 and result.batches == 1
    after = states(name, t, verb, ids)
    assert [i for i in ids if after.get(i) != before[i]] == result.ids


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_dashboard_and_command_line_leave_the_same_rows(
    name: str, backend: str, title: str, targets: dict[tuple[str, str], Target], audit_log: Path
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    by_cli, _ = provider(name).verb_rows(t, title, N)
    by_top, _ = provider(name).verb_rows(t, title, N)
    reason = "incident 42: upstream back"
    data(qctl(t, *title.split(), *by_cli, "--yes", "--reason", reason, "-o", "json"))
    screens = load(system(name).screens)

    async def main(handle: Any) -> None:
        top = QctlTop(handle, system=screens, location="contract")
        async with top.run_test(size=(160, 45)) as pilot:
            top.act_verb(verb, Selection.of_ids(by_top, by="marks"))
            await until(pilot, lambda: isinstance(top.screen, ConfirmDialog), 10)
            question = top.screen.question  # type: ignore[attr-defined]
            assert question.startswith(f"{verb.name.capitalize()} {verb.count(N)} (")
            # the reason field: r, the text (its y and n are text), enter back to the answer
            await until(pilot, lambda: top.screen.focused is not None)
            await pilot.press("r")
            await until(pilot, lambda: top.screen.focused.id == "reason")  # type: ignore[union-attr]
            await pilot.press(*reason, "enter", "y")
            await until(pilot, lambda: top.actions_done == 1, 20)

    with provider(name).handle(t) as handle:
        asyncio.run(main(handle))
    cli_states = sorted(states(name, t, verb, by_cli).values())
    assert cli_states == sorted(states(name, t, verb, by_top).values())
    cli_entry, top_entry = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert (top_entry["front"], top_entry["verb"], top_entry["done"]) == ("dashboard", title, N)
    assert cli_entry["done"] == top_entry["done"] and sorted(top_entry["ids"]) == sorted(by_top)
    # the same row but for the front, the moment, the selection and the ids
    same = ("verb", "reason", "done", "failed", "skipped", "not_tried", "exit_status", "error")
    assert {k: cli_entry[k] for k in same} == {k: top_entry[k] for k in same}
    assert top_entry["reason"] == reason


@pytest.mark.parametrize(("name", "backend", "title"), CASES)
def test_read_only_dashboard_names_the_disabled_verb(
    name: str, backend: str, title: str, targets: dict[tuple[str, str], Target]
) -> None:
    t, verb = targets[name, backend], declared(name, title)
    ids, _ = provider(name).verb_rows(t, title, 1)
    screens = load(system(name).screens)
    said: list[str] = []

    async def main(handle: Any) -> None:
        top = QctlTop(handle, system=screens, location="contract", read_only=True)
        top.notify = lambda message, **_: said.append(str(message))  # type: ignore[method-assign]
        async with top.run_test(size=(160, 45)):
            top.act_verb(verb, Selection.of_ids(ids, by="marks"))

    with unchanged(t), provider(name).handle(t) as handle:
        asyncio.run(main(handle))
    assert f"read-only: {verb.name} is disabled" in said
