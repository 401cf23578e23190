"""One suite over every registered system, as River's driver tests run over every
driver: each system's tests give a provider (``tests/<system>/contract.py``, see
``tests/systems/contract.py``) and this module checks what every system owes an
operator:

- its database is detected without ``--system``, and ``db status`` works with it named;
- ``qctl --help`` and each of its nouns' ``--help`` work with the database unreachable;
- a noun it lacks exits 2 and names the nouns it has;
- every verb that writes (one with ``--dry-run`` or ``--yes``, not the hidden ``--yes``
  every verb takes) is in the provider's
  ``WRITES``; with ``--read-only`` each is refused (exit 4) and writes nothing, and its
  dry run and its ``--plan-out`` (only planning) exit 0 and write nothing (a verb the
  provider maps to None is one the system never runs, as DBOS's ``db migrate``: exit 2
  and nothing written, whatever the flags);
- every dashboard tab mounts on its rows and the help explains every column; with
  ``--read-only`` the footer offers no writing action.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer._click import Context
from typer.testing import CliRunner, Result

from qctl.cli.main import app, build
from qctl.systems import System, all_nouns, load, systems
from qctl.tui.app import QctlTop
from qctl.tui.base import SystemScreens
from tests.conftest import require_pg
from tests.systems.contract import (
    Target,
    backends,
    open_database,
    target_id,
    unchanged,
)
from tests.tui.helpers import until

pytestmark = pytest.mark.timeout(300)

NAMES = [s.name for s in systems()]
UNREACHABLE = "postgresql://qctl@127.0.0.1:1/nowhere?connect_timeout=1"
NOT_WRITES = {"demo", "jobs list", "jobs errors"}
"""Verbs with ``--yes`` that write nothing of the database they name: ``demo`` runs on its
own database, and ``jobs list --yes`` and ``jobs errors --yes`` only skip the question
before a full scan."""


def provider(name: str) -> ModuleType:
    return importlib.import_module(f"tests.{name}.contract")


def system(name: str) -> System:
    return next(s for s in systems() if s.name == name)


def qctl(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def leaves(command: Any, ctx: Context, path: str) -> Iterator[tuple[str, Any]]:
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from leaves(sub, Context(sub, info_name=name, parent=ctx), f"{path} {name}")
    else:
        yield path.strip(), command


def writing_verbs(s: System) -> dict[str, set[str]]:
    """Every verb of ``s`` with ``--dry-run`` or ``--yes``, and which of those and
    ``--plan-out`` it has."""
    verbs = {}
    for noun, entry in s.commands.items():
        command = build(noun, entry)
        for path, leaf in leaves(command, Context(command, info_name=noun), noun):
            shown = [p for p in leaf.params if not getattr(p, "hidden", False)]
            opts = {o for p in shown for o in getattr(p, "opts", [])}
            if opts & {"--dry-run", "--yes"} and path not in NOT_WRITES:
                verbs[path] = opts & {"--dry-run", "--yes", "--plan-out"}
    return verbs


TARGETS = [(n, b) for n in NAMES for b in backends(provider(n))]
"""Every system on each backend its provider makes databases on."""


@pytest.fixture(scope="module", params=TARGETS, ids=[target_id(n, b) for n, b in TARGETS])
def target(request: pytest.FixtureRequest) -> Iterator[tuple[str, Target]]:
    require_pg()
    name, backend = request.param
    with open_database(provider(name), backend) as t:
        yield name, t


def test_every_system_has_a_provider() -> None:
    for name in NAMES:
        module = provider(name)
        assert callable(module.database) and callable(module.handle), name
        assert isinstance(module.WRITES, dict), name
        assert isinstance(module.REAL_WRITE, list), name


def test_detected_and_named(target: tuple[str, Target]) -> None:
    name, t = target
    detected = qctl(*t.args, "db", "status", "-o", "json")
    assert detected.exit_code == 0, detected.output
    assert json.loads(detected.stdout)["system"] == name
    named = qctl(*t.args, "--system", name, "db", "status")
    assert named.exit_code == 0, named.output


def test_status_lists_the_schemas_invalid_indexes(target: tuple[str, Target]) -> None:
    """An index a cancelled CREATE INDEX CONCURRENTLY left invalid (marked so here, as
    such a build leaves it) is listed by ``db status`` on every system, with a line on
    how it is rebuilt."""
    import psycopg

    _, t = target
    if not t.dsn.startswith("postgres"):
        pytest.skip("SQLite builds no index concurrently: none is left invalid")
    with psycopg.connect(t.dsn, autocommit=True) as conn:
        schema = t.schema or str(conn.execute("SELECT current_schema()").fetchone()[0])  # type: ignore[index]
        table, column = conn.execute(
            "SELECT c.relname, a.attname FROM pg_class c JOIN pg_attribute a"
            " ON a.attrelid = c.oid AND a.attnum = 1"
            " WHERE c.relnamespace = %s::regnamespace AND c.relkind = 'r' ORDER BY 1 LIMIT 1",
            (schema,),
        ).fetchone()  # type: ignore[misc]
        index = f'"{schema}".qctl_test_invalid_idx'
        conn.execute(f'CREATE INDEX qctl_test_invalid_idx ON "{schema}"."{table}" ("{column}")')
        conn.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", (index,)
        )
        try:
            status = qctl(*t.args, "db", "status", "-o", "json")
        finally:
            conn.execute(f"DROP INDEX {index}")
    assert json.loads(status.stdout)["invalid_indexes"] == ["qctl_test_invalid_idx"]
    assert "invalid index(es): qctl_test_invalid_idx (" in status.stderr
    assert status.stderr.rstrip().endswith(
        f'rebuild each with REINDEX INDEX CONCURRENTLY "{schema}".<name>'
    )


@pytest.mark.parametrize("name", NAMES)
def test_help_needs_no_database(name: str) -> None:
    root = qctl("--dsn", UNREACHABLE, "--system", name, "--help")
    assert root.exit_code == 0, root.output
    for noun in system(name).commands:
        assert noun in root.stdout
        result = qctl("--dsn", UNREACHABLE, "--system", name, noun, "--help")
        assert result.exit_code == 0, (noun, result.output)
        assert "Usage: qctl" in result.stdout


@pytest.mark.parametrize("name", NAMES)
def test_a_lacking_noun_names_the_nouns_it_has(name: str) -> None:
    s = system(name)
    lacking = [noun for noun in all_nouns() if noun not in s.commands]
    assert lacking, f"{name} has every noun: nothing to check"
    for noun in lacking:
        result = qctl("--dsn", UNREACHABLE, "--system", name, noun, "list")
        assert result.exit_code == 2, (noun, result.output)
        [line] = result.stderr.splitlines()
        assert f"have no {noun}" in line
        assert f"(its nouns: {', '.join(s.commands)})" in line, line


@pytest.mark.parametrize("name", NAMES)
def test_no_option_defaults_outside_its_range(name: str) -> None:
    """An option an operator must give is required ("Missing option"), never a default
    its own range refuses (``[default: 0; x>=1]``)."""
    for noun, entry in system(name).commands.items():
        command = build(noun, entry)
        for path, leaf in leaves(command, Context(command, info_name=noun), noun):
            for p in leaf.params:
                low, high = getattr(p.type, "min", None), getattr(p.type, "max", None)
                if isinstance(p.default, int | float) and not isinstance(p.default, bool):
                    assert low is None or p.default >= low, (path, p.opts)
                    assert high is None or p.default <= high, (path, p.opts)


UNKNOWN_JOBS = {
    "azync": ("0d3c2b1a-1111-4222-8333-444455556666", "deadbeef"),
    "hopper": ("0d3c2b1a-1111-7222-8333-444455556666", "deadbeef"),
    "dispatch": ("job_01h455vb4pex5vsknk084sn02q", "job_01h455vb"),
    "river": ("999999999", None),
    "oban": ("999999999", None),
}
"""A job id each system with jobs could have and does not, typed whole and (where the
system takes one) as a prefix."""


def test_an_unknown_job_id_is_not_found(target: tuple[str, Target]) -> None:
    name, t = target
    if "jobs" not in system(name).commands:
        pytest.skip(f"{name} has no jobs")
    whole, prefix = UNKNOWN_JOBS[name]
    result = qctl(*t.args, "jobs", "show", whole)
    assert (result.exit_code, result.stderr) == (3, f"qctl: error: no job {whole!r}\n")
    if prefix:
        result = qctl(*t.args, "jobs", "show", prefix)
        said = f"qctl: error: no job id starts with {prefix!r}\n"
        assert (result.exit_code, result.stderr) == (3, said)


def test_every_writing_verb_is_covered(target: tuple[str, Target]) -> None:
    name, _ = target
    missing = sorted(set(writing_verbs(system(name))) - set(provider(name).WRITES))
    assert not missing, f"tests/{name}/contract.py WRITES lacks {missing}"


@pytest.fixture
def audit_log(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The audit trail of this test's writes (``qctl.core.audit``)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path / "qctl" / "audit.jsonl"


def audited(log: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_read_only_refuses_every_write(target: tuple[str, Target], audit_log: Any) -> None:
    name, t = target
    writes = provider(name).WRITES
    for verb, flags in writing_verbs(system(name)).items():
        yes = ["--yes"] if "--yes" in flags else []
        with unchanged(t):
            result = qctl(*t.args, "--read-only", *verb.split(), *(writes[verb] or ()), *yes)
        if writes[verb] is None:  # a verb the system never runs: refused as a usage error
            assert result.exit_code == 2, (verb, result.output)
            continue
        assert result.exit_code == 4, (verb, result.output)
        assert "read-only" in result.stderr, (verb, result.stderr)
    assert audited(audit_log) == [], "a write refused before it started is not audited"


def test_every_plan_writes_nothing(
    target: tuple[str, Target], audit_log: Any, tmp_path: Path
) -> None:
    """A dry run and ``--plan-out`` only plan: read-only or not, each exits 0, writes
    nothing of the database (``--plan-out`` its plan file) and is not audited."""
    name, t = target
    writes = provider(name).WRITES
    plan = tmp_path / "plan.json"
    for verb, flags in writing_verbs(system(name)).items():
        for planning in (["--dry-run"], ["--plan-out", str(plan)]):
            if planning[0] not in flags:
                continue
            for read_only in ([], ["--read-only"]):
                plan.unlink(missing_ok=True)
                with unchanged(t):
                    args = writes[verb] or ()
                    result = qctl(*t.args, *read_only, *verb.split(), *args, *planning)
                expected = 2 if writes[verb] is None else 0
                assert result.exit_code == expected, (verb, planning, read_only, result.output)
                assert plan.exists() == (planning[0] == "--plan-out" and expected == 0), verb
    assert audited(audit_log) == [], "a plan only reads: it is not audited"


def test_every_write_is_audited(
    target: tuple[str, Target], audit_log: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every writing verb starts its audit entry where it passes the read-only check:
    stopped right there (nothing written), each appends one entry naming the verb, the
    system, the selection, the reason and the exit status."""
    from qctl.cli.context import CliContext
    from qctl.core.exits import Refused

    began = CliContext.require_writable

    def stop_there(self: CliContext, action: str) -> None:
        began(self, action)
        raise Refused("stopped by the test")

    monkeypatch.setattr(CliContext, "require_writable", stop_there)
    name, t = target
    writes = provider(name).WRITES
    verbs = [v for v in writing_verbs(system(name)) if writes[v] is not None]
    for verb in verbs:
        with unchanged(t):
            result = qctl(*t.args, *verb.split(), *writes[verb], "--yes", "--reason", verb)
        assert result.exit_code == 4, (verb, result.output)
        entry = audited(audit_log)[-1]
        assert (entry["verb"], entry["system"], entry["reason"]) == (verb, name, verb)
        assert (entry["exit_status"], entry["error"]) == (4, "stopped by the test")
        assert entry["selection"] or not writes[verb], verb
    assert len(audited(audit_log)) == len(verbs)


