"""PostgreSQL migrations: azync's exact schema, goose's version table and lock,
convergence of drifted databases (azync's ``migrate.go`` and ``integration/migrate_test.go``)."""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import sql

from qctl_kit.errors import SchemaNotMigrated, SchemaTooNew
from qctl_store import Config
from qctl_store.postgres import PostgresStore, migrate
from qctl_store.postgres.admin import CONSOLE_INDEXES, PAUSED_INDEX
from qctl_store.postgres.migrate import load_migrations, split_statements
from qctl_store.types import EnqueueParams
from tests.conftest import PG_DSN, raw_pg
from tests.postgres.catalog import (
    EXPECTED_CATALOG,
    GOOSE_VERSION_TABLE_DDL,
    catalog_diff,
    read_catalog,
)

ALL_VERSIONS = list(range(1, 12))
LEGACY_COLUMNS = [
    ("azync_events", "tenant_id"),
    ("azync_events", "trace_id"),
    ("azync_events", "span_id"),
    ("azync_events", "trace_flags"),
    ("azync_jobs", "trace_id"),
    ("azync_jobs", "span_id"),
    ("azync_jobs", "trace_flags"),
    ("azync_job_attempts", "trace"),
    ("azync_dags", "trace_id"),
    ("azync_dags", "span_id"),
    ("azync_dags", "trace_flags"),
]
CHANGE_TRIGGERS = [
    ("azync_jobs", "azync_changes_jobs_ins"),
    ("azync_jobs", "azync_changes_jobs_upd"),
    ("azync_dags", "azync_changes_dags_ins"),
    ("azync_dags", "azync_changes_dags_upd"),
    ("azync_events", "azync_changes_events_ins"),
]


@pytest.fixture
def open_store(fresh_pg_schema: str) -> Iterator[Any]:
    """Opens stores on this test's fresh (not yet created) schema; closes them after."""
    opened: list[PostgresStore] = []

    def factory(**config: Any) -> PostgresStore:
        s = PostgresStore(PG_DSN, Config(schema=fresh_pg_schema, **config))
        opened.append(s)
        return s

    yield factory
    for s in opened:
        s.close()


def relation_exists(schema: str, name: str) -> bool:
    with raw_pg(schema) as conn:
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
        return bool(row and row[0])


def column_exists(schema: str, table: str, column: str) -> bool:
    with raw_pg(schema) as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = %s "
            "AND table_name = %s AND column_name = %s)",
            (schema, table, column),
        ).fetchone()
        return bool(row and row[0])


def version_rows(schema: str, table: str = "azync_migrations") -> list[tuple[int, bool]]:
    with raw_pg(schema) as conn:
        return conn.execute(
            sql.SQL("SELECT version_id, is_applied FROM {} ORDER BY id").format(
                sql.Identifier(table)
            )
        ).fetchall()


def test_packaged_migrations_match_azync_numbering() -> None:
    names = [m.filename for m in load_migrations()]
    assert names == [
        "00001_azync_tables.sql",
        "00002_dags.sql",
        "00003_workflows.sql",
        "00004_operation_uncertain.sql",
        "00005_drop_tenant_trace_columns.sql",
        "00006_maintenance_indexes.sql",
        "00007_history_dedupe.sql",
        "00008_deadline_signals_states.sql",
        "00009_dags_live_state_indexes.sql",
        "00010_jobs_started_at.sql",
        "00011_change_notify_triggers.sql",
    ]
    assert [m.version for m in load_migrations() if m.no_transaction] == [6, 7, 9]


def test_split_statements_respects_quotes_comments_and_dollar_bodies() -> None:
    text = """
    -- a comment; with a semicolon
    SELECT 'a;b', "odd;name" FROM t; /* block; comment */
    CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $fn$ BEGIN RETURN 1; END $fn$;
    DO $$ BEGIN PERFORM 'it''s;'; END $$;
    -- trailing comment only
    """
    statements = split_statements(text)
    assert len(statements) == 3
    assert statements[0].endswith("FROM t")
    assert statements[1].startswith("/* block; comment */")
    assert statements[1].endswith("RETURN 1; END $fn$")
    assert statements[2] == "DO $$ BEGIN PERFORM 'it''s;'; END $$"


