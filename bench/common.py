"""Helpers shared by the benchmark scripts (qctl's venv and the peers' venv alike).

Every scenario script prints its figures as it goes and, with ``--json PATH``, appends
one JSON object per figure to PATH (``Result``), which ``bench/run.py`` turns into the
tables of ``docs/benchmarks.md``. Only the standard library and psycopg are used here,
so the peers' bench-only environment can import this module too.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import math
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_PG = os.environ.get("QCTL_BENCH_PG_DSN", "postgresql://postgres@127.0.0.1:5432/postgres")
BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(BENCH_DIR, "out")


def compile_qctl() -> None:
    """Write the bytecode of qctl's packages before a start-up is timed. An installed
    wheel ships it (pip compiles on install) and so does psycopg here, but an editable
    checkout writes it only on a first run, never with PYTHONDONTWRITEBYTECODE set: timed
    without it, every run of qctl would also compile qctl's source (~0.1 s)."""
    root = os.path.dirname(BENCH_DIR)
    for package in ("qctl", "qctl_kit", "qctl_store"):
        compileall.compile_dir(os.path.join(root, package), quiet=1)


@dataclass
class Result:
    """One figure of one scenario, as the report tables read it."""

    scenario: str
    system: str
    backend: str
    metric: str
    value: float
    unit: str
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Recorder:
    """Prints each figure and appends it to the JSON-lines file given by ``--json``."""

    def __init__(self, path: str | None, scenario: str, system: str) -> None:
        self.path = path
        self.scenario = scenario
        self.system = system

    def add(
        self,
        backend: str,
        metric: str,
        value: float,
        unit: str,
        note: str = "",
        **extra: Any,
    ) -> None:
        r = Result(self.scenario, self.system, backend, metric, value, unit, note, extra)
        shown = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        tail = f"  ({note})" if note else ""
        print(f"  [{self.system}/{backend}] {metric}: {shown} {unit}{tail}", flush=True)
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps(asdict(r), default=str) + "\n")


def base_args(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--pg", default=DEFAULT_PG, help="server DSN (a maintenance database)")
    ap.add_argument("--json", default=None, help="append JSON-lines results to this file")
    ap.add_argument("--quick", action="store_true", help="small smoke-run parameters")
    return ap


# --- statistics ---------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by nearest rank; NaN for no values."""
    if not values:
        return math.nan
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def cv(values: list[float]) -> float:
    """Coefficient of variation (stdev / mean), the stability figure of a rate series."""
    if len(values) < 2 or statistics.mean(values) == 0:
        return math.nan
    return statistics.stdev(values) / statistics.mean(values)


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Wall times of ``repeat`` calls of ``fn``, in milliseconds."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


# --- PostgreSQL scratch databases -----------------------------------------------------------


def dsn_for(server_dsn: str, dbname: str) -> str:
    """The server DSN pointed at another database, as a URL (asyncpg takes only URLs)."""
    from urllib.parse import quote, urlencode

    from psycopg.conninfo import conninfo_to_dict

    params = {k: str(v) for k, v in conninfo_to_dict(server_dsn).items()}
    user = quote(params.pop("user", ""))
    password = params.pop("password", "")
    auth = f"{user}:{quote(password)}@" if password else (f"{user}@" if user else "")
    host = params.pop("host", "127.0.0.1")
    port = params.pop("port", "5432")
    params.pop("dbname", None)
    query = f"?{urlencode(params)}" if params else ""
    return f"postgresql://{auth}{host}:{port}/{quote(dbname)}{query}"


def create_database(server_dsn: str, dbname: str) -> str:
    """Create a scratch database (dropping a leftover of an interrupted run first)."""
    import psycopg

    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{dbname}"')
    return dsn_for(server_dsn, dbname)


def drop_database(server_dsn: str, dbname: str) -> None:
    import psycopg

    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')


@contextlib.contextmanager
def scratch_database(server_dsn: str, prefix: str) -> Iterator[str]:
    """A fresh database for one scenario, dropped afterwards; yields its DSN."""
    name = f"{prefix}_{uuid.uuid4().hex[:6]}"
    dsn = create_database(server_dsn, name)
    try:
        yield dsn
    finally:
        drop_database(server_dsn, name)


VACUUM_EVERY = 5.0
"""Seconds between the VACUUMs of the burn-down what-if (``vacuuming``)."""


@contextlib.contextmanager
def vacuuming(dsn: str, every: float, table: str) -> Iterator[None]:
    """``VACUUM table`` every ``every`` seconds on a connection of its own while the
    block runs: what an autovacuum tuned for a queue table would do (this server may run
    with autovacuum off). A lease scans its queue's index in order; each row a lease or
    an ack leaves behind keeps its entry there, walked by every later lease, until a
    vacuum removes it. Run for every system alike, so the what-if compares them. With
    ``every`` 0, nothing runs beside the block."""
    import psycopg

    if every <= 0:
        yield
        return

    stop = threading.Event()

    def loop() -> None:
        with psycopg.connect(dsn, autocommit=True) as pg:
            while not stop.wait(every):
                pg.execute(f"VACUUM {table}")

    t = threading.Thread(target=loop, name="vacuuming")
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def sqlite_file(name: str) -> str:
    """A fresh SQLite file path under bench/out/ (old copies and WAL files removed)."""
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name)
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)
    return path


