"""The SQL-file convention (``qctl_kit/sqlfile.py``): the parser, the token vocabulary
(azync's ``AZYNC_SQL`` besides every system's), and that the named queries of both
backends and their Python callers agree: every query referenced exists, every query is
used, every query has its one-line description. For DBOS too, and no DBOS module holds
SQL text of its own."""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path

import pytest

import qctl.systems.dbos
import qctl_store
from qctl_kit import sqlfile
from qctl_store.columns import AZYNC_SQL, job_columns

PACKAGE = Path(qctl_store.__file__).parent
BACKENDS = ("postgres", "sqlite")


def _files(backend: str) -> dict[str, sqlfile.Queries]:
    package = f"qctl_store.{backend}.queries"
    return {
        f.name: sqlfile.load(package, f.name, AZYNC_SQL)
        for f in resources.files(package).iterdir()
        if f.name.endswith(".sql")
    }


# --- the parser -------------------------------------------------------------------------


def test_parse_splits_named_blocks_with_descriptions() -> None:
    q = sqlfile.parse(
        "-- File header, not a query.\n\n"
        "-- name: first\n"
        "-- What the first one does.\n"
        "-- Why it is written this way.\n"
        "SELECT 1;\n\n"
        "-- name: second\n"
        "SELECT 2\n"
        "  -- an indented note\n"
        "FROM t\n"
    )
    assert list(q) == ["first", "second"]
    assert q.first == "SELECT 1"  # comment lines and the trailing ';' are not sent
    assert q["second"] == "SELECT 2\nFROM t"
    assert q.descriptions == {"first": "What the first one does."}
    with pytest.raises(AttributeError):
        _ = q.third


def test_parse_refuses_a_name_defined_twice() -> None:
    with pytest.raises(ValueError, match="'a' defined twice"):
        sqlfile.parse("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n", "x.sql")


def test_parse_fills_column_tokens_and_keeps_fragment_tokens() -> None:
    text = "-- name: a\nSELECT {jobs_j} FROM azync_jobs j WHERE {where} AND {paused}\n"
    q = sqlfile.parse(text, vocabulary=AZYNC_SQL)
    assert q.a == f"SELECT {job_columns('j')} FROM azync_jobs j WHERE {{where}} AND {{paused}}"
    # A system's vocabulary is its own: without it, azync's tokens are unknown.
    with pytest.raises(ValueError, match=r"unknown token \{jobs_j\}"):
        sqlfile.parse(text)


def test_parse_refuses_a_token_outside_the_vocabulary() -> None:
    with pytest.raises(ValueError, match=r"x.sql: a: unknown token \{colums\}"):
        sqlfile.parse("-- name: a\nSELECT {colums} FROM t\n", "x.sql")


def test_load_fills_the_blocks_of_the_packages_fragments_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "shared_sql_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "fragments.sql").write_text(
        "-- name: tail\n-- The shared part.\ndone AS (SELECT {jobs} FROM azync_jobs)\n"
    )
    (package / "a.sql").write_text("-- name: q\n-- One.\nWITH {tail} SELECT * FROM done;\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    q = sqlfile.load("shared_sql_pkg", "a.sql", AZYNC_SQL)
    assert q.q == f"WITH done AS (SELECT {job_columns()} FROM azync_jobs) SELECT * FROM done"
    (package / "fragments.sql").write_text("-- name: where\n-- Taken.\nTRUE\n")
    sqlfile.load.cache_clear()
    with pytest.raises(ValueError, match=r"\['where'\] are tokens already"):
        sqlfile.load("shared_sql_pkg", "a.sql")
    sqlfile.load.cache_clear()


def test_json_literals_are_not_tokens() -> None:
    q = sqlfile.parse("-- name: a\nSELECT '{}'::jsonb, '{\"k\": 1}'\n")
    assert q.a == "SELECT '{}'::jsonb, '{\"k\": 1}'"
    assert sqlfile.fill(q.a) == q.a


def test_fill_replaces_every_token_and_checks_both_ways() -> None:
    sql = "SELECT 1 FROM t WHERE {where} ORDER BY {order}"
    assert sqlfile.fill(sql, where="a = 1", order="id") == "SELECT 1 FROM t WHERE a = 1 ORDER BY id"
    with pytest.raises(ValueError, match=r"no fragment for \{order\}"):
        sqlfile.fill(sql, where="a = 1")
    with pytest.raises(ValueError, match=r"fragments \['table'\] have no token"):
        sqlfile.fill(sql, where="a = 1", order="id", table="t")


def test_an_empty_fragment_takes_its_dot_along() -> None:
    sql = "INSERT INTO {schema}.azync_jobs"
    assert sqlfile.fill(sql, schema='"s"') == 'INSERT INTO "s".azync_jobs'
    assert sqlfile.fill(sql, schema="") == "INSERT INTO azync_jobs"


def test_identifier_quotes_like_postgres() -> None:
    assert sqlfile.identifier("azync_migrations") == '"azync_migrations"'
    assert sqlfile.identifier('we"ird') == '"we""ird"'


# --- the files of both backends ---------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_named_query_has_a_one_line_description(backend: str) -> None:
    missing = [
        f"{backend}/queries/{name}: {query}"
        for name, queries in _files(backend).items()
        for query in queries
        if not queries.descriptions.get(query, "").endswith(".")
    ]
    assert not missing, "queries without a one-line description:\n" + "\n".join(missing)


def _file_of(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The .sql file ``node`` stands for: a name bound to ``queries("<file>")`` (in the
    shared modules ``self.queries("<file>")``), or such a call itself."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if (
        isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id == "queries")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "queries")
        )
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ):
        return str(node.args[0].value)
    return None


