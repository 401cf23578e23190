"""``qctl streams list|seek``: a consumer moved through the log as hopper's
StreamConsumerSeek moves it, and what the leader's next pump (stream.go streamPumpSQL,
transcribed in ``worker.Worker.pump``) then delivers."""

from __future__ import annotations

from datetime import UTC, datetime

from tests.hopper.conftest import Run, data, snapshot
from tests.hopper.worker import Worker


def test_seek_then_pump(hopper: Worker, qctl: Run, pg_schema: str) -> None:
    hopper.consumer("audit", "orders.#", "audit-q")
    first = [hopper.append("orders.created", {"n": i}) for i in range(3)]
    assert hopper.pump("audit") == [f"{x}:{s}" for x, s in first]
    middle = datetime.now(UTC)
    later = [hopper.append("orders.paid", {"n": i}) for i in range(2)]
    assert hopper.pump("audit") == [f"{x}:{s}" for x, s in later]
    everything = [f"{x}:{s}" for x, s in first + later]

    [listed] = data(qctl("streams", "list", "-o", "json"))
    assert listed["name"] == "audit" and listed["reading"] is None

    before = snapshot(pg_schema)
    dry = data(qctl("streams", "seek", "audit", "--earliest", "--dry-run", "-o", "json"))
    assert dry["to"] == "earliest" and dry["before"].startswith("seen ")
    assert snapshot(pg_schema) == before
    assert qctl("streams", "seek", "audit", "--earliest").exit_code == 4  # no --yes

    assert qctl("streams", "seek", "audit", "--earliest", "--yes").exit_code == 0
    assert hopper.pump("audit") == everything  # the whole log again
    x, s = first[1]
    assert qctl("streams", "seek", "audit", "--position", f"{x}:{s}", "--yes").exit_code == 0
    assert hopper.pump("audit") == everything[2:]  # resumes after that event
    sought = data(
        qctl("streams", "seek", "audit", "--time", middle.isoformat(), "--yes", "-o", "json")
    )
    assert sought["to"] == f"{later[0][0]}:{later[0][1] - 1}"
    assert hopper.pump("audit") == everything[3:]  # the events since the time
    assert qctl("streams", "seek", "audit", "--latest", "--yes").exit_code == 0
    assert hopper.pump("audit") == []

    for args, code in (
        (("streams", "seek", "audit", "--yes"), 2),
        (("streams", "seek", "audit", "--earliest", "--latest", "--yes"), 2),
        (("streams", "seek", "audit", "--position", "12", "--yes"), 2),
        (("streams", "seek", "nobody", "--earliest", "--yes"), 3),
    ):
        assert qctl(*args).exit_code == code, args