class Plans:
    """Records the statements a read runs and EXPLAINs each one on a connection of its
    own: the check that no read plans a sequential scan of a big table, whatever the
    statistics counters happen to say."""

    def __init__(self, dsn: str | None, relation: str = "", search_path: str = "") -> None:
        import psycopg

        self.relation = relation
        self.conn = psycopg.connect(dsn, autocommit=True) if dsn else None
        if self.conn is not None and search_path:
            self.conn.execute(f"SET search_path = {search_path}")
        self.seen: list[tuple[Any, Any]] | None = None
        original = psycopg.Cursor.execute
        plans = self

        def execute(cur: Any, query: Any, params: Any = None, **kw: Any) -> Any:
            if plans.seen is not None and cur.connection is not plans.conn:
                plans.seen.append((query, params))
            return original(cur, query, params, **kw)

        if self.conn is not None:
            psycopg.Cursor.execute = execute  # type: ignore[method-assign,assignment]

    def _plans(self, fn: Callable[[], Any]) -> Iterator[tuple[str, dict[str, Any]]]:
        """Calls ``fn()``; then each read statement it ran with its plan."""
        if self.conn is None:
            fn()
            return
        self.seen = []
        try:
            fn()
        finally:
            seen, self.seen = self.seen, None
        for query, params in seen:
            text = query if isinstance(query, str) else query.as_string(self.conn)
            if not text.lstrip().upper().startswith(("SELECT", "WITH", "(")):
                continue  # EXPLAINs of the estimates, SET, ...
            row = self.conn.execute(f"EXPLAIN (FORMAT JSON) {text}", params).fetchone()
            if row:
                yield text, row[0][0]["Plan"]

    def seq_scans(self, fn: Callable[[], Any]) -> list[str]:
        """Calls ``fn()``; its statements whose plan scans ``relation`` sequentially
        (the start of each)."""
        return [
            " ".join(text.split())[:80]
            for text, plan in self._plans(fn)
            if self.relation in _seq_scanned(plan)
        ]

    def scanned(self, fn: Callable[[], Any], small: int = 10_000) -> list[str]:
        """Calls ``fn()``; the relations of more than ``small`` rows (the planner's
        estimate) that any of its statements scans sequentially."""
        names = {name for _, plan in self._plans(fn) for name in _seq_scanned(plan)}
        if not names or self.conn is None:
            return []
        rows = self.conn.execute(
            "SELECT relname FROM pg_class WHERE relname = ANY(%s) AND reltuples > %s",
            (sorted(names), small),
        ).fetchall()
        return sorted(r[0] for r in rows)


def _seq_scanned(node: dict[str, Any]) -> set[str]:
    """The relations a plan node and its children scan sequentially."""
    here = {node["Relation Name"]} if node.get("Node Type") == "Seq Scan" else set()
    return here.union(*(_seq_scanned(child) for child in node.get("Plans", [])))