HOOKS = {
    "_act": ("admin.sql", 1),
    "_settle": ("workflows.sql", 1),
    "_changed": ("admin.sql", 0),
    "_act_many": ("admin.sql", 0),
}
"""Backend hooks of the shared verbs, the file whose statement they run by name and the
argument that names it."""


def _scan(scope: ast.AST, outer: dict[str, str], refs: set[tuple[str, str]]) -> None:
    """The references in ``scope`` (a module or a function), its names bound to a file
    on top of ``outer``'s; nested functions are scopes of their own."""
    bound = dict(outer)
    nodes, inner = [], []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inner.append(node)
            continue
        nodes.append(node)
        todo.extend(ast.iter_child_nodes(node))
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and (f := _file_of(node.value, bound)):
                bound[target.id] = f
    for node in nodes:
        if isinstance(node, ast.Attribute) and (f := _file_of(node.value, bound)):
            refs.add((f, node.attr))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in HOOKS
            and len(node.args) > (at := HOOKS[node.func.attr][1])
            and isinstance(node.args[at], ast.Constant)
        ):
            refs.add((HOOKS[node.func.attr][0], str(node.args[at].value)))
    for func in inner:
        _scan(func, bound, refs)


def _references(backend: str) -> set[tuple[str, str]]:
    """(file, query) pairs the backend's and the shared modules name, and the statement
    names the shared verbs hand to a backend's hook (``_act`` and ``_act_many`` run them
    from ``admin.sql``, ``_settle`` from ``workflows.sql``)."""
    refs: set[tuple[str, str]] = set()
    for path in [*sorted((PACKAGE / backend).glob("*.py")), *sorted(PACKAGE.glob("*.py"))]:
        _scan(ast.parse(path.read_text(encoding="utf-8")), {}, refs)
    return refs


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_referenced_query_exists(backend: str) -> None:
    files = _files(backend)
    refs = _references(backend)
    assert refs, "the reference scan found nothing: it no longer matches the code"
    missing = [f"{f}: {q}" for f, q in sorted(refs) if q not in files.get(f, {})]
    assert not missing, "referenced queries that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_named_query_is_used(backend: str) -> None:
    refs = _references(backend)
    unused = [
        f"{name}: {query}"
        for name, queries in sorted(_files(backend).items())
        for query in queries
        if (name, query) not in refs
    ]
    assert not unused, "named queries nothing runs:\n" + "\n".join(unused)


# --- DBOS: its statements live in qctl/systems/dbos/queries ----------------------------

DBOS = Path(qctl.systems.dbos.__file__).parent
DBOS_QUERIES = "qctl.systems.dbos.queries"

STATEMENT_TEXT = re.compile(
    r"\b(?:SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|WITH\s+RECURSIVE|ANALYZE|PRAGMA|"
    r"FOR\s+UPDATE|WHERE|GROUP\s+BY|ORDER\s+BY|IS\s+(?:NOT\s+)?NULL|LIKE|ESCAPE)\b"
    r"|\bIN\s*\(|(?:[=<>]|<>)\s*%s"
)
"""SQL in a string: a statement's keywords, or a condition's (``IS NULL``, ``IN (``, a
comparison with a placeholder). Upper case, as qctl writes SQL; prose says these in
lower case."""


def _dbos_files() -> dict[str, sqlfile.Queries]:
    from qctl.systems.dbos.database import POSTGRES_SQL, SQLITE_SQL

    return {
        f"{dialect}/{f.name}": sqlfile.load(DBOS_QUERIES, f.name, vocabulary)
        for dialect, vocabulary in (("postgres", POSTGRES_SQL), ("sqlite", SQLITE_SQL))
        for f in resources.files(DBOS_QUERIES).iterdir()
        if f.name.endswith(".sql")
    }


