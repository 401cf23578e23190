"""The admin single-job actions of both backends (Go ``store_admin.go``): which named
statement each one runs and the op string its ``NotFound`` carries, as azync's
``driver.NewNotFound(op)`` does: ``azync: <op>: job not found in expected state``; and
the admin reads of one job and of a source's kinds."""

from __future__ import annotations

import uuid
from abc import abstractmethod
from typing import Any

from qctl_store import validate
from qctl_store.backend import StoreBase
from qctl_store.errors import NotFound
from qctl_store.types import AttemptError, Job, JobState, Source


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

    def job_attempts(self, source: Source, id: uuid.UUID) -> list[AttemptError]:
        args = {"source": validate.source(source).value, "id": self.dialect.arg_id(id, "id")}
        with self.read() as cur:
            rows = cur.execute(self.queries("admin.sql").job_attempts, args).fetchall()
        return [self.rows.attempt(r) for r in rows]
