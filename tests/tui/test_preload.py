"""``qctl top`` opens the database and runs the first tab's reads in threads while its
main thread imports Textual: what the threads import shares no package with what the
main thread imports, once ``preload_reads`` has imported the reads' modules (a package
imported by two threads at once can fail in one: ``KeyError: 'qctl_store'``).

Deterministic: in a fresh interpreter, the threads' work and Textual's import run one
after the other, each recording the modules it imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import PG_DSN

SCRIPT = """
import json, sys
from qctl.cli import launch
from qctl.cli.context import CliContext

names = []


class Recorder:
    def find_spec(self, name, path=None, target=None):
        names.append(name)


c = CliContext.resolve(dsn=sys.argv[1], schema=sys.argv[2] or None)
reads = launch.preload_reads(c)
sys.meta_path.insert(0, Recorder())
if sys.argv[3] == "threads":
    handle = c.handle(pooled=True)
    for read in reads.values():
        read(handle)
else:
    import qctl.tui.app
c.close()
print(json.dumps({"reads": sorted(reads), "imported": names}))
"""


def imported(dsn: str, schema: str, side: str) -> dict[str, list[str]]:
    """What ``side`` (the preload threads, or the main thread) imports after
    ``preload_reads``, alone in a fresh interpreter."""
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, dsn, schema, side],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert r.returncode == 0, r.stderr
    result: dict[str, list[str]] = json.loads(r.stdout)
    return result


def packages(name: str) -> set[str]:
    return {name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)}


def test_the_preload_threads_import_nothing_the_main_thread_imports(
    module_db: tuple[str, str, Path],
) -> None:
    backend, schema, path = module_db
    dsn = PG_DSN if backend == "postgres" else f"sqlite:///{path}"
    threads = imported(dsn, schema, "threads")
    main = set(imported(dsn, schema, "main")["imported"])
    assert threads["reads"] == ["overview-pane"]  # azync's overview, read before Textual
    ours = set(threads["imported"])
    assert "psycopg_pool" in ours or backend == "sqlite"  # the driver's, in the thread
    shared = (ours & main) | (ours & {p for n in main for p in packages(n)})
    shared |= main & {p for n in ours for p in packages(n)}
    assert shared == set()
