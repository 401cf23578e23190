"""The admin single-job actions of both backends (Go ``store_admin.go``): which named
statement each one runs and the op string its ``NotFound`` carries, as azync's
``driver.NewNotFound(op)`` does: ``azync: <op>: job not found in expected state``."""

from __future__ import annotations

import uuid
from abc import abstractmethod
from typing import Any

from qctl_store import validate
from qctl_store.types import JobState, Source


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
