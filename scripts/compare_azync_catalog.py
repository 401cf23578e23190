"""Compare the schema ``qctl db migrate`` builds with the one azync's own migrations build.

    python scripts/compare_azync_catalog.py PATH/TO/azync/driver/azyncpgx/migrations

Applies azync's migration files the way goose does into one scratch schema and qctl's
migrations into another, then prints every difference between the two catalogs
(tables, columns, constraints, indexes, triggers, functions) and checks that qctl sees
azync's database as already current. Exits 1 on any difference. azync's files are not
part of this repository, so this runs by hand; the test suite compares against the
catalog pinned in ``tests/postgres/catalog.py`` instead.
"""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qctl_store import Config
from qctl_store.postgres import PostgresStore
from tests.postgres.catalog import (
    EXPECTED_CATALOG,
    apply_goose_dir,
    catalog_diff,
    read_catalog,
)

DSN = os.environ.get("QCTL_TEST_PG_DSN", "postgresql://postgres@127.0.0.1:5432/test")


def main(directory: Path) -> int:
    suffix = uuid.uuid4().hex[:8]
    ours, theirs = f"cmp_qctl_{suffix}", f"cmp_azync_{suffix}"
    try:
        apply_goose_dir(DSN, theirs, directory)
        with contextlib.closing(PostgresStore(DSN, Config(schema=ours))) as store:
            store.migrate()
        with psycopg.connect(DSN) as conn:
            want, got = read_catalog(conn, theirs), read_catalog(conn, ours)
        problems = catalog_diff(got, want) + [
            f"pinned: {d}" for d in catalog_diff(want, EXPECTED_CATALOG)
        ]
        with contextlib.closing(PostgresStore(DSN, Config(schema=theirs))) as azync_db:
            if azync_db.migrate() != []:
                problems.append("qctl wanted to migrate a database azync had migrated")
        for line in problems:
            print(line)
        print("catalogs equal" if not problems else f"{len(problems)} differences")
        return 1 if problems else 0
    finally:
        with psycopg.connect(DSN, autocommit=True) as conn:
            for schema in (ours, theirs):
                conn.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
