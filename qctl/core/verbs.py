"""The verb engine: how every system's operator verbs choose their targets, check them,
plan, act and report, once, for the command line and the dashboard alike.

A system declares each verb (``Verb``): the states it acts on, how to read a keyset page
of targets for a filter and the current state of given ids (ids and states only: nothing
is decoded for a target that is not shown), and one set-based write per batch whose
``WHERE`` re-checks each row's state and which returns the ids it changed. The engine
does the rest:

- ``plan``: the selection (ids, a filter, or the dashboard's marks) read in keyset
  pages, each target counted under its state, or under the reason the verb passes it
  over (``running``, ``gone``, ``dag task: use dags retry``); refused past ``--max``. A
  dry run prints the plan; ``--plan-out`` keeps it (``save``) and ``--plan`` runs
  exactly its ids (``load``), each one checked again by the write.
- ``run``: the plan's ids in batches of ``BATCH``, each one statement in its own short
  transaction. A target a worker took or finished since the plan is not an error: the
  write leaves it alone, and it is counted under its reason (read again after the
  batch). Any other failure, Ctrl-C included, stops the run: ``Stopped`` carries the
  result so far (the batches committed stay done).
- ``Result``: one shape on every system, for ``-o json``, the table's sentence, the
  dashboard's notice and the audit record.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Generic, TypeVar

from qctl.core.errors import NoSuchName, WrongState
from qctl_kit.errors import InvalidInput

BATCH = 1_000
"""Targets a write statement takes at once (one short transaction each)."""
MAX_TARGETS = 10_000
"""``--max``'s default on every bulk verb of every system."""
SAMPLE = 5
"""How many targets a plan shows (it counts them all)."""
GONE = "gone"
"""The reason of a target no longer in the database."""
CHANGED = "changed"
"""The reason of a target the write left alone although its state is one the verb takes
(it changed and changed back, or the system's own check refused it)."""

H = TypeVar("H")


@dataclass(frozen=True)
class Target:
    """One row a verb may act on, as the selection reads it."""

    id: str
    state: str
    label: str = ""
    """What a sample shows beside the id (a kind, a name)."""


@dataclass(frozen=True)
class Written:
    """What one batch's write did: the ids it changed, and the ids it refused for a
    reason of the system's own (a unique key another job holds), with that reason."""

    done: Sequence[str]
    refused: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Verb(Generic[H]):
    """An operator verb of a system, declared once in the system's package; ``H`` is
    the system's database handle."""

    system: str
    """The system's name (``hopper``)."""
    noun: str
    """What it acts on, as the command line names it (``jobs``)."""
    name: str
    """The verb (``retry``)."""
    accepts: tuple[str, ...]
    """The states it acts on."""
    effect: str
    """What the real run does to each target, in words, after "will" and "did"
    ("make available now", a plan's "will make available now")."""
    past: str
    """The verb in the past tense (``retried``)."""
    page: Callable[[H, Mapping[str, Any], str | None, int], list[Target]]
    """Targets a filter matches after a cursor (the previous page's last id; None: from
    the first), at most ``n``, in one stable order of ids."""
    lookup: Callable[[H, Sequence[str]], list[Target]]
    """The current state of those of the ids that exist."""
    write: Callable[[H, list[str]], Written]
    """One batch: one statement, in its own transaction, that re-checks each row's state
    and returns what it changed."""
    reasons: Mapping[str, str] = field(default_factory=dict)
    """The reason a target in a state the verb does not take is passed over, where the
    state's own name would not say enough (``pending``: "waits for its dependencies")."""
    filter_states: tuple[str, ...] = ()
    """The states a filter without ``--state`` selects (default: ``accepts``)."""
    singular: str = ""
    """One of what it acts on (default: ``noun`` less its final s)."""
    plural: str = ""
    """Several of them (default: ``noun``)."""
    caveats: Callable[[H, list[str]], list[str]] | None = None
    """What the operator should know of a batch of planned targets before the run
    ("batch B counted it already"): read for the plan, a few of them shown."""
    batch: int = 0
    """Targets a write takes at once (default: ``BATCH``); 1 for a write that is one
    call per target in its own transaction (the system's client has no set-based
    form), so that a run stopped part-way counts exactly what was committed."""

    @property
    def title(self) -> str:
        return f"{self.noun} {self.name}"

    def count(self, n: int) -> str:
        """ "3 hopper jobs", "1 hopper job"."""
        one = self.singular or self.noun.removesuffix("s")
        return f"{n} {self.system} {one if n == 1 else self.plural or self.noun}"

    def reason(self, state: str) -> str | None:
        """Why a target in ``state`` is passed over; None when the verb acts on it."""
        return None if state in self.accepts else self.reasons.get(state, state)

    def states_for(self, states: Sequence[str] | None) -> list[str]:
        """A filter's ``--state`` values, checked against what the verb takes."""
        if not states:
            return list(self.filter_states or self.accepts)
        wrong = [s for s in states if s not in self.accepts]
        if wrong:
            why = "".join(f"; {self.reasons[s]}" for s in wrong if s in self.reasons)
            raise InvalidInput(
                f"--state: {self.title} acts on {', '.join(self.accepts)} {self.noun}, "
                f"not {', '.join(wrong)}{why}"
            )
        return list(states)


