"""The admin single-job actions of both backends (Go ``store_admin.go``): which named
statement each one runs and the op string its ``NotFound`` carries, as azync's
``driver.NewNotFound(op)`` does: ``azync: <op>: job not found in expected state``; their
set-based forms over a batch of ids, which bulk verbs run (each statement re-checks
source and state in its ``WHERE``, so a job that moved on is left alone, and returns
the ids it changed); and the admin reads of one job, of a source's kinds and of a bulk
verb's targets."""

from __future__ import annotations

import uuid
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from qctl_kit.errors import NotFound
from qctl_kit.sqlfile import fill
from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.listing import job_where
from qctl_store.types import AttemptError, Job, JobSearch, JobState, JobTarget, Source


class JobActions:
    """Mixed into each backend's ``AdminMixin``, which runs the statements."""

    @abstractmethod
    def _act(self, op: str, statement: str, source: Source, id: uuid.UUID, **extra: Any) -> None:
        """Run the backend's ``admin.sql`` statement ``statement`` guarded on ``id`` and
        ``source`` (plus ``extra`` parameters); no row affected is ``NotFound(op)``."""

    def retry_job(self, source: Source, id: uuid.UUID) -> None:
        self._act("retry", "retry_job", source, id)

    def archive_job(self, source: Source, id: uuid.UUID) -> None:
        self._act("archive", "archive_job", source, id)

    def pause_job(self, source: Source, id: uuid.UUID) -> None:
        self._act("pause", "pause_job", source, id)

    def resume_job(self, source: Source, id: uuid.UUID) -> None:
        self._act("resume", "resume_job", source, id)

    def delete_job(self, source: Source, id: uuid.UUID, state: JobState) -> None:
        self._act("delete", "delete_job", source, id, state=validate.job_state(state).value)

    @abstractmethod
    def _act_many(
        self, statement: str, ids: Sequence[uuid.UUID], sources: Sequence[Source], **extra: Any
    ) -> list[Any]:
        """Run the backend's ``admin.sql`` statement ``statement`` over ``ids`` and
        ``sources`` (plus ``extra`` list parameters) as one transaction; the rows it
        returns (``id``, ``source``, ``kind`` of each job it changed)."""

    def _changed(
        self, statement: str, ids: Sequence[uuid.UUID], sources: Sequence[Source], **extra: Any
    ) -> list[uuid.UUID]:
        if not ids:
            return []
        return [_uuid(r["id"]) for r in self._act_many(statement, ids, sources, **extra)]

    def retry_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        return self._changed("retry_jobs", ids, sources)

    def pause_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        return self._changed("pause_jobs", ids, sources)

    def resume_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        return self._changed("resume_jobs", ids, sources)

    def archive_jobs(self, ids: Sequence[uuid.UUID], sources: Sequence[Source]) -> list[uuid.UUID]:
        return self._changed("archive_jobs", ids, sources)

    def delete_jobs(
        self, ids: Sequence[uuid.UUID], sources: Sequence[Source], states: Sequence[JobState]
    ) -> list[uuid.UUID]:
        values = [validate.job_state(s).value for s in states]
        return self._changed("delete_jobs", ids, sources, states=values)


def _uuid(value: Any) -> uuid.UUID:
    """An id as a backend returns it: a uuid on PostgreSQL, its text on SQLite."""
    return value if isinstance(value, uuid.UUID) else uuid.UUID(value)


class JobReads(StoreBase):
    """Mixed into each backend's ``AdminMixin``: the reads of ``admin.sql`` that bind
    alike on both."""

    def list_kinds(self, source: Source) -> list[str]:
        args = {"source": validate.source(source).value}
        with self.read() as cur:
            rows = cur.execute(self.queries("admin.sql").list_kinds, args).fetchall()
        return [r["kind"] for r in rows]

    def get_job(self, source: Source, id: uuid.UUID) -> Job:
        args = {"source": validate.source(source).value, "id": self.dialect.arg_id(id, "id")}
        with self.read() as cur:
            row = cur.execute(self.queries("admin.sql").get_job, args).fetchone()
        if row is None:
            raise NotFound("get job")
        return self.rows.job(row)

    def find_job(self, id: uuid.UUID) -> Job:
        args = {"id": self.dialect.arg_id(id, "id")}
        with self.read() as cur:
            row = cur.execute(self.queries("admin.sql").find_job, args).fetchone()
        if row is None:
            raise NotFound("get job")
        return self.rows.job(row)

    def job_targets(
        self,
        search: JobSearch,
        states: Sequence[JobState],
        after: uuid.UUID | None = None,
        limit: int = 1000,
    ) -> list[JobTarget]:
        d = self.dialect
        where, args = job_where(d, replace(search, state=None))
        # The states inlined as the enum's literals, as job_where does (partial indexes).
        literals = ", ".join(f"'{validate.job_state(s).value}'" for s in states)
        where += f" AND state IN ({literals or 'NULL'})"
        if after is not None:
            where += f" AND id > {d.param('after')}"
            args["after"] = d.arg_id(after, "after")
        args["limit"] = limit
        with self.read() as cur:
            rows = cur.execute(fill(self.queries("admin.sql").job_targets, where=where), args)
            return [self._target(r) for r in rows.fetchall()]

    def job_targets_of(self, ids: Sequence[uuid.UUID]) -> list[JobTarget]:
        if not ids:
            return []
        args = {"ids": self.dialect.array([self.dialect.arg_id(i, "id") for i in ids])}
        with self.read() as cur:
            rows = cur.execute(self.queries("admin.sql").job_targets_of, args).fetchall()
        return [self._target(r) for r in rows]

    @staticmethod
    def _target(row: Any) -> JobTarget:
        return JobTarget(_uuid(row["id"]), row["source"], row["state"], row["kind"])

    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        args = {"source": validate.source(source).value, "id": self.dialect.arg_id(id, "id")}
        with self.read() as cur:
            rows = cur.execute(self.queries("admin.sql").job_attempts, args).fetchall()
        return [self.rows.attempt(r) for r in rows]
