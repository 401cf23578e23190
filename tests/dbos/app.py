"""A real DBOS application for qctl's DBOS tests, run in a subprocess:

    python tests/dbos/app.py SYSTEM_DATABASE_URL

It launches DBOS on the given system database, prints ``ready`` and serves until
stdin closes or SIGTERM. The tests start its workflows through ``DBOSClient.enqueue``
(by name, on the ``work`` or ``limited`` queue), so the workflows run on this process's
executor exactly as in production.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from datetime import datetime
from typing import Any

from dbos import DBOS, DBOSConfig, SetWorkflowID

STEP_SECONDS = 0.4
"""How long each step of ``slow`` sleeps: long enough for a cancel to land mid-run."""


class CardDeclined(RuntimeError):
    """An application exception with its own class (rendered by name by qctl)."""


@DBOS.step()
def charge(amount: int) -> dict[str, Any]:
    return {"charged": amount, "currency": "EUR", "ok": True}


@DBOS.step()
def reserve(items: list[str]) -> list[str]:
    return sorted(items)


@DBOS.step()
def ship(order: str) -> str:
    return f"shipped {order}"


@DBOS.workflow()
def checkout(order: str, amount: int) -> dict[str, Any]:
    """Three steps and an event; returns a dict."""
    paid = charge(amount)
    reserved = reserve(["b", "a"])
    shipped = ship(order)
    DBOS.set_event("progress", {"order": order, "stage": "done"})
    return {"order": order, "paid": paid, "reserved": reserved, "shipped": shipped}


@DBOS.step()
def decline(amount: int) -> None:
    raise CardDeclined(f"card declined for {amount}")


@DBOS.workflow()
def failing(amount: int) -> None:
    charge(amount)
    decline(amount)


@DBOS.step()
def tick(i: int) -> int:
    time.sleep(STEP_SECONDS)
    return i


@DBOS.workflow()
def slow(steps: int) -> int:
    """``steps`` steps of STEP_SECONDS each: cancelled, it stops at its next step."""
    total = 0
    for i in range(steps):
        total += tick(i)
    return total


@DBOS.workflow()
def child(n: int) -> int:
    return tick(n) * 2


@DBOS.workflow()
def parent(n: int) -> int:
    with SetWorkflowID(f"{DBOS.workflow_id}-child"):
        handle = DBOS.start_workflow(child, n)
    return handle.get_result() + 1


@DBOS.workflow()
def every_second(scheduled: datetime, context: Any) -> str:
    return scheduled.isoformat()


def main() -> None:
    url = sys.argv[1]
    config: DBOSConfig = {
        "name": "qctl-test-app",
        "system_database_url": url,
        "application_version": "v1",
        "executor_id": "qctl-test-executor",
        "notification_listener_polling_interval_sec": 0.1,
        "scheduler_polling_interval_sec": 1.0,
    }
    DBOS(config=config)
    DBOS.launch()
    DBOS.register_queue("work", polling_interval_sec=0.1)
    DBOS.register_queue("limited", global_concurrency=1, polling_interval_sec=0.1)
    DBOS.create_schedule(
        schedule_name="every-second",
        workflow_fn=every_second,
        schedule="* * * * * *",
    )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("ready", flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    done.wait()
    DBOS.destroy(workflow_completion_timeout_sec=0)


if __name__ == "__main__":
    main()
