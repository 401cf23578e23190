"""A real DBOS application: the workload of ``qctl demo --system dbos`` and the
application qctl's DBOS tests drive. Run in a subprocess (it imports DBOS):

    python .../demo_app.py SYSTEM_DATABASE_URL [--workload RATE] [--schema SCHEMA]
        [--executor EXECUTOR_ID]

It launches DBOS on the given system database, prints ``ready`` and serves until
stdin closes or SIGTERM. Workflows are started through ``DBOSClient.enqueue`` (by name,
on the ``work`` or ``limited`` queue), so they run on this process's executor exactly
as in production; with ``--workload`` it also enqueues a mix itself, about RATE
workflows a second: checkouts (some declined), parents with a child, slow ones on the
queue limited to one at a time, and delayed ones.
"""

from __future__ import annotations

import random
import signal
import sys
import threading
import time
from datetime import datetime
from typing import Any

from dbos import (
    DBOS,
    DBOSConfig,
    SetEnqueueOptions,
    SetWorkflowID,
    WorkflowSerializationFormat,
)

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
def streaming(n: int) -> int:
    """Writes ``n`` values to its stream ``progress`` (a pickled dict, then portable JSON
    for the last), then closes it."""
    for i in range(n):
        DBOS.write_stream("progress", {"done": i + 1, "of": n})
    DBOS.write_stream("progress", "last", serialization_type=WorkflowSerializationFormat.PORTABLE)
    DBOS.close_stream("progress")
    return n


@DBOS.workflow()
def every_second(scheduled: datetime, context: Any) -> None:
    DBOS.logger.debug("tick %s", scheduled.isoformat())


@DBOS.workflow()
def awaits_message(timeout: float) -> Any:
    """Waits in ``DBOS.recv`` for a message on topic ``go``; returns it (None at the
    timeout)."""
    return DBOS.recv("go", timeout_seconds=timeout)


@DBOS.workflow()
def gathers(n: int) -> int:
    """Starts a child, then waits for a message before reading the child's result: until
    then it is PENDING with a finished child."""
    handle = DBOS.start_workflow(child, n)
    DBOS.recv("go", timeout_seconds=120)
    return handle.get_result() + 1


@DBOS.workflow()
def hands_off(timeout: float) -> str:
    """Starts a child that waits for a message and finishes without waiting for it."""
    return DBOS.start_workflow(awaits_message, timeout).get_workflow_id()


def workload(rate: float, done: threading.Event) -> None:
    work = DBOS.retrieve_queue("work")
    limited = DBOS.retrieve_queue("limited")
    assert work is not None and limited is not None
    n = 0
    while not done.wait(random.expovariate(rate)):
        n += 1
        pick = random.random()
        if pick < 0.5:
            work.enqueue(checkout, f"order-{n}", random.randint(5, 500))
        elif pick < 0.65:
            work.enqueue(failing, random.randint(5, 500))
        elif pick < 0.8:
            work.enqueue(parent, n % 10)
        elif pick < 0.95:
            limited.enqueue(slow, random.randint(2, 8))
        else:
            with SetEnqueueOptions(delay_seconds=random.randint(10, 60)):
                work.enqueue(checkout, f"later-{n}", 1)


def main() -> None:
    url, *options = sys.argv[1:]
    flags = dict(zip(options[::2], options[1::2], strict=True))
    rate = float(flags.get("--workload", 0.0))
    config: DBOSConfig = {
        "name": "qctl-demo",
        "system_database_url": url,
        "application_version": "v1",
        "executor_id": flags.get("--executor", "qctl-demo-executor"),
        "notification_listener_polling_interval_sec": 0.1,
        "scheduler_polling_interval_sec": 1.0,
    }
    if "--schema" in flags:  # PostgreSQL: the schema of DBOS's tables (DBOS's default: dbos)
        config["dbos_system_schema"] = flags["--schema"]
    DBOS(config=config)
    DBOS.launch()
    DBOS.register_queue("work", polling_interval_sec=0.1)
    DBOS.register_queue("limited", global_concurrency=1, polling_interval_sec=0.1)
    if DBOS.get_schedule("every-second") is None:  # a demo run again on its database
        DBOS.create_schedule(
            schedule_name="every-second",
            workflow_fn=every_second,
            schedule="* * * * * *",
        )
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("ready", flush=True)
    if rate > 0:
        threading.Thread(target=workload, args=(rate, done), daemon=True).start()

    def until_stdin_closes() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    done.wait()
    DBOS.destroy(workflow_completion_timeout_sec=0)


if __name__ == "__main__":
    main()
