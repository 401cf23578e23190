# ruff: noqa: E501  (the pinned catalog keeps one definition per line)
"""Catalog snapshots of a PostgreSQL schema, and azync's schema pinned as data.

``read_catalog`` reduces a schema to what compatibility with azync's driver depends on:
tables with their columns (order, type, nullability, default, identity), constraints
(``pg_get_constraintdef``), indexes (``pg_get_indexdef``; the console's own opt-in
indexes of ``qctl db tune`` excepted, by name), user triggers
(``pg_get_triggerdef``), function and sequence names. Schema names are stripped, so
two schemas compare equal when their objects are the same.

``EXPECTED_CATALOG`` is that snapshot of a schema migrated by azync's own files
(driver/azyncpgx/migrations at v0.0.8, applied as goose applies them) plus goose's
default version table. ``apply_goose_dir`` replays such a directory the way goose does,
for the comparison test that runs when ``AZYNC_MIGRATIONS_DIR`` is set.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from qctl_store.postgres.admin import CONSOLE_INDEXES
from qctl_store.postgres.migrate import split_statements

Catalog = dict[str, Any]


def _strip_schema(text: str, schema: str) -> str:
    return re.sub(rf'(?<![\w$])(?:"{re.escape(schema)}"|{re.escape(schema)})\.', "", text)


def read_catalog(conn: psycopg.Connection[Any], schema: str) -> Catalog:
    """The comparable catalog of ``schema`` (see the module docstring)."""

    def rows(query: str) -> list[tuple[Any, ...]]:
        return conn.execute(query, {"schema": schema}).fetchall()

    tables: dict[str, list[list[Any]]] = {}
    for table, column, type_, notnull, default, identity in rows(
        """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                  pg_get_expr(d.adbin, d.adrelid), a.attidentity
           FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
           LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
           WHERE n.nspname = %(schema)s AND c.relkind = 'r'
           ORDER BY c.relname, a.attnum"""
    ):
        if default is not None:  # a serial's nextval names its sequence with the schema
            default = _strip_schema(default, schema)
        tables.setdefault(table, []).append([column, type_, notnull, default, identity])
    constraints = {
        f"{table}.{name}": _strip_schema(definition, schema)
        for table, name, definition in rows(
            """SELECT c.relname, k.conname, pg_get_constraintdef(k.oid)
               FROM pg_constraint k
               JOIN pg_class c ON c.oid = k.conrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = %(schema)s"""
        )
    }
    indexes = {
        name: _strip_schema(definition, schema)
        for name, definition in rows(
            """SELECT ic.relname, pg_get_indexdef(i.indexrelid)
               FROM pg_index i
               JOIN pg_class ic ON ic.oid = i.indexrelid
               JOIN pg_namespace n ON n.oid = ic.relnamespace
               WHERE n.nspname = %(schema)s"""
        )
        # The console's opt-in indexes (``qctl db tune``) are not azync's schema; they
        # are skipped by their exact names, every other index still compares.
        if name not in CONSOLE_INDEXES
    }
    triggers = {
        name: _strip_schema(definition, schema)
        for name, definition in rows(
            """SELECT t.tgname, pg_get_triggerdef(t.oid)
               FROM pg_trigger t
               JOIN pg_class c ON c.oid = t.tgrelid
               JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = %(schema)s AND NOT t.tgisinternal"""
        )
    }
    functions = sorted(
        r[0]
        for r in rows(
            """SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
               WHERE n.nspname = %(schema)s"""
        )
    )
    sequences = sorted(
        r[0]
        for r in rows(
            """SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = %(schema)s AND c.relkind = 'S'"""
        )
    )
    return {
        "tables": tables,
        "constraints": dict(sorted(constraints.items())),
        "indexes": dict(sorted(indexes.items())),
        "triggers": dict(sorted(triggers.items())),
        "functions": functions,
        "sequences": sequences,
    }


def catalog_diff(got: Catalog, want: Catalog) -> list[str]:
    """Human-readable differences; empty when the catalogs are equal."""
    out: list[str] = []
    for section in want.keys() | got.keys():
        g, w = got.get(section), want.get(section)
        if isinstance(w, dict) and isinstance(g, dict):
            for key in sorted(w.keys() | g.keys()):
                if g.get(key) != w.get(key):
                    out.append(f"{section}[{key}]: got {g.get(key)!r}, want {w.get(key)!r}")
        elif g != w:
            out.append(f"{section}: got {g!r}, want {w!r}")
    return out


GOOSE_VERSION_TABLE_DDL = """CREATE TABLE {} (
    id integer PRIMARY KEY GENERATED BY DEFAULT AS IDENTITY,
    version_id bigint NOT NULL,
    is_applied boolean NOT NULL,
    tstamp timestamp NOT NULL DEFAULT now()
)"""


def apply_goose_dir(
    dsn: str, schema: str, directory: Path, table: str = "azync_migrations"
) -> list[int]:
    """Apply a directory of goose ``-- +goose Up`` files to ``schema`` as goose v3 does
    (version table with its 0 row, one transaction per file unless ``NO TRANSACTION``,
    the version row inside it). Returns the versions applied."""
    applied: list[int] = []
    with psycopg.connect(dsn, autocommit=True, options=f"-c search_path={schema}") as conn:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        with conn.transaction():
            conn.execute(sql.SQL(GOOSE_VERSION_TABLE_DDL).format(sql.Identifier(table)))
            _insert_version(conn, table, 0)
        for path in sorted(directory.glob("*.sql")):
            version = int(path.name.split("_", 1)[0])
            text = path.read_text(encoding="utf-8")
            up = text.split("-- +goose Up", 1)[1].split("-- +goose Down", 1)[0]
            statements = split_statements(up)
            if "-- +goose NO TRANSACTION" in text:
                for statement in statements:
                    conn.execute(statement)
                _insert_version(conn, table, version)
            else:
                with conn.transaction():
                    for statement in statements:
                        conn.execute(statement)
                    _insert_version(conn, table, version)
            applied.append(version)
    return applied


def _insert_version(conn: psycopg.Connection[Any], table: str, version: int) -> None:
    conn.execute(
        sql.SQL("INSERT INTO {} (version_id, is_applied) VALUES (%s, true)").format(
            sql.Identifier(table)
        ),
        (version,),
    )


# Generated once from a schema migrated by azync v0.0.8's own files (see the module
# docstring); regenerate only if azync's schema changes.
# fmt: off
EXPECTED_CATALOG: Catalog = {
    "tables": {
        "azync_dag_deps": [
            ['dag_id', 'uuid', True, None, ''],
            ['task_key', 'text', True, None, ''],
            ['depends_on_key', 'text', True, None, ''],
        ],
        "azync_dag_signals": [
            ['id', 'uuid', True, None, ''],
            ['dag_id', 'uuid', True, None, ''],
            ['name', 'text', True, None, ''],
            ['message_id', 'text', False, None, ''],
            ['payload', 'jsonb', False, None, ''],
            ['consumed', 'boolean', True, 'false', ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_dags": [
            ['id', 'uuid', True, None, ''],
            ['name', 'text', True, None, ''],
            ['state', 'text', True, "'running'::text", ''],
            ['on_failure', 'text', True, None, ''],
            ['idempotency_key', 'text', False, None, ''],
            ['failure_reason', 'text', False, None, ''],
            ['cancel_requested', 'boolean', True, 'false', ''],
            ['meta', 'jsonb', True, "'{}'::jsonb", ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
            ['updated_at', 'timestamp with time zone', True, 'now()', ''],
            ['completed_at', 'timestamp with time zone', False, None, ''],
        ],
        "azync_events": [
            ['id', 'uuid', True, None, ''],
            ['type', 'text', True, None, ''],
            ['aggregate_type', 'text', True, "''::text", ''],
            ['aggregate_id', 'text', True, "''::text", ''],
            ['version', 'bigint', True, '0', ''],
            ['occurred_at', 'timestamp with time zone', True, None, ''],
            ['payload', 'jsonb', True, None, ''],
            ['meta', 'jsonb', True, "'{}'::jsonb", ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_idempotency_keys": [
            ['source', 'text', True, None, ''],
            ['kind', 'text', True, None, ''],
            ['key', 'text', True, None, ''],
            ['expires_at', 'timestamp with time zone', True, None, ''],
        ],
        "azync_job_attempts": [
            ['id', 'bigint', True, None, 'a'],
            ['job_id', 'uuid', True, None, ''],
            ['attempt', 'integer', True, None, ''],
            ['error', 'text', True, None, ''],
            ['failed_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_jobs": [
            ['id', 'uuid', True, None, ''],
            ['source', 'text', True, None, ''],
            ['kind', 'text', True, None, ''],
            ['state', 'text', True, None, ''],
            ['run_at', 'timestamp with time zone', True, None, ''],
            ['lease_until', 'timestamp with time zone', False, None, ''],
            ['lease_token', 'uuid', False, None, ''],
            ['attempt', 'integer', True, '0', ''],
            ['max_attempts', 'integer', True, None, ''],
            ['max_attempts_explicit', 'boolean', True, 'false', ''],
            ['reap_count', 'integer', True, '0', ''],
            ['payload', 'jsonb', False, None, ''],
            ['meta', 'jsonb', True, "'{}'::jsonb", ''],
            ['idempotency_key', 'text', False, None, ''],
            ['event_id', 'uuid', False, None, ''],
            ['replay', 'boolean', True, 'false', ''],
            ['last_error', 'text', False, None, ''],
            ['enqueued_at', 'timestamp with time zone', True, None, ''],
            ['failed_at', 'timestamp with time zone', False, None, ''],
            ['completed_at', 'timestamp with time zone', False, None, ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
            ['updated_at', 'timestamp with time zone', True, 'now()', ''],
            ['dag_id', 'uuid', False, None, ''],
            ['task_key', 'text', False, None, ''],
            ['result', 'jsonb', False, None, ''],
            ['compensation_kind', 'text', False, None, ''],
            ['compensation_payload', 'jsonb', False, None, ''],
            ['signal_name', 'text', False, None, ''],
            ['ignore_dead_deps', 'boolean', True, 'false', ''],
            ['run_id', 'uuid', False, None, ''],
            ['snooze_budget', 'double precision', False, None, ''],
            ['deadline_at', 'timestamp with time zone', False, None, ''],
            ['started_at', 'timestamp with time zone', False, None, ''],
        ],
        "azync_migrations": [
            ['id', 'integer', True, None, 'd'],
            ['version_id', 'bigint', True, None, ''],
            ['is_applied', 'boolean', True, None, ''],
            ['tstamp', 'timestamp without time zone', True, 'now()', ''],
        ],
        "azync_stats_daily": [
            ['source', 'text', True, None, ''],
            ['kind', 'text', True, None, ''],
            ['day', 'date', True, None, ''],
            ['slot', 'smallint', True, '0', ''],
            ['enqueued', 'bigint', True, '0', ''],
            ['processed', 'bigint', True, '0', ''],
            ['failed', 'bigint', True, '0', ''],
            ['reaped', 'bigint', True, '0', ''],
        ],
        "azync_subscribers": [
            ['name', 'text', True, None, ''],
            ['event_type', 'text', True, None, ''],
            ['max_attempts', 'integer', True, None, ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
            ['updated_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_workflow_executions": [
            ['id', 'uuid', True, None, ''],
            ['name', 'text', True, None, ''],
            ['version', 'text', True, None, ''],
            ['state', 'text', True, "'running'::text", ''],
            ['business_idempotency_key', 'text', False, None, ''],
            ['task_queue', 'text', True, "'default'::text", ''],
            ['input', 'jsonb', False, None, ''],
            ['result', 'jsonb', False, None, ''],
            ['failure_reason', 'text', False, None, ''],
            ['meta', 'jsonb', True, "'{}'::jsonb", ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
            ['updated_at', 'timestamp with time zone', True, 'now()', ''],
            ['completed_at', 'timestamp with time zone', False, None, ''],
        ],
        "azync_workflow_history": [
            ['workflow_id', 'uuid', True, None, ''],
            ['event_seq', 'bigint', True, None, ''],
            ['event_type', 'text', True, None, ''],
            ['payload', 'jsonb', False, None, ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_workflow_signals": [
            ['id', 'uuid', True, None, ''],
            ['workflow_id', 'uuid', True, None, ''],
            ['name', 'text', True, None, ''],
            ['message_id', 'text', False, None, ''],
            ['payload', 'jsonb', False, None, ''],
            ['consumed', 'boolean', True, 'false', ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
        ],
        "azync_workflow_timers": [
            ['id', 'uuid', True, None, ''],
            ['workflow_id', 'uuid', True, None, ''],
            ['fire_at', 'timestamp with time zone', True, None, ''],
            ['fired', 'boolean', True, 'false', ''],
            ['created_at', 'timestamp with time zone', True, 'now()', ''],
        ],
    },
    "constraints": {
        'azync_dag_deps.azync_dag_deps_dag_id_fkey': 'FOREIGN KEY (dag_id) REFERENCES azync_dags(id) ON DELETE CASCADE',
        'azync_dag_deps.azync_dag_deps_pkey': 'PRIMARY KEY (dag_id, task_key, depends_on_key)',
        'azync_dag_signals.azync_dag_signals_dag_id_fkey': 'FOREIGN KEY (dag_id) REFERENCES azync_dags(id) ON DELETE CASCADE',
        'azync_dag_signals.azync_dag_signals_pkey': 'PRIMARY KEY (id)',
        'azync_dags.azync_dags_on_failure_check': "CHECK ((on_failure = ANY (ARRAY['cancel'::text, 'suspend'::text])))",
        'azync_dags.azync_dags_pkey': 'PRIMARY KEY (id)',
        'azync_dags.azync_dags_state_check': "CHECK ((state = ANY (ARRAY['running'::text, 'suspended'::text, 'compensating'::text, 'paused'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))",
        'azync_events.azync_events_pkey': 'PRIMARY KEY (id)',
        'azync_idempotency_keys.azync_idempotency_keys_pkey': 'PRIMARY KEY (source, kind, key)',
        'azync_job_attempts.azync_job_attempts_job_id_fkey': 'FOREIGN KEY (job_id) REFERENCES azync_jobs(id) ON DELETE CASCADE',
        'azync_job_attempts.azync_job_attempts_pkey': 'PRIMARY KEY (id)',
        'azync_jobs.azync_jobs_dag_id_fkey': 'FOREIGN KEY (dag_id) REFERENCES azync_dags(id) ON DELETE CASCADE',
        'azync_jobs.azync_jobs_event_id_check': "CHECK (((source = 'event'::text) = (event_id IS NOT NULL)))",
        'azync_jobs.azync_jobs_event_id_fkey': 'FOREIGN KEY (event_id) REFERENCES azync_events(id) ON DELETE CASCADE',
        'azync_jobs.azync_jobs_payload_check': "CHECK (((source <> 'queue'::text) OR (payload IS NOT NULL)))",
        'azync_jobs.azync_jobs_pkey': 'PRIMARY KEY (id)',
        'azync_jobs.azync_jobs_run_id_fkey': 'FOREIGN KEY (run_id) REFERENCES azync_workflow_executions(id) ON DELETE CASCADE',
        'azync_jobs.azync_jobs_source_check': "CHECK ((source = ANY (ARRAY['queue'::text, 'event'::text, 'dag'::text, 'workflow'::text])))",
        'azync_jobs.azync_jobs_state_check': "CHECK ((state = ANY (ARRAY['pending'::text, 'scheduled'::text, 'active'::text, 'dead'::text, 'paused'::text, 'succeeded'::text, 'blocked'::text, 'waiting'::text, 'cancelled'::text, 'uncertain'::text, 'skipped'::text])))",
        'azync_migrations.azync_migrations_pkey': 'PRIMARY KEY (id)',
        'azync_stats_daily.azync_stats_daily_pkey': 'PRIMARY KEY (source, kind, day, slot)',
        'azync_subscribers.azync_subscribers_max_attempts_check': 'CHECK ((max_attempts > 0))',
        'azync_subscribers.azync_subscribers_pkey': 'PRIMARY KEY (name, event_type)',
        'azync_workflow_executions.azync_workflow_executions_pkey': 'PRIMARY KEY (id)',
        'azync_workflow_executions.azync_workflow_executions_state_check': "CHECK ((state = ANY (ARRAY['running'::text, 'suspended'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text])))",
        'azync_workflow_history.azync_workflow_history_pkey': 'PRIMARY KEY (workflow_id, event_seq)',
        'azync_workflow_history.azync_workflow_history_workflow_id_fkey': 'FOREIGN KEY (workflow_id) REFERENCES azync_workflow_executions(id) ON DELETE CASCADE',
        'azync_workflow_signals.azync_workflow_signals_pkey': 'PRIMARY KEY (id)',
        'azync_workflow_signals.azync_workflow_signals_workflow_id_fkey': 'FOREIGN KEY (workflow_id) REFERENCES azync_workflow_executions(id) ON DELETE CASCADE',
        'azync_workflow_timers.azync_workflow_timers_pkey': 'PRIMARY KEY (id)',
        'azync_workflow_timers.azync_workflow_timers_workflow_id_fkey': 'FOREIGN KEY (workflow_id) REFERENCES azync_workflow_executions(id) ON DELETE CASCADE',
    },
    "indexes": {
        'azync_dag_deps_pkey': 'CREATE UNIQUE INDEX azync_dag_deps_pkey ON azync_dag_deps USING btree (dag_id, task_key, depends_on_key)',
        'azync_dag_signals_dedupe_idx': 'CREATE UNIQUE INDEX azync_dag_signals_dedupe_idx ON azync_dag_signals USING btree (dag_id, name, message_id) WHERE (message_id IS NOT NULL)',
        'azync_dag_signals_inbox_idx': 'CREATE INDEX azync_dag_signals_inbox_idx ON azync_dag_signals USING btree (dag_id, name, created_at) WHERE (NOT consumed)',
        'azync_dag_signals_pkey': 'CREATE UNIQUE INDEX azync_dag_signals_pkey ON azync_dag_signals USING btree (id)',
        'azync_dags_idempotency_live_idx': "CREATE UNIQUE INDEX azync_dags_idempotency_live_idx ON azync_dags USING btree (name, idempotency_key) WHERE ((idempotency_key IS NOT NULL) AND (state = ANY (ARRAY['running'::text, 'suspended'::text, 'compensating'::text, 'paused'::text])))",
        'azync_dags_live_state_created_idx': "CREATE INDEX azync_dags_live_state_created_idx ON azync_dags USING btree (created_at) WHERE (state = ANY (ARRAY['running'::text, 'suspended'::text, 'compensating'::text, 'paused'::text]))",
        'azync_dags_name_created_idx': 'CREATE INDEX azync_dags_name_created_idx ON azync_dags USING btree (name, created_at)',
        'azync_dags_name_state_idx': 'CREATE INDEX azync_dags_name_state_idx ON azync_dags USING btree (name, state)',
        'azync_dags_pkey': 'CREATE UNIQUE INDEX azync_dags_pkey ON azync_dags USING btree (id)',
        'azync_dags_terminal_completed_idx': "CREATE INDEX azync_dags_terminal_completed_idx ON azync_dags USING btree (completed_at) WHERE (state = ANY (ARRAY['succeeded'::text, 'failed'::text, 'cancelled'::text]))",
        'azync_events_occurred_idx': 'CREATE INDEX azync_events_occurred_idx ON azync_events USING btree (occurred_at, id)',
        'azync_events_pkey': 'CREATE UNIQUE INDEX azync_events_pkey ON azync_events USING btree (id)',
        'azync_events_type_occurred_idx': 'CREATE INDEX azync_events_type_occurred_idx ON azync_events USING btree (type, occurred_at, id)',
        'azync_idempotency_expires_idx': 'CREATE INDEX azync_idempotency_expires_idx ON azync_idempotency_keys USING btree (expires_at)',
        'azync_idempotency_keys_pkey': 'CREATE UNIQUE INDEX azync_idempotency_keys_pkey ON azync_idempotency_keys USING btree (source, kind, key)',
        'azync_job_attempts_job_idx': 'CREATE INDEX azync_job_attempts_job_idx ON azync_job_attempts USING btree (job_id, attempt)',
        'azync_job_attempts_pkey': 'CREATE UNIQUE INDEX azync_job_attempts_pkey ON azync_job_attempts USING btree (id)',
        'azync_jobs_active_idx': "CREATE INDEX azync_jobs_active_idx ON azync_jobs USING btree (source, kind, lease_until, id) WHERE (state = 'active'::text)",
        'azync_jobs_dag_blocked_idx': "CREATE INDEX azync_jobs_dag_blocked_idx ON azync_jobs USING btree (dag_id) WHERE (state = 'blocked'::text)",
        'azync_jobs_dag_task_idx': 'CREATE UNIQUE INDEX azync_jobs_dag_task_idx ON azync_jobs USING btree (dag_id, task_key) WHERE (dag_id IS NOT NULL)',
        'azync_jobs_dag_waiting_idx': "CREATE INDEX azync_jobs_dag_waiting_idx ON azync_jobs USING btree (dag_id, signal_name) WHERE (state = 'waiting'::text)",
        'azync_jobs_dead_idx': "CREATE INDEX azync_jobs_dead_idx ON azync_jobs USING btree (source, kind, enqueued_at) WHERE (state = 'dead'::text)",
        'azync_jobs_event_idx': 'CREATE INDEX azync_jobs_event_idx ON azync_jobs USING btree (event_id) WHERE (event_id IS NOT NULL)',
        'azync_jobs_idempotency_idx': "CREATE UNIQUE INDEX azync_jobs_idempotency_idx ON azync_jobs USING btree (source, kind, idempotency_key) WHERE ((idempotency_key IS NOT NULL) AND (state <> ALL (ARRAY['dead'::text, 'succeeded'::text])))",
        'azync_jobs_pending_idx': "CREATE INDEX azync_jobs_pending_idx ON azync_jobs USING btree (source, kind, run_at, id) WHERE (state = 'pending'::text)",
        'azync_jobs_pkey': 'CREATE UNIQUE INDEX azync_jobs_pkey ON azync_jobs USING btree (id)',
        'azync_jobs_run_idx': 'CREATE INDEX azync_jobs_run_idx ON azync_jobs USING btree (run_id) WHERE (run_id IS NOT NULL)',
        'azync_jobs_scheduled_idx': "CREATE INDEX azync_jobs_scheduled_idx ON azync_jobs USING btree (source, kind, run_at, id) WHERE (state = 'scheduled'::text)",
        'azync_jobs_succeeded_idx': "CREATE INDEX azync_jobs_succeeded_idx ON azync_jobs USING btree (source, kind, completed_at) WHERE (state = 'succeeded'::text)",
        'azync_jobs_succeeded_vacuum_idx': "CREATE INDEX azync_jobs_succeeded_vacuum_idx ON azync_jobs USING btree (source, completed_at) WHERE ((state = 'succeeded'::text) AND (dag_id IS NULL) AND (run_id IS NULL))",
        'azync_jobs_workflow_exec_key_idx': "CREATE UNIQUE INDEX azync_jobs_workflow_exec_key_idx ON azync_jobs USING btree (((meta ->> 'execution_key'::text))) WHERE ((source = 'workflow'::text) AND (meta ? 'execution_key'::text) AND (state = ANY (ARRAY['pending'::text, 'scheduled'::text, 'active'::text, 'uncertain'::text])))",
        'azync_migrations_pkey': 'CREATE UNIQUE INDEX azync_migrations_pkey ON azync_migrations USING btree (id)',
        'azync_stats_daily_pkey': 'CREATE UNIQUE INDEX azync_stats_daily_pkey ON azync_stats_daily USING btree (source, kind, day, slot)',
        'azync_subscribers_pkey': 'CREATE UNIQUE INDEX azync_subscribers_pkey ON azync_subscribers USING btree (name, event_type)',
        'azync_workflow_executions_live_biz_idx': "CREATE UNIQUE INDEX azync_workflow_executions_live_biz_idx ON azync_workflow_executions USING btree (name, business_idempotency_key) WHERE ((business_idempotency_key IS NOT NULL) AND (state = ANY (ARRAY['running'::text, 'suspended'::text])))",
        'azync_workflow_executions_name_created_idx': 'CREATE INDEX azync_workflow_executions_name_created_idx ON azync_workflow_executions USING btree (name, created_at)',
        'azync_workflow_executions_pkey': 'CREATE UNIQUE INDEX azync_workflow_executions_pkey ON azync_workflow_executions USING btree (id)',
        'azync_workflow_history_exec_key_idx': "CREATE UNIQUE INDEX azync_workflow_history_exec_key_idx ON azync_workflow_history USING btree (workflow_id, event_type, ((payload ->> 'execution_key'::text))) WHERE (((payload ->> 'execution_key'::text) IS NOT NULL) AND (event_type = ANY (ARRAY['OperationCompleted'::text, 'OperationFailed'::text])))",
        'azync_workflow_history_pkey': 'CREATE UNIQUE INDEX azync_workflow_history_pkey ON azync_workflow_history USING btree (workflow_id, event_seq)',
        'azync_workflow_signals_dedupe_idx': 'CREATE UNIQUE INDEX azync_workflow_signals_dedupe_idx ON azync_workflow_signals USING btree (workflow_id, name, message_id) WHERE (message_id IS NOT NULL)',
        'azync_workflow_signals_inbox_idx': 'CREATE INDEX azync_workflow_signals_inbox_idx ON azync_workflow_signals USING btree (workflow_id, name, created_at) WHERE (NOT consumed)',
        'azync_workflow_signals_pkey': 'CREATE UNIQUE INDEX azync_workflow_signals_pkey ON azync_workflow_signals USING btree (id)',
        'azync_workflow_timers_due_idx': 'CREATE INDEX azync_workflow_timers_due_idx ON azync_workflow_timers USING btree (fire_at) WHERE (NOT fired)',
        'azync_workflow_timers_pkey': 'CREATE UNIQUE INDEX azync_workflow_timers_pkey ON azync_workflow_timers USING btree (id)',
    },
    "triggers": {
        'azync_changes_dags_ins': 'CREATE TRIGGER azync_changes_dags_ins AFTER INSERT ON azync_dags REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_dags_ins_fn()',
        'azync_changes_dags_upd': 'CREATE TRIGGER azync_changes_dags_upd AFTER UPDATE ON azync_dags REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_dags_upd_fn()',
        'azync_changes_events_ins': 'CREATE TRIGGER azync_changes_events_ins AFTER INSERT ON azync_events REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_events_ins_fn()',
        'azync_changes_jobs_ins': 'CREATE TRIGGER azync_changes_jobs_ins AFTER INSERT ON azync_jobs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_jobs_ins_fn()',
        'azync_changes_jobs_upd': 'CREATE TRIGGER azync_changes_jobs_upd AFTER UPDATE ON azync_jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION azync_changes_jobs_upd_fn()',
    },
    "functions": ['azync_changes_dags_ins_fn', 'azync_changes_dags_upd_fn', 'azync_changes_events_ins_fn', 'azync_changes_jobs_ins_fn', 'azync_changes_jobs_upd_fn'],
    "sequences": ['azync_job_attempts_id_seq', 'azync_migrations_id_seq'],
}
# fmt: on