@dataclass(frozen=True)
class Selection:
    """What the operator chose: ids (typed, or the dashboard's marks) or a filter."""

    ids: tuple[str, ...] = ()
    filter: Mapping[str, Any] = field(default_factory=dict)
    by: str = "filter"
    """``ids``, ``marks`` or ``filter``: how the operator chose."""

    @classmethod
    def of_ids(cls, ids: Sequence[str], by: str = "ids") -> Selection:
        return cls(tuple(dict.fromkeys(ids)), {}, by)

    @classmethod
    def given(
        cls, ids: Sequence[str] | None, where: Mapping[str, Any], resolve: Callable[[str], str]
    ) -> Selection | None:
        """What the command line was given: ids (each typed whole or as a prefix, which
        ``resolve`` makes whole) or filter values, never both; None for neither."""
        if ids and any(where.values()):
            raise InvalidInput("give ids or filter options, not both")
        if ids:
            return cls.of_ids([resolve(i) for i in ids])
        return cls(filter=where) if any(where.values()) else None

    def record(self) -> dict[str, Any]:
        """The selection as the audit trail and a plan file keep it."""
        if self.by != "filter":
            return {"by": self.by, "count": len(self.ids)}
        return {"by": "filter", **{k: v for k, v in self.filter.items() if v}}


@dataclass
class Plan:
    """What a run of ``verb`` over a selection will do, as read now."""

    verb: str
    system: str
    target: str
    """The database: context, redacted DSN, schema."""
    selection: dict[str, Any]
    ids: list[str]
    """The targets the run will act on, in the selection's order."""
    states: dict[str, int]
    """Those targets by state."""
    skipped: dict[str, int]
    """Targets passed over, by reason."""
    effect: str
    sample: list[dict[str, str]] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)

    @property
    def selected(self) -> int:
        return len(self.ids) + sum(self.skipped.values())

    @property
    def digest(self) -> str:
        return digest(self.system, self.target, self.verb, self.ids)

    def question(self, verb: Verb[Any]) -> str:
        """The confirmation both front ends ask: the verb, the count, the database."""
        where = f" on {self.target}" if self.target else ""
        # what the targets are, where they are few enough to name
        labels = list(dict.fromkeys(t["label"] for t in self.sample if t["label"]))
        named = f": {', '.join(labels)}" if labels and len(self.ids) <= SAMPLE else ""
        states = f" ({self.by_state()}{named})" if self.states else ""
        return f"{verb.name.capitalize()} {verb.count(len(self.ids))}{states}{where}?"

    def by_state(self) -> str:
        return ", ".join(f"{n} {s}" for s, n in self.states.items())

    def words(self, verb: Verb[Any]) -> str:
        """The plan as a dry run says it: what the real run will do, then what it passes
        over."""
        by_state = self.by_state()
        text = f"{verb.title} will {verb.effect}: {verb.count(len(self.ids))}"
        text += f" ({by_state})" if by_state else ""
        return text + passed_over(self.skipped) + "".join(f"; {c}" for c in self.caveats)

    def record(self) -> dict[str, Any]:
        """The plan in JSON form: every id, the counts and the digest."""
        return {
            "verb": self.verb,
            "system": self.system,
            "target": self.target,
            "selection": self.selection,
            "selected": self.selected,
            "will": self.effect,
            "states": self.states,
            "skipped": self.skipped,
            "sample": self.sample,
            "caveats": self.caveats,
            "digest": self.digest,
            "ids": self.ids,
        }