def measure_read(
    rec: Recorder, plans: Plans, name: str, fn: Callable[[], Any], **extra: Any
) -> None:
    """A read at scale: median of 7 after a warm-up, in ms, and the big relations its
    statements scan sequentially (``Plans.scanned``)."""
    fn()  # warm-up
    ms = median(timed(fn, 7))
    scans = plans.scanned(fn)
    note = "seq scans: " + (", ".join(scans) or "none")
    rec.add("postgres", name, ms, "ms", note, seq_scans=scans, **extra)


@contextlib.contextmanager
def kept_or_scratch(server: str, kept: str | None, prefix: str) -> Iterator[str]:
    """A scratch database dropped afterwards, or the database ``kept`` (created when
    missing), left in place so later runs skip the load."""
    if kept is None:
        with scratch_database(server, prefix) as dsn:
            yield dsn
        return
    import psycopg

    with psycopg.connect(server, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (kept,)).fetchone():
            conn.execute(f'CREATE DATABASE "{kept}"')
    yield dsn_for(server, kept)


def load_or_reuse(
    rec: Recorder, dsn: str, kept: str | None, table: str, layout: str, load: Callable[[], None]
) -> None:
    """Run ``load`` unless ``table`` carries the comment that an earlier load of this
    ``layout`` left (a kept database, or one whose load was interrupted, does not), then
    stamp it. One "database" figure (the load's seconds, 0 when reused) says which, and
    when a reused database was loaded: its time windows (a throughput's last hour) hold
    what finished since."""
    import psycopg
    from psycopg import sql

    def comment() -> str:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT obj_description(to_regclass(%s), 'pg_class')", [table]
            ).fetchone()
        return (row[0] if row else None) or ""

    stamp = f"{layout}, loaded "
    if (found := comment()).startswith(stamp):
        note = f"{kept}, reused: {found}"
        rec.add("postgres", "database", 0.0, "s", note, database=kept, reused=True)
        return
    t0 = time.perf_counter()
    load()
    took = time.perf_counter() - t0
    at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with psycopg.connect(dsn, autocommit=True) as conn:
        name = sql.Identifier(*table.split("."))
        conn.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(name, stamp + at))
    where = f"{kept} (kept)" if kept else "a scratch database"
    note = f"{where}, loaded by this run in {took:.0f} s: {layout}"
    rec.add("postgres", "database", took, "s", note, database=kept or "", reused=False)


@contextlib.contextmanager
def loaded_database(
    rec: Recorder,
    server: str,
    kept: str | None,
    prefix: str,
    table: str,
    layout: str,
    load: Callable[[str], None],
) -> Iterator[str]:
    """A database holding ``layout`` (``kept_or_scratch``, then ``load_or_reuse``);
    ``load`` gets its DSN."""
    with kept_or_scratch(server, kept, prefix) as dsn:
        load_or_reuse(rec, dsn, kept, table, layout, lambda: load(dsn))
        yield dsn


def kept_args(ap: argparse.ArgumentParser, what: str) -> None:
    """``--db``/``--drop-db`` of a scale script whose data is loaded once and reused."""
    ap.add_argument(
        "--db",
        default=None,
        help=f"keep {what} in this database: load it when empty, reuse it when loaded",
    )
    ap.add_argument("--drop-db", action="store_true", help="drop the --db database and exit")