def test_the_schema_check_reads_no_migration_file(
    open_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command checks the schema before it reads; only migrating reads and splits
    the migration files (the latest version is in their names)."""
    store = open_store()
    store.migrate()
    load_migrations.cache_clear()

    def unread(text: str) -> list[str]:
        raise AssertionError("a migration file was split")

    monkeypatch.setattr(migrate, "split_statements", unread)
    store.require_schema()
    assert store.schema_status().expected_version == 11
    load_migrations.cache_clear()  # the next test reads them whole again


def test_unmigrated_schema_status_is_version_zero(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store()
    status = store.schema_status()
    assert status.backend == "postgres"
    assert status.schema == fresh_pg_schema
    assert status.applied_version == 0
    assert status.expected_version == 11
    assert status.pending_versions == ALL_VERSIONS
    assert status.change_triggers is False
    assert status.push is True
    with pytest.raises(SchemaNotMigrated, match="qctl db migrate"):
        store.check_schema()


def test_migrate_creates_schema_and_is_idempotent(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store()
    assert store.migrate() == ALL_VERSIONS
    assert store.migrate() == []
    for name in ("azync_jobs", "azync_events", "azync_migrations"):
        assert relation_exists(fresh_pg_schema, name)
    assert version_rows(fresh_pg_schema) == [(v, True) for v in range(12)]
    status = store.check_schema()
    assert (status.applied_version, status.pending_versions) == (11, [])
    assert status.change_triggers is True
    # a second store on the same schema agrees
    assert open_store().migrate() == []


def test_schema_matches_azync_catalog(open_store: Any, fresh_pg_schema: str) -> None:
    open_store().migrate()
    with psycopg.connect(PG_DSN) as conn:
        got = read_catalog(conn, fresh_pg_schema)
    assert catalog_diff(got, EXPECTED_CATALOG) == []


def test_the_console_index_alone_is_left_out_of_the_comparison(
    open_store: Any, fresh_pg_schema: str
) -> None:
    store = open_store()
    store.migrate()
    assert store.schema_status().console_indexes == []
    assert store.tune() == list(CONSOLE_INDEXES)
    assert store.schema_status().console_indexes == sorted(CONSOLE_INDEXES)
    with psycopg.connect(PG_DSN) as conn:
        assert catalog_diff(read_catalog(conn, fresh_pg_schema), EXPECTED_CATALOG) == []
    assert store.migrate() == []  # and migrations neither mind nor touch it
    with raw_pg(fresh_pg_schema) as conn:  # any other name is a difference
        conn.execute(
            f"CREATE INDEX {PAUSED_INDEX}_2 ON azync_jobs (source, kind) WHERE state = 'paused'"
        )
    with psycopg.connect(PG_DSN) as conn:
        diff = catalog_diff(read_catalog(conn, fresh_pg_schema), EXPECTED_CATALOG)
    assert [d.split(":")[0] for d in diff] == [f"indexes[{PAUSED_INDEX}_2]"]


def test_goose_style_database_is_current(open_store: Any, fresh_pg_schema: str) -> None:
    """A schema migrated by goose (our files replayed the way goose applies azync's)."""
    with raw_pg(fresh_pg_schema) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(fresh_pg_schema)))
        conn.execute(sql.SQL(GOOSE_VERSION_TABLE_DDL).format(sql.Identifier("azync_migrations")))
        conn.execute("INSERT INTO azync_migrations (version_id, is_applied) VALUES (0, true)")
        for m in load_migrations():
            with conn.transaction() if not m.no_transaction else contextlib.nullcontext():
                for statement in m.statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO azync_migrations (version_id, is_applied) VALUES (%s, true)",
                    (m.version,),
                )
    store = open_store()
    assert store.migrate() == []
    assert store.check_schema().applied_version == 11
    assert version_rows(fresh_pg_schema) == [(v, True) for v in range(12)]


