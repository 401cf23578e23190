"""The oban-py partner (``tests/oban/partner/obanpyd.py``) seen from the tests: a real
oban-py application in its own Python 3.12 environment (``tests/oban/obanpy_env.py``),
started on a schema and driven over JSON lines like the Go harness (``tests/go``).

Without a Python 3.12 or newer its tests skip, unless ``QCTL_REQUIRE_OBAN=1`` (CI), which
fails them. ``make harness`` builds the environment before the tests; here it is built
only when missing.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from qctl.systems.oban import obanpy
from tests.go.harness import Harness
from tests.oban import obanpy_env

SCRIPT = Path(__file__).resolve().parent / "partner" / "obanpyd.py"
APPLICATION = "obanpy-partner"


def require_obanpy() -> Path:
    """The partner environment's Python, built if missing; skips (or fails under
    ``QCTL_REQUIRE_OBAN=1``) without a Python 3.12 on the machine."""
    python = obanpy_env.ready()
    if python is not None:
        return python
    if obanpy.interpreter() is None:
        if os.environ.get("QCTL_REQUIRE_OBAN") == "1":
            pytest.fail(f"QCTL_REQUIRE_OBAN=1 but {obanpy_env.MISSING}")
        pytest.skip(obanpy_env.MISSING)
    try:
        return obanpy_env.build()
    except RuntimeError as exc:
        pytest.fail(str(exc))


class Partner(Harness):
    """One running partner process on ``schema`` (Oban's prefix); ``call`` as the Go
    harness's. ``close`` ends it: oban-py stops its queues as on shutdown."""

    def __init__(self, dsn: str, schema: str) -> None:
        self.proc = subprocess.Popen(
            [str(require_obanpy()), str(SCRIPT), dsn, schema],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def job(self, id_: int | str) -> dict[str, Any]:
        """The job as oban-py reads it (``Oban.get_job``)."""
        row: dict[str, Any] = self.call("get", id=int(id_))["job"]
        return row

    def runs(self) -> dict[str, Any]:
        """What the partner's workers recorded: ``started``/``ended`` attempts per job id
        (int keys), ``running`` and ``peak`` per queue, the ``cancelled`` ids, and per
        queue the stager runs that ``woken`` its producer and the fetches it made."""
        report = self.call("runs")
        for key in ("started", "ended"):
            report[key] = {int(k): v for k, v in report[key].items()}
        return report

    def counts(self, queue: str | None = None) -> dict[str, int]:
        """oban-py's own counts by state (``count_jobs.sql``, what its metrics report)."""
        fields = {} if queue is None else {"queue": queue}
        counts: dict[str, int] = self.call("counts", **fields)["counts"]
        return counts


def until(check: Callable[[], bool], seconds: float = 20, what: str = "oban-py") -> None:
    """Polls ``check`` until it holds; fails after ``seconds`` naming ``what``."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"{what} did not get there in time"
        time.sleep(0.05)


def watch_executing_writes(dsn: str, schema: str) -> None:
    """Records in ``<schema>.qctl_test_executing_writes`` every UPDATE that changes an
    ``executing`` row, and every DELETE of one, made by anyone but oban-py itself (its
    connections' application name): the invariant that qctl never writes an executing job.
    An UPDATE that leaves the row as it was (what oban-py's own ``cancel_many_jobs.sql``
    does to an executing job it signals) changes nothing and is not recorded."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            f"""
            CREATE TABLE "{schema}".qctl_test_executing_writes (
                id bigint, op text, new_state text, application text);
            CREATE FUNCTION "{schema}".qctl_test_executing_write() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
              IF current_setting('application_name') <> '{APPLICATION}'
                 AND (TG_OP = 'DELETE' OR NEW IS DISTINCT FROM OLD) THEN
                INSERT INTO "{schema}".qctl_test_executing_writes
                VALUES (OLD.id, TG_OP,
                        CASE WHEN TG_OP = 'UPDATE' THEN NEW.state::text END,
                        current_setting('application_name'));
              END IF;
              RETURN NULL;
            END $$;
            CREATE TRIGGER qctl_test_executing_write
            AFTER UPDATE OR DELETE ON "{schema}".oban_jobs
            FOR EACH ROW WHEN (OLD.state = 'executing')
            EXECUTE FUNCTION "{schema}".qctl_test_executing_write();
            """
        )


def executing_writes(dsn: str, schema: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(f'SELECT * FROM "{schema}".qctl_test_executing_writes').fetchall()