def test_a_real_write_is_audited(target: tuple[str, Target], audit_log: Any) -> None:
    """Each provider's ``REAL_WRITE`` (azync's dashboard writes are in
    ``tests/cli/test_audit.py``)."""
    name, t = target
    real = provider(name).REAL_WRITE
    result = qctl(*t.args, *real, "--yes", "--reason", "capacity")
    assert result.exit_code == 0, result.output
    [entry] = audited(audit_log)
    assert entry["verb"] == " ".join(real[:2])
    assert (entry["system"], entry["exit_status"], entry["error"]) == (name, 0, None)
    assert entry["done"] >= 1 and entry["reason"] == "capacity"
    assert entry["schema"] == (t.schema or None) and entry["dsn"] == t.dsn


def glossary(help_text: str) -> str:
    """The help's "Columns" section on one line (``word: meaning; ...``)."""
    assert "Columns" in help_text, "the help has no Columns section"
    return " ".join(help_text.split("Columns", 1)[1].split())


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_dashboard_tabs_mount_and_help_explains_columns(
    target: tuple[str, Target], read_only: bool
) -> None:
    from textual.widgets import DataTable

    name, t = target
    screens: SystemScreens = load(system(name).screens)
    words = glossary(screens.help_text())
    unexplained: set[str] = set()

    async def main(handle: Any) -> None:
        top = QctlTop(handle, system=screens, location="contract", read_only=read_only)
        async with top.run_test(size=(200, 50)) as pilot:
            for number, tab in enumerate(screens.tabs, 1):
                await pilot.press(str(number))
                pane = f"#{tab.name}-pane"
                await until(pilot, lambda p=pane: top.screen.query_one(p), 10)
                await until(pilot, lambda: all(t.columns for t in top.screen.query(DataTable)), 10)
                for table in top.screen.query(DataTable).results(DataTable):
                    for column in table.columns.values():
                        label = str(column.label).strip()
                        if label and not re.search(
                            rf"(?<![\w-]){re.escape(label)}\b", words, re.IGNORECASE
                        ):
                            unexplained.add(f"{tab.name}: {label}")
                if read_only:
                    shown = {b.binding.action for b in top.screen.active_bindings.values()}
                    assert not shown & screens.writes, (tab.name, shown & screens.writes)

    with provider(name).handle(t) as handle:
        asyncio.run(main(handle))
    assert not unexplained, f"{name}'s help leaves unexplained: {sorted(unexplained)}"