def test_custom_version_table(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store(migrations_table="azync_schema_history")
    assert store.migrate() == ALL_VERSIONS
    assert relation_exists(fresh_pg_schema, "azync_schema_history")
    assert not relation_exists(fresh_pg_schema, "azync_migrations")
    assert relation_exists(fresh_pg_schema, "azync_jobs")
    assert version_rows(fresh_pg_schema, "azync_schema_history") == [(v, True) for v in range(12)]
    assert store.schema_status().applied_version == 11
    # the default table name sees nothing there
    assert open_store().schema_status().applied_version == 0


def test_concurrent_migrate_is_safe(open_store: Any, fresh_pg_schema: str) -> None:
    stores = [open_store(), open_store()]
    results: list[list[int]] = []
    failures: list[BaseException] = []

    def run(s: PostgresStore) -> None:
        try:
            results.append(s.migrate())
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
    assert sorted(results, key=len) == [[], ALL_VERSIONS]
    assert version_rows(fresh_pg_schema) == [(v, True) for v in range(12)]


def test_schema_too_new_touches_nothing(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store()
    store.migrate()
    with raw_pg(fresh_pg_schema) as conn:
        conn.execute("INSERT INTO azync_migrations (version_id, is_applied) VALUES (12, true)")
        conn.execute("DROP INDEX azync_dags_name_state_idx")
    with pytest.raises(SchemaTooNew):
        store.migrate()
    assert not relation_exists(fresh_pg_schema, "azync_dags_name_state_idx")
    assert version_rows(fresh_pg_schema)[-1] == (12, True)
    with pytest.raises(SchemaTooNew):
        store.check_schema()


def test_converges_from_drifted_tenant_trace_schema(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store()
    store.migrate()
    with raw_pg(fresh_pg_schema) as conn:
        conn.execute(
            """
            ALTER TABLE azync_events
                ADD COLUMN tenant_id uuid, ADD COLUMN trace_id text,
                ADD COLUMN span_id text, ADD COLUMN trace_flags smallint;
            CREATE INDEX azync_events_tenant_occurred_idx ON azync_events
                (tenant_id, occurred_at, id) WHERE tenant_id IS NOT NULL;
            ALTER TABLE azync_jobs
                ADD COLUMN trace_id text, ADD COLUMN span_id text, ADD COLUMN trace_flags smallint;
            ALTER TABLE azync_job_attempts ADD COLUMN trace text;
            ALTER TABLE azync_dags
                ADD COLUMN trace_id text, ADD COLUMN span_id text, ADD COLUMN trace_flags smallint;
            DELETE FROM azync_migrations WHERE version_id >= 5;
            """
        )
    assert store.schema_status().pending_versions == list(range(5, 12))
    assert store.migrate() == list(range(5, 12))
    for table, column in LEGACY_COLUMNS:
        assert not column_exists(fresh_pg_schema, table, column), (table, column)
    assert not relation_exists(fresh_pg_schema, "azync_events_tenant_occurred_idx")
    assert relation_exists(fresh_pg_schema, "azync_jobs_succeeded_vacuum_idx")
    assert store.migrate() == []
    with psycopg.connect(PG_DSN) as conn:
        assert catalog_diff(read_catalog(conn, fresh_pg_schema), EXPECTED_CATALOG) == []


def test_rebuilds_an_invalid_leftover_index(open_store: Any, fresh_pg_schema: str) -> None:
    """An interrupted CONCURRENTLY build leaves an INVALID index; a re-run replaces it."""
    store = open_store()
    store.migrate()
    with raw_pg(fresh_pg_schema) as conn:
        conn.execute(
            "UPDATE pg_index SET indisvalid = false "
            "WHERE indexrelid = 'azync_dags_idempotency_live_idx'::regclass"
        )
        conn.execute("DELETE FROM azync_migrations WHERE version_id >= 9")
    assert store.migrate() == [9, 10, 11]
    with raw_pg(fresh_pg_schema) as conn:
        row = conn.execute(
            "SELECT indisvalid FROM pg_index "
            "WHERE indexrelid = 'azync_dags_idempotency_live_idx'::regclass"
        ).fetchone()
    assert row == (True,)


def test_change_triggers_exist(open_store: Any, fresh_pg_schema: str) -> None:
    open_store().migrate()
    with raw_pg(fresh_pg_schema) as conn:
        for table, trigger in CHANGE_TRIGGERS:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s "
                "AND c.relname = %s AND t.tgname = %s AND NOT t.tgisinternal)",
                (fresh_pg_schema, table, trigger),
            ).fetchone()
            assert row == (True,), trigger
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n "
                "ON n.oid = p.pronamespace WHERE n.nspname = %s AND p.proname = %s)",
                (fresh_pg_schema, f"{trigger}_fn"),
            ).fetchone()
            assert row == (True,), f"{trigger}_fn"


def test_old_on_conflict_predicate_infers_new_live_index(
    open_store: Any, fresh_pg_schema: str
) -> None:
    """Rolling deploy: v0.0.5's 3-state ON CONFLICT still finds the 4-state index."""
    open_store().migrate()
    assert not relation_exists(fresh_pg_schema, "azync_dags_idempotency_idx")
    old_insert = """
        INSERT INTO azync_dags (id, name, state, on_failure, idempotency_key, meta,
                                created_at, updated_at)
        VALUES (%s, 'it-rolling', 'running', 'cancel', 'roll-key', '{}'::jsonb, now(), now())
        ON CONFLICT (name, idempotency_key)
            WHERE idempotency_key IS NOT NULL AND state IN ('running', 'suspended', 'compensating')
        DO NOTHING
        RETURNING id"""
    with raw_pg(fresh_pg_schema) as conn:
        assert conn.execute(old_insert, (uuid.uuid4(),)).fetchone() is not None
        assert conn.execute(old_insert, (uuid.uuid4(),)).fetchone() is None
        row = conn.execute("SELECT count(*) FROM azync_dags WHERE name = 'it-rolling'").fetchone()
        assert row == (1,)


def test_read_only_store_reports_status_but_refuses_migrate(
    open_store: Any, fresh_pg_schema: str
) -> None:
    open_store().migrate()
    ro = open_store(read_only=True, pooled=False)
    assert ro.check_schema().applied_version == 11
    with pytest.raises(Exception, match="read-only"):
        ro.migrate()


def test_status_reports_the_job_tables_vacuum_upkeep(open_store: Any, fresh_pg_schema: str) -> None:
    store = open_store()
    assert store.schema_status().autovacuum is None  # no azync_jobs yet
    store.migrate()
    with raw_pg(fresh_pg_schema) as conn:
        server_on = conn.execute("SELECT current_setting('autovacuum')::bool").fetchone()[0]
        assert store.schema_status().autovacuum is server_on
        conn.execute("ALTER TABLE azync_jobs SET (autovacuum_enabled = false)")
        assert store.schema_status().autovacuum is False  # the table's own setting counts
        conn.execute("ALTER TABLE azync_jobs RESET (autovacuum_enabled)")
        assert store.schema_status().autovacuum is server_on
    store.enqueue_many([EnqueueParams(kind="upkeep", payload={"i": i}) for i in range(30)])
    with raw_pg(fresh_pg_schema) as conn:
        conn.execute("UPDATE azync_jobs SET updated_at = now()")  # 30 dead row versions
        conn.execute("SELECT pg_stat_force_next_flush()")  # counted before the reply
        status = store.schema_status()
        assert status.jobs_dead_rows is not None and status.jobs_dead_rows >= 30
        assert status.jobs_vacuumed_at is None
        before = datetime.now(UTC)
        conn.execute("VACUUM azync_jobs")
        status = store.schema_status()
        # What the server counts now: 0, unless another session's snapshot (a test run
        # beside this one on the server) kept the vacuum from removing them.
        [dead] = conn.execute(
            "SELECT n_dead_tup FROM pg_stat_user_tables"
            " WHERE schemaname = current_schema() AND relname = 'azync_jobs'"
        ).fetchone()
    assert status.jobs_vacuumed_at is not None
    assert before - timedelta(seconds=5) <= status.jobs_vacuumed_at <= datetime.now(UTC)
    assert status.jobs_dead_rows == dead
