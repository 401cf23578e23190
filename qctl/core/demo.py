"""What every system's demo workers take (``qctl demo`` on PostgreSQL)."""

from __future__ import annotations

import json
import select
import subprocess
from collections.abc import Mapping
from typing import Any


def claimed(mark: Mapping[str, str] | None, own: bool) -> str | None:
    """The mark (JSON) of the jobs a demo's workers claim, None for any job: on a schema
    the demo created (``own``) they work every job there, whoever inserted it (an earlier
    run, an operator's enqueue), as the system's own workers would; on one it shares,
    only the jobs its run inserted (``mark``)."""
    return None if own or not mark else json.dumps(dict(mark))


def handed(proc: subprocess.Popen[str], spec: Mapping[str, Any], timeout: float) -> bool:
    """Hands a demo's worker process (a system's own runtime) its settings, one JSON line
    on its stdin; whether it then said ``ready`` within ``timeout`` seconds."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(spec) + "\n")
    proc.stdin.flush()
    readable, _, _ = select.select([proc.stdout], [], [], timeout)
    return bool(readable) and proc.stdout.readline().strip() == "ready"


def ended(proc: subprocess.Popen[str], timeout: float) -> int:
    """Closes a demo's worker process's stdin, its signal to stop as on its application's
    shutdown; its exit status (killed past ``timeout`` seconds)."""
    assert proc.stdin is not None
    try:
        proc.stdin.close()
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()
    except OSError:
        return proc.wait()
