"""What every system's demo workers take (``qctl demo`` on PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Mapping


def claimed(mark: Mapping[str, str] | None, own: bool) -> str | None:
    """The mark (JSON) of the jobs a demo's workers claim, None for any job: on a schema
    the demo created (``own``) they work every job there, whoever inserted it (an earlier
    run, an operator's enqueue), as the system's own workers would; on one it shares,
    only the jobs its run inserted (``mark``)."""
    return None if own or not mark else json.dumps(dict(mark))
