"""A hopper workflow's dependency graph, drawn by ``qctl.core.graph`` for ``workflows
show`` and the dashboard's workflow screen. The graph is the batch's ``edges`` (flow.go
WorkflowInsert keeps the whole graph there; ``hopper_job_deps`` only holds the edges
not yet satisfied)."""

from __future__ import annotations

from dataclasses import dataclass

from qctl.core.graph import Rendering, layout, render
from qctl.core.sanitize import sanitize
from qctl.systems.hopper.reads import Batch, Job


@dataclass
class Drawn:
    order: list[str]
    """Job ids in reading order (roots first)."""
    rendering: Rendering
    states: dict[str, str]
    """Each drawn job's state ("?" for an id only an edge names: a job gone from
    history)."""


def label(job_id: str, kind: str, state: str) -> str:
    """A node: the job's kind, the end of its id (kinds repeat in a workflow; a
    workflow's UUIDv7s share their start, their time), its state."""
    return f"{sanitize(kind)[:40]} …{job_id[-6:]} [{state}]"


def draw(batch: Batch, jobs: list[Job]) -> Drawn:
    kinds = {str(j.id): j.kind for j in jobs}
    states = {str(j.id): j.state for j in jobs}
    edges = [(str(a), str(b)) for a, b in batch.edges or []]
    keys = list(kinds) + [k for e in edges for k in e if k not in kinds]
    for key in keys:
        states.setdefault(key, "?")
    labels = {k: label(k, kinds.get(k, "?"), states[k]) for k in keys}
    lay = layout(keys, edges)
    return Drawn(lay.order(), render(lay, labels), states)
