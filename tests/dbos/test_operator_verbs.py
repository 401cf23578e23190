"""DBOS operator verbs against a running DBOS application, on PostgreSQL and SQLite:
schedule backfills, application versions of several applications, queue order and
partitions (issue 32's audit)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from tests.dbos.conftest import Run, data
from tests.dbos.fixtures import App, wait_for


def test_backfill_counts_only_the_slots_it_enqueued(run: Run, dbos_app: App) -> None:
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    window = ["--since", start.isoformat(), "--until", (start + timedelta(seconds=3)).isoformat()]
    args = ["schedules", "backfill", "every-second", *window, "--yes"]
    first = data(run(*args, "-o", "json"))
    assert len(first["workflow_ids"]) == 2 and first["already_run"] == []
    again = run(*args, "-o", "json")
    assert data(again)["workflow_ids"] == []  # both slots had run: nothing enqueued
    assert data(again)["already_run"] == first["workflow_ids"]
    text = run(*args)
    assert "backfilled 0 run(s) of DBOS schedule every-second (2 already run)" in text.stdout


def test_set_latest_reports_the_applications_own_latest(run: Run, dbos_app: App) -> None:
    sys_db = dbos_app.client._sys_db
    # another application's version, registered after ours: the newest of all
    sys_db.app_name = "billing"
    try:
        sys_db.create_application_version("billing-v7")
    finally:
        sys_db.app_name = None
    sys_db.create_application_version("v0-old")
    run("versions", "set-latest", "v1", "--yes", "--application-name", "qctl-demo")
    sys_db.app_name = "billing"
    try:
        sys_db.update_application_version_timestamp("billing-v7", 2**40)
    finally:
        sys_db.app_name = None
    try:
        dry = data(run("versions", "set-latest", "v0-old", "--dry-run", "-o", "json"))
        assert dry["latest"] == "v1"  # not billing-v7: another application's
        refused = run("versions", "set-latest", "billing-v7", "--application-name", "qctl-demo")
        assert refused.exit_code == 2
        assert "belongs to application 'billing', not 'qctl-demo'" in refused.output
        done = run("versions", "set-latest", "v0-old", "--application-name", "qctl-demo", "--yes")
        assert "(was v1)" in done.stdout, done.output
        latest = dbos_app.client._sys_db.get_latest_application_version()
        assert latest["version_name"] in ("v0-old", "billing-v7")
    finally:
        assert run("versions", "set-latest", "v1", "--yes").exit_code == 0


def test_queue_shows_dequeue_order_priority_and_partitions(run: Run, dbos_app: App) -> None:
    # a queue no executor polls: what is enqueued on it stays ENQUEUED
    queue = f"idle-{uuid.uuid4().hex[:6]}"
    dbos_app.client.register_queue(queue, partition_concurrency=2)
    ids = []
    run_id = uuid.uuid4().hex[:10]
    # ids in creation order: DBOS breaks a tie of created_at by id, and so does qctl
    for n, (priority, key) in enumerate(((5, "eu"), (1, "us"), (5, "us"))):
        wf_id = f"q-{run_id}-{n}"
        dbos_app.client.enqueue(
            {
                "queue_name": queue,
                "workflow_name": "checkout",
                "workflow_id": wf_id,
                "priority": priority,
                "queue_partition_key": key,
            },
            wf_id,
            1,
        )
        ids.append(wf_id)
    listed = {q["queue_name"]: q for q in data(run("queues", "list", "-o", "json"))}
    assert listed[queue]["partition_concurrency"] == 2
    assert "partition_concurrency" in run("queues", "list", "-o", "csv").stdout.splitlines()[0]
    shown = wait_for(lambda: data(run("queues", "show", queue, "-o", "json")))
    assert [w["workflow_id"] for w in shown["workflows"]] == [ids[1], ids[0], ids[2]]
    assert [(w["priority"], w["queue_partition_key"]) for w in shown["workflows"]] == [
        (1, "us"),
        (5, "eu"),
        (5, "us"),
    ]
    table = run("queues", "show", queue).stdout
    assert "PRIORITY" in table and "QUEUE_PARTITION_KEY" in table


def test_fork_and_rewind_onto_a_partitioned_queue(run: Run, dbos_app: App) -> None:
    queue = f"parts-{uuid.uuid4().hex[:6]}"
    dbos_app.client.register_queue(queue, partition_concurrency=1)
    wf_id = dbos_app.enqueue("checkout", "p-1", 3)
    other = dbos_app.enqueue("checkout", "p-2", 4)
    for i in (wf_id, other):
        wait_for(lambda i=i: data(run("workflows", "show", i, "-o", "json"))["status"] == "SUCCESS")

    def forks() -> list[str]:
        shown = data(run("workflows", "show", wf_id, "-o", "json"))
        return [w["workflow_id"] for w in shown["forks"]]

    # no key given and none to keep: refused before anything is written
    refused = run("workflows", "fork", wf_id, "--on-queue", queue)
    assert refused.exit_code == 2
    assert f"workflow {wf_id} has no partition key and queue {queue} is partitioned" in (
        refused.output
    )
    assert forks() == []
    forked = data(
        run("workflows", "fork", wf_id, "--on-queue", queue, "--partition-key", "eu", "-o", "json")
    )
    new = data(run("workflows", "show", forked["new_workflow_id"], "-o", "json"))
    assert (new["queue_name"], new["queue_partition_key"]) == (queue, "eu")
    wrong = run("workflows", "fork", wf_id, "--partition-key", "eu")  # DBOS's internal queue
    assert wrong.exit_code == 2 and "is not partitioned" in wrong.output

    # a rewind keeps the workflow's own key (as if it had run on the partitioned queue)
    from qctl.systems.dbos.database import Database

    db = Database(dbos_app.url)
    try:
        db.execute(
            "UPDATE {t}workflow_status SET queue_partition_key = 'us' WHERE workflow_uuid = %s",
            [wf_id],
        )
    finally:
        db.close()
    both = run("workflows", "rewind", wf_id, other, "--on-queue", queue, "--yes")
    assert both.exit_code == 2 and f"workflow {other} has no partition key" in both.output
    assert data(run("workflows", "show", wf_id, "-o", "json"))["status"] == "SUCCESS"
    done = run("workflows", "rewind", wf_id, "--on-queue", queue, "--yes")
    assert done.exit_code == 0, done.output
    row = data(run("workflows", "show", wf_id, "-o", "json"))
    assert (row["queue_name"], row["queue_partition_key"]) == (queue, "us")


def test_fork_validates_version_and_step(run: Run, dbos_app: App) -> None:
    wf_id = dbos_app.enqueue("checkout", "v-1", 3)
    steps = wait_for(
        lambda: (
            (w := data(run("workflows", "show", wf_id, "-o", "json")))["status"] == "SUCCESS"
            and w["steps"]
        )
    )
    unknown = run("workflows", "fork", wf_id, "--application-version", "v9")
    assert unknown.exit_code == 2
    assert "no DBOS application version 'v9' (registered: " in unknown.output
    last = len(steps)
    past = run("workflows", "fork", wf_id, "--from-step", str(last + 2))
    assert past.exit_code == 2
    assert f"has {last} step(s), so the last step to start from is {last + 1}" in past.output
    rewound = run("workflows", "rewind", wf_id, "--from-step", str(last + 2), "--yes")
    assert rewound.exit_code == 2
    assert data(run("workflows", "show", wf_id, "-o", "json"))["forks"] == []
    # one past the last copies every step: accepted, on no version (the latest's run it)
    forked = data(run("workflows", "fork", wf_id, "--from-step", str(last + 1), "-o", "json"))
    new = data(run("workflows", "show", forked["new_workflow_id"], "-o", "json"))
    assert new["forked_from"] == wf_id


def test_cancel_and_delete_reach_the_whole_tree(run: Run, dbos_app: App) -> None:
    from qctl.systems.dbos.database import Database

    tag = uuid.uuid4().hex[:8]
    queue = f"idle-{tag}"  # no executor serves it: all stay ENQUEUED
    root, a, b, c, other = (
        dbos_app.enqueue("slow", 50, queue=queue, id=f"t-{tag}-{n}")
        for n in ("root", "a", "b", "c", "other")
    )
    db = Database(dbos_app.url)
    try:  # root -> a, b; a -> c (as DBOS links a child to the workflow that started it)
        for child, parent in ((a, root), (b, root), (c, a)):
            db.execute(
                "UPDATE {t}workflow_status SET parent_workflow_id = %s WHERE workflow_uuid = %s",
                [parent, child],
            )
    finally:
        db.close()
    dry = data(run("workflows", "cancel", root, "--children", "--dry-run", "-o", "json"))
    assert dry["ids"] == [root, a, b, c]
    assert dry["selection"] == {"by": "ids with descendants", "count": 4}
    text = run("workflows", "cancel", root, "--children", "--dry-run").stdout
    assert "4 dbos workflows (4 ENQUEUED)" in text
    done = run("workflows", "cancel", root, "--children", "--yes")
    assert done.exit_code == 0, done.output
    statuses = {i: data(run("workflows", "show", i, "-o", "json"))["status"] for i in (root, c)}
    assert statuses == {root: "CANCELLED", c: "CANCELLED"}
    assert data(run("workflows", "show", other, "-o", "json"))["status"] == "ENQUEUED"
    # a real tree: DBOS's parent workflow and the child it started
    parent = dbos_app.enqueue("parent", 3)
    wait_for(lambda: data(run("workflows", "show", parent, "-o", "json"))["status"] == "SUCCESS")
    gone = run("workflows", "delete", parent, root, "--children", "--yes", "-o", "json")
    assert data(gone)["selected"] == 6 and data(gone)["done"] == 6
    assert run("workflows", "show", f"{parent}-child").exit_code == 3
    assert run("workflows", "show", c).exit_code == 3
    assert data(run("workflows", "show", other, "-o", "json"))["status"] == "ENQUEUED"


def test_scheduled_runs_of_an_application_serializer_show_raw(run: Run, dbos_app: App) -> None:
    import json

    from dbos import DBOSClient, Serializer

    class Custom(Serializer):  # an application's own serializer (not base64)
        def serialize(self, data: object) -> str:
            return "custom:" + json.dumps(data, default=str)

        @classmethod
        def deserialize(cls, serialized_data: str) -> object:
            return json.loads(serialized_data.removeprefix("custom:"))

        def name(self) -> str:
            return "custom-json"

    name = f"custom-{uuid.uuid4().hex[:6]}"
    client = DBOSClient(system_database_url=dbos_app.url, serializer=Custom())
    try:
        client.create_schedule(
            schedule_name=name,
            workflow_name="nowhere",  # no such workflow: the run stays ENQUEUED
            schedule="* * * * * *",
            context={"region": "eu"},
            queue_name=f"idle-{name}",
        )
        start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
        [handle] = client.backfill_schedule(name, start, start + timedelta(seconds=2))
        wf_id = handle.get_workflow_id()
    finally:
        client.destroy()
    wf = data(run("workflows", "show", wf_id, "-o", "json"))
    assert wf["input"]["serialization"] == "unnamed_serializer"
    assert wf["input"]["value"]["raw"].startswith('custom:{"args": [')
    assert '"region": "eu"' in wf["input"]["value"]["raw"]
    assert "not base64" not in run("workflows", "show", wf_id).stdout


def test_a_parents_prefix_means_the_parent_and_ambiguity_lists_candidates(
    run: Run, dbos_app: App
) -> None:
    tag = uuid.uuid4().hex[:8]
    parent = dbos_app.enqueue("parent", 2, id=f"tree-{tag}")
    wait_for(lambda: data(run("workflows", "show", parent, "-o", "json"))["status"] == "SUCCESS")
    # the prefix matches the parent and its child `tree-<tag>-child`: the parent is meant
    assert data(run("workflows", "show", parent[:-2], "-o", "json"))["workflow_id"] == parent
    one, two = (dbos_app.enqueue("checkout", "a", 1, id=f"amb-{tag}-{n}") for n in (1, 2))
    ambiguous = run("workflows", "show", f"amb-{tag}")
    assert ambiguous.exit_code == 2
    assert f"is ambiguous ({one}, {two}): type more of it" in ambiguous.output
