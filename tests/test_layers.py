"""The import rules between qctl's layers, read from the source with ``ast`` (nothing is
imported to check them):

- ``qctl_kit``, the database toolkit under every system, imports neither ``qctl`` nor
  ``qctl_store``; ``qctl_store`` (azync's store, one client of the toolkit) imports
  nothing of ``qctl``: each is a library of its own.
- Only azync's package reaches azync's store: ``qctl/core``, the shells and every other
  system import ``qctl_kit``, never ``qctl_store``.
- ``qctl/core``, the toolkit every system and both front-ends share, imports no system
  (``qctl.systems``, azync's operations layer included) and no front-end (``qctl.cli``,
  ``qctl.tui``, typer, textual).
- The shells name a system only through its record; ``qctl/cli`` imports nothing of
  azync's store contract (its job sources, states and cursors live in azync's ``cli/``).
- No two modules of ``qctl`` import each other, directly or through others.

Every ``import`` and ``from ... import`` counts, relative ones resolved, wherever it
stands: at module level, in a class body, or inside a function. A function-level (lazy)
import is an edge of the circle check like a module-level one: it postpones loading a
module, not depending on it, so two modules that import each other, one of them lazily,
still cannot be moved, read or tested apart. Imports under ``if TYPE_CHECKING:`` obey the
layer rules but are left out of the circle check: they never run, and they are how an
annotation names a type from a module that imports this one. A module named by a string
(``importlib.import_module``, the command registry's ``Entry``) is not an import: that
is how a shell reaches a module it must not depend on. An import names its module only,
not the parent packages Python initialises first (a package's ``__init__`` that imports
its children would otherwise form a circle with each of them).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("qctl", "qctl_kit", "qctl_store")

CORE_MUST_NOT_IMPORT = ("qctl.systems", "qctl.cli", "qctl.tui", "typer", "textual")


@dataclass(frozen=True)
class Import:
    source: str
    """The importing module."""
    target: str
    """The imported module (for ``from m import name``, where name is no module: m)."""
    line: int
    typing_only: bool

    def __str__(self) -> str:
        return f"{MODULES[self.source].relative_to(ROOT)}:{self.line} imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    _module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, *([node.module] if node.module else [])])
    # ``from qctl.cli import common`` imports the module ``qctl.cli.common``.
    named = (f"{base}.{alias.name}" for alias in node.names)
    return list(dict.fromkeys(name if name in MODULES else base for name in named))


def imports_of(module: str) -> list[Import]:
    path = MODULES[module]
    found: list[Import] = []

    def visit(nodes: Iterable[ast.AST], typing_only: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                found.extend(
                    Import(module, target, node.lineno, typing_only)
                    for target in _targets(module, path, node)
                )
            elif isinstance(node, ast.If) and _is_type_checking(node.test):
                visit(node.body, True)
                visit(node.orelse, typing_only)
            else:
                visit(ast.iter_child_nodes(node), typing_only)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)).body, False)
    return found


ALL_IMPORTS = [imp for module in sorted(MODULES) for imp in imports_of(module)]


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(f"{p}.") for p in prefixes)


def test_the_store_imports_nothing_of_qctl() -> None:
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.source, ("qctl_store",)) and _within(i.target, ("qctl",))
    ]
    assert not wrong, "\n".join(wrong)


def test_the_toolkit_imports_no_system() -> None:
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.source, ("qctl_kit",)) and _within(i.target, ("qctl", "qctl_store"))
    ]
    assert not wrong, "\n".join(wrong)


def test_only_azync_reaches_azync_store() -> None:
    """``qctl/core``, ``qctl/cli``, ``qctl/tui`` and every system but azync read and
    write through ``qctl_kit``; azync's store is azync's package's alone."""
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.source, ("qctl",))
        and not _within(i.source, ("qctl.systems.azync",))
        and _within(i.target, ("qctl_store",))
    ]
    assert not wrong, "\n".join(wrong)