@dataclass
class Result:
    """What a run did: one shape on every system (``-o json``, the audit record)."""

    verb: str
    system: str
    target: str
    selected: int
    done: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    stopped_part_way: bool = False
    ids: list[str] = field(default_factory=list)
    """The ids the run changed, every one of them."""
    plan_digest: str | None = None
    """The plan file's digest when the run was ``--plan FILE``."""
    error: str | None = None
    """Why it stopped part-way."""

    def record(self) -> dict[str, Any]:
        # the fields as they are: asdict would deep-copy every id
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def words(self, verb: Verb[Any]) -> str:
        text = f"{verb.past} {verb.count(self.done)}"
        if self.batches > 1:
            text += f" in {self.batches} batches"
        return text + passed_over(self.skipped)


def passed_over(skipped: Mapping[str, int]) -> str:
    """ "; skipped 3 (2 running, 1 gone)", or nothing."""
    if not skipped:
        return ""
    reasons = ", ".join(f"{n} {r}" for r, n in sorted(skipped.items(), key=lambda x: -x[1]))
    return f"; skipped {sum(skipped.values())} ({reasons})"


class Stopped(Exception):
    """A run stopped part-way: ``result`` says what it committed, ``__cause__`` why."""

    def __init__(self, result: Result) -> None:
        super().__init__("stopped part-way")
        self.result = result


