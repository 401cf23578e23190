"""``make try``: a short scripted session on the embedded default database.

Migrates, enqueues a few jobs with the real CLI, plays a worker that leases them and
fails one (through qctl_store, as a Python service would), then inspects the result with
the CLI again. Each step is echoed as the command an operator would type.
"""

from __future__ import annotations

import shlex
import sys

from qctl.cli.main import app


def qctl(*args: str) -> None:
    print(f"\n$ qctl {shlex.join(args)}", flush=True)
    code = app(list(args), prog_name="qctl", standalone_mode=False)
    sys.stdout.flush()
    if code:
        raise SystemExit(code)


def work(kind: str) -> None:
    """A worker's turn: lease every due job of ``kind``, ack all but the first, which
    fails for good."""
    from qctl_store import DequeueParams, Source, open_store

    print(f"\n# a worker leases the {kind} jobs; the first one fails", flush=True)
    with open_store() as store:
        jobs = store.dequeue_batch(Source.QUEUE, DequeueParams(kind=kind, limit=10))
        for i, job in enumerate(jobs):
            assert job.lease_token is not None
            if i == 0:
                store.dead(job.id, job.lease_token, "smtp: connection refused")
            else:
                store.ack(job.id, job.lease_token)


def main() -> None:
    qctl("db", "migrate")
    for to in ("ada@example.com", "grace@example.com", "linus@example.com"):
        qctl("jobs", "enqueue", "email.send", "--payload", f'{{"to": "{to}"}}')
    qctl("jobs", "enqueue", "report.build", "--delay", "1h", "--meta", "team=ops")
    work("email.send")
    qctl("queues", "list")
    qctl("jobs", "list", "--state", "dead", "--kind", "email.send")
    qctl("jobs", "retry", "--all-dead", "--kind", "email.send", "--dry-run")
    print("\nNext: qctl jobs retry --all-dead --kind email.send, qctl --help, man man/qctl.1")


if __name__ == "__main__":
    main()