def test_core_imports_no_system_and_no_front_end() -> None:
    assert (ROOT / "qctl" / "core" / "__init__.py").is_file()
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.source, ("qctl.core",)) and _within(i.target, CORE_MUST_NOT_IMPORT)
    ]
    assert not wrong, "\n".join(wrong)


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges[node]):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def test_no_import_circle_in_qctl() -> None:
    inside = [
        i
        for i in ALL_IMPORTS
        if not i.typing_only
        and _within(i.source, ("qctl",))
        and _within(i.target, ("qctl",))
        and i.target in MODULES
        and i.target != i.source
    ]
    edges: dict[str, set[str]] = {m: set() for m in MODULES if _within(m, ("qctl",))}
    for i in inside:
        edges[i.source].add(i.target)
    circles = [
        "circle: " + "; ".join(str(i) for i in inside if {i.source, i.target} <= set(members))
        for members in _circles(edges)
    ]
    assert not circles, "\n".join(circles)


def test_the_reader_sees_every_kind_of_import() -> None:
    """The checks above are only as good as this reader: a lazy, a relative and a
    type-only import of a known module are each found."""
    lazy = [i for i in imports_of("qctl.cli.launch") if i.target == "qctl.cli.main"]
    assert lazy and not lazy[0].typing_only
    typing_only = [
        i for i in imports_of("qctl.systems.azync.tui") if i.target == "qctl.systems.azync.tui.dags"
    ]
    assert typing_only and typing_only[0].typing_only
    relative = ast.parse("from .errors import NotFound\nfrom . import dsn\n").body
    targets = [
        target
        for node in relative
        if isinstance(node, ast.ImportFrom)
        for target in _targets("qctl_kit.config", MODULES["qctl_kit.config"], node)
    ]
    assert targets == ["qctl_kit.errors", "qctl_kit.dsn"]


SHELLS = ("qctl.cli", "qctl.tui")
FRONT_ENDS = ("cli", "tui")
"""The subpackages of a system that are its front-ends (``qctl.systems.<name>.cli``)."""
SYSTEM_CORE_MUST_NOT_IMPORT = ("qctl.cli", "qctl.tui", "typer", "textual")


def _system_of(module: str) -> str:
    """``azync`` for ``qctl.systems.azync.cli.jobs``; "" outside a system's package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["qctl", "systems"] else ""


def test_the_shells_name_a_system_only_through_its_record() -> None:
    """``qctl/cli`` and ``qctl/tui`` import ``qctl.systems`` (which resolves records),
    never a system's package: a new system edits no shell."""
    wrong = [str(i) for i in ALL_IMPORTS if _within(i.source, SHELLS) and _system_of(i.target)]
    assert not wrong, "\n".join(wrong)


def test_a_system_imports_no_other_system() -> None:
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _system_of(i.source)
        and _system_of(i.target)
        and _system_of(i.source) != _system_of(i.target)
    ]
    assert not wrong, "\n".join(wrong)


def test_a_systems_own_modules_import_no_front_end() -> None:
    """Everything of a system but its ``cli/`` and ``tui/`` (connection, reads, actions,
    demo) imports no typer, no textual and no shell: the dashboard and the command line
    call the same actions, and a system's record loads on every ``qctl --help``."""
    assert {_system_of(m) for m in MODULES} >= {"azync", "dbos"}
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _system_of(i.source)
        and i.source.split(".")[3:4] not in ([f] for f in FRONT_ENDS)
        and _within(i.target, SYSTEM_CORE_MUST_NOT_IMPORT)
    ]
    assert not wrong, "\n".join(wrong)


AZYNC_CONTRACT = ("qctl_store.types", "qctl_store.contract", "qctl_store.listing")
"""azync's store contract: its rows, job sources and states, searches and page cursors."""


def test_the_command_line_shell_names_no_azync_concept() -> None:
    """``qctl/cli`` holds what every system's commands share; azync's job options,
    sources, states and keyset cursors are in its own package
    (``qctl/systems/azync/cli/options.py``), and its store is opened by its own
    ``System.database`` (``qctl/systems/azync/cli/database.py``)."""
    wrong = [
        str(i)
        for i in ALL_IMPORTS
        if _within(i.source, ("qctl.cli",)) and _within(i.target, AZYNC_CONTRACT)
    ]
    assert not wrong, "\n".join(wrong)