class RateSampler:
    """Counts completions and samples the rate every ``window`` seconds."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.count = 0
        self.samples: list[float] = []
        self._t = time.perf_counter()
        self._last = 0

    def tick(self) -> None:
        now = time.perf_counter()
        if now - self._t >= self.window:
            self.samples.append((self.count - self._last) / (now - self._t))
            self._t, self._last = now, self.count


# --- SQLite files ---------------------------------------------------------------------------


def sqlite_loaded(rec: Recorder, name: str, layout: str, load: Callable[[str], None]) -> str:
    """A SQLite file under bench/out/ holding ``layout``: reused when the stamp beside it
    (``<name>.layout``) says an earlier run loaded that layout, else made afresh by
    ``load(path)`` and stamped; as ``load_or_reuse``, one "database" figure says which."""
    path = os.path.join(OUT_DIR, name)
    stamp_path = path + ".layout"
    stamp = f"{layout}, loaded "
    with contextlib.suppress(FileNotFoundError), open(stamp_path) as f:
        found = f.read()
        if found.startswith(stamp) and os.path.exists(path):
            note = f"{path}, reused: {found}"
            rec.add("sqlite", "database", 0.0, "s", note, database=path, reused=True)
            return path
    with contextlib.suppress(FileNotFoundError):
        os.remove(stamp_path)
    sqlite_file(name)
    t0 = time.perf_counter()
    load(path)
    took = time.perf_counter() - t0
    with open(stamp_path, "w") as f:
        f.write(stamp + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    note = f"{path}, loaded by this run in {took:.0f} s: {layout}"
    rec.add("sqlite", "database", took, "s", note, database=path, reused=False)
    return path


class SqlitePlans:
    """``Plans`` on SQLite: records the statements run on ``db``'s connection (a
    ``qctl.core.sqldb.SqlDatabase`` on a SQLite file) and asks ``EXPLAIN QUERY PLAN``
    of each on that same connection (its functions installed). SQLite's sequential scan
    is a ``SCAN <table>`` step: the whole table, or all of one index (``USING [COVERING]
    INDEX``), walked rather than searched; ``SEARCH <table> USING ...`` reads a range.
    A ``SCAN`` in the order a ``LIMIT`` wants stops early, so each read also counts the
    virtual machine's instructions it ran (``steps``), the work the plan did."""

    def __init__(self, db: Any) -> None:
        self.conn = db._conn
        self.seen: list[tuple[str, Any]] | None = None
        db._conn = _Recording(self.conn, self)

    def _statements(self, fn: Callable[[], Any]) -> list[tuple[str, Any]]:
        self.seen = []
        try:
            fn()
        finally:
            seen, self.seen = self.seen, None
        return [
            (text, params)
            for text, params in seen
            if text.lstrip().upper().startswith(("SELECT", "WITH", "("))
        ]

    def scans(self, fn: Callable[[], Any], table: str) -> list[str]:
        """Calls ``fn()``; the ``SCAN`` steps on ``table`` of its statements' plans."""
        found = []
        for text, params in self._statements(fn):
            plan = self.conn.execute(f"EXPLAIN QUERY PLAN {text}", params).fetchall()
            for row in plan:
                detail = str(row[3])
                if detail == f"SCAN {table}" or detail.startswith(f"SCAN {table} "):
                    found.append(detail)
        return sorted(set(found))

    def steps(self, fn: Callable[[], Any]) -> int:
        """Calls ``fn()``; the virtual machine instructions its statements ran."""
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        self.conn.set_progress_handler(tick, 1000)
        try:
            fn()
        finally:
            self.conn.set_progress_handler(None, 0)
        return count[0] * 1000


class _Recording:
    """A sqlite3 connection that tells ``SqlitePlans`` what it runs."""

    def __init__(self, conn: Any, plans: SqlitePlans) -> None:
        self._conn = conn
        self._plans = plans

    def execute(self, text: str, params: Any = ()) -> Any:
        if self._plans.seen is not None:
            self._plans.seen.append((text, params))
        return self._conn.execute(text, params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def measure_sqlite_read(
    rec: Recorder, plans: SqlitePlans, table: str, name: str, fn: Callable[[], Any], **extra: Any
) -> None:
    """``measure_read`` on SQLite: median of 7 after a warm-up, in ms, the ``SCAN`` steps
    on ``table`` of its statements' plans and the instructions it ran."""
    fn()  # warm-up
    ms = median(timed(fn, 7))
    scans = plans.scans(fn, table)
    steps = plans.steps(fn)
    note = f"scans: {'; '.join(scans) or 'none'}; {steps:,} VM steps"
    rec.add("sqlite", name, ms, "ms", note, scans=scans, steps=steps, **extra)