def digest(system: str, target: str, verb: str, ids: Sequence[str]) -> str:
    """What ties a plan file to its database, verb and exact set of ids."""
    text = json.dumps([system, target, verb, list(ids)], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _filtered(handle: H, verb: Verb[H], where: Mapping[str, Any]) -> Iterator[Target]:
    after: str | None = None
    while True:
        page = verb.page(handle, where, after, BATCH)
        yield from page
        if len(page) < BATCH:
            return
        after = page[-1].id


def _looked_up(handle: H, verb: Verb[H], ids: Sequence[str]) -> Iterator[Target]:
    """The ids' current states, in the order given (a missing one: ``gone``)."""
    for at in range(0, len(ids), BATCH):
        chunk = ids[at : at + BATCH]
        found = {t.id: t for t in verb.lookup(handle, chunk)}
        yield from (found.get(i, Target(i, GONE)) for i in chunk)


def require_named(handle: H, verb: Verb[H], names: Sequence[str]) -> None:
    """Names the operator typed (a queue's) must each name something: one that names
    nothing is a typo to say (exit 3, nothing planned or written), not a target gone
    since it was listed, as an id that vanished is."""
    missing = [t.id for t in _looked_up(handle, verb, names) if t.state == GONE]
    if missing:
        one = verb.singular or verb.noun.removesuffix("s")
        raise NoSuchName(verb.title, f"no {one} {', '.join(repr(n) for n in missing)}")


def plan(
    handle: H, verb: Verb[H], selection: Selection, target: str, max_targets: int = MAX_TARGETS
) -> Plan:
    """What a run over ``selection`` will do, as read now. Refused (exit 2) past
    ``max_targets``; refused (exit 3) when nothing selected is in a state the verb
    takes, naming why."""
    if max_targets < 1:
        raise InvalidInput("--max must be at least 1")
    if selection.by == "filter":
        where = dict(selection.filter)
        where["states"] = verb.states_for(where.get("states"))
        targets: Iterator[Target] = _filtered(handle, verb, where)
    else:
        targets = _looked_up(handle, verb, selection.ids)
    ids: list[str] = []
    states: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    sample: list[dict[str, str]] = []
    for t in targets:
        reason = GONE if t.state == GONE else verb.reason(t.state)
        if reason is not None:
            skipped[reason] += 1
            continue
        if len(ids) == max_targets:
            raise InvalidInput(
                f"more than {max_targets} {verb.noun} match: narrow the selection or raise --max"
            )
        ids.append(t.id)
        states[t.state] += 1
        if len(sample) < SAMPLE:
            sample.append({"id": t.id, "state": t.state, "label": t.label})
    if not ids:
        what = f": {passed_over(skipped).removeprefix('; ')}" if skipped else ""
        raise WrongState(verb.title, f"nothing to {verb.name}{what}")
    caveats: list[str] = []
    # read a batch at a time (a read of every id at once holds them all as parameters),
    # and only until enough are found to show
    at = 0
    while verb.caveats is not None and at < len(ids) and len(caveats) < SAMPLE:
        caveats += [c for c in verb.caveats(handle, ids[at : at + BATCH]) if c not in caveats]
        at += BATCH
    return Plan(
        verb.title,
        verb.system,
        target,
        selection.record(),
        ids,
        dict(states),
        dict(skipped),
        verb.effect,
        sample,
        caveats[:SAMPLE],
    )


def run(
    handle: H,
    verb: Verb[H],
    plan: Plan,
    on_batch: Callable[[Result], None] | None = None,
    from_file: bool = False,
) -> Result:
    """The plan's ids in batches, each target checked again by the write; ``on_batch``
    sees the result after each committed batch."""
    result = Result(
        plan.verb,
        plan.system,
        plan.target,
        plan.selected,
        skipped=dict(plan.skipped),
        plan_digest=plan.digest if from_file else None,
    )
    skipped: Counter[str] = Counter(plan.skipped)
    size = verb.batch or BATCH
    try:
        for at in range(0, len(plan.ids), size):
            batch = plan.ids[at : at + size]
            written = verb.write(handle, batch)
            done = set(written.done)
            missed = [i for i in batch if i not in done and i not in written.refused]
            skipped.update(written.refused.values())
            for t in _looked_up(handle, verb, missed) if missed else ():
                skipped[GONE if t.state == GONE else verb.reason(t.state) or CHANGED] += 1
            result.ids += [i for i in batch if i in done]
            result.done = len(result.ids)
            result.batches += 1
            result.skipped = dict(skipped)
            if on_batch is not None:
                on_batch(result)
    except BaseException as exc:
        result.stopped_part_way = True
        result.error = str(exc) or type(exc).__name__
        raise Stopped(result) from exc
    return result


PLAN_KEYS = ("verb", "system", "target", "ids", "digest")


def save(plan: Plan, path: Path) -> None:
    """``--plan-out``: the plan as JSON, for ``--plan`` to run exactly."""
    path.write_text(json.dumps(plan.record(), indent=1) + "\n", encoding="utf-8")


def load(path: Path, verb: Verb[Any], target: str) -> Plan:
    """``--plan FILE``: the plan it holds, refused (exit 2) when it is not a plan of this
    verb on this database or its ids do not match its digest."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"--plan: {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(record, dict) or any(k not in record for k in PLAN_KEYS):
        raise InvalidInput(f"--plan: {path} is not a plan written by --plan-out")
    if (record["system"], record["verb"]) != (verb.system, verb.title):
        raise InvalidInput(
            f"--plan: {path} is a plan of {record['system']} {record['verb']}, "
            f"not {verb.system} {verb.title}"
        )
    if record["target"] != target:
        raise InvalidInput(f"--plan: {path} was planned on {record['target']}, not {target}")
    ids = record["ids"]
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InvalidInput(f"--plan: {path} is not a plan written by --plan-out")
    if digest(verb.system, target, verb.title, ids) != record["digest"]:
        raise InvalidInput(f"--plan: {path}: its ids do not match its digest")
    return Plan(
        verb.title,
        verb.system,
        target,
        {"by": "plan", "file": str(path), "digest": record["digest"]},
        ids,
        {},
        {},
        verb.effect,
    )