def _sql_literals(path: Path) -> list[str]:
    """The string literals of ``path`` (f-strings' literal parts too) that hold SQL, but
    docstrings (a module's, class's or function's, and an attribute's after it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(stmt.value)
        for node in ast.walk(tree)
        if isinstance(body := getattr(node, "body", None), list)
        for stmt in body
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    }
    return [
        f"{path.relative_to(DBOS)}:{node.lineno}: {node.value[:80]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and STATEMENT_TEXT.search(node.value)
    ]


def test_the_statement_pattern_finds_sql_and_not_prose() -> None:
    for text in (
        "SELECT 1",
        " FROM {t}workflow_status WHERE status IN (",
        "DELETE FROM {{t}}{table} WHERE workflow_uuid IN ({marks})",
        "ws.created_at <= %s AND (ws.created_at < %s OR ws.workflow_uuid < %s)",
        "ws.forked_from IS NOT NULL",
        "schedule_name LIKE %s ESCAPE '\\'",
        " FOR UPDATE SKIP LOCKED",
        "ANALYZE {t}workflow_status",
        "WITH RECURSIVE up(id, anc) AS (",
    ):
        assert STATEMENT_TEXT.search(text), text
    for text in ("tick %s", "%s", ", ", " AND ", "ws.status", "select a workflow", "in (a)"):
        assert not STATEMENT_TEXT.search(text), text


def test_dbos_modules_hold_no_statement_text() -> None:
    """Every statement and condition qctl sends a DBOS database is a named block of
    ``qctl/systems/dbos/queries/*.sql``; the Python names blocks, columns of a fixed set
    and placeholders (``database.marks``), and joins conditions with AND."""
    modules = sorted(DBOS.rglob("*.py"))
    assert len(modules) > 20, "the scan found too few modules: its path is wrong"
    found = [hit for path in modules for hit in _sql_literals(path)]
    assert not found, "SQL in DBOS's Python (move it to queries/*.sql):\n" + "\n".join(found)


def test_dbos_queries_load_in_both_dialects_with_descriptions() -> None:
    files = _dbos_files()
    assert len(files) >= 12
    missing = [
        f"{name}: {query}"
        for name, queries in files.items()
        for query in queries
        if not queries.descriptions.get(query, "").endswith(".")
    ]
    assert not missing, "DBOS queries without a one-line description:\n" + "\n".join(missing)


def _dbos_references() -> set[tuple[str, str]]:
    """(file, query) pairs DBOS's modules name: attributes of ``queries("<file>")``,
    ``statement("<file>", "<name>")`` and ``condition(db, "<name>")`` (conditions.sql),
    and the literal parts of names put together in code (``q[f"raw_{kind}"]``)."""
    refs: set[tuple[str, str]] = set()
    for path in sorted(DBOS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        _scan(tree, {}, refs)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            name = name or (node.func.id if isinstance(node.func, ast.Name) else None)
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if name == "statement" and len(args) == 2:
                refs.add((str(args[0]), str(args[1])))
            if name == "condition" and len(args) == 1:
                refs.add(("conditions.sql", str(args[0])))
    return refs


def test_every_dbos_query_is_used_and_every_reference_exists() -> None:
    files = {name.partition("/")[2]: q for name, q in _dbos_files().items()}
    refs = _dbos_references()
    assert refs, "the reference scan found nothing: it no longer matches the code"
    missing = [
        f"{f}: {q}"
        for f, q in sorted(refs)
        if not {q, f"{q}_postgres", f"{q}_sqlite"} & set(files.get(f, {}))
    ]
    assert not missing, "referenced DBOS queries that do not exist:\n" + "\n".join(missing)
    named = {q for f, q in refs} | {
        part.value
        for path in sorted(DBOS.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for part in (
            node.values
            if isinstance(node, ast.JoinedStr)
            else node.elts
            if isinstance(node, ast.Tuple | ast.List)
            else [node.body, node.orelse]
            if isinstance(node, ast.IfExp)
            else []
        )
        if isinstance(part, ast.Constant) and isinstance(part.value, str)
    }
    texts = [
        f.read_text(encoding="utf-8")
        for f in resources.files(DBOS_QUERIES).iterdir()
        if f.name.endswith(".sql")
    ]
    unused = [
        f"{f}: {q}"
        for f, queries in sorted(files.items())
        for q in queries
        if not {q, q.removesuffix("_postgres").removesuffix("_sqlite")} & named
        and not any(p.endswith("_") and q.startswith(p) for p in named)
        and not (f == sqlfile.SHARED_FILE and any(f"{{{q}}}" in t for t in texts))
    ]
    assert not unused, "DBOS queries nothing runs:\n" + "\n".join(unused)


def test_dbos_status_lists_in_statements_are_the_python_ones() -> None:
    """The status lists written into statements (so each matches its partial index) are
    those the Python names."""
    from qctl.systems.dbos import actions, reads

    def listed(statuses: tuple[str, ...]) -> str:
        return "IN (" + ", ".join(f"'{s}'" for s in statuses) + ")"

    q = {name.partition("/")[2]: queries for name, queries in _dbos_files().items()}
    assert listed(reads.FAILED) in q["reads.sql"].error_groups
    assert listed(reads.FAILED) in q["reads.sql"].error_group_newest
    for walk in ("unfinished_ancestor", "unfinished_descendant"):
        assert listed(actions.UNFINISHED) in q["actions.sql"][walk]
