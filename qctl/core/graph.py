"""Layered layout and text drawing of a dependency graph (pure; no Textual): azync's DAG
runs and hopper's workflows.

``layout(keys, deps)`` assigns every task a layer (longest path from its roots, so a task
sits right of everything it depends on) and a row (barycentre ordering, then rows that
follow the parents so chains stay straight). Edges spanning several layers get dummy
waypoints, as in Sugiyama's method, so every drawn edge joins adjacent layers. Weakly
connected parts (for example a compensation chain of one task) are laid out separately
and stacked.

``render(layout, labels)`` draws the layout left to right with box-drawing characters:
each edge leaves its source, runs down or up its target's own vertical track in the
gutter, and enters the target with an arrow, so fan-out and fan-in stay readable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

DUMMY = "\x00"
"""Prefix of waypoint nodes (never a task key: keys are printable)."""

_UP, _DOWN, _LEFT, _RIGHT = 1, 2, 4, 8
_BOX = {
    0: " ",
    _UP: "│",
    _DOWN: "│",
    _UP | _DOWN: "│",
    _LEFT: "─",
    _RIGHT: "─",
    _LEFT | _RIGHT: "─",
    _DOWN | _RIGHT: "┌",
    _DOWN | _LEFT: "┐",
    _UP | _RIGHT: "└",
    _UP | _LEFT: "┘",
    _UP | _DOWN | _RIGHT: "├",
    _UP | _DOWN | _LEFT: "┤",
    _DOWN | _LEFT | _RIGHT: "┬",
    _UP | _LEFT | _RIGHT: "┴",
    _UP | _DOWN | _LEFT | _RIGHT: "┼",
}
ARROW = "▶"


@dataclass
class Part:
    """One weakly connected part: its layers (top-to-bottom order) and node rows."""

    layers: list[list[str]]
    rows: dict[str, int]
    edges: list[tuple[str, str]]
    """(from, to) between adjacent layers, dummies included."""


@dataclass
class Layout:
    parts: list[Part] = field(default_factory=list)

    def layer_of(self, key: str) -> int:
        for part in self.parts:
            for i, layer in enumerate(part.layers):
                if key in layer:
                    return i
        raise KeyError(key)

    def order(self) -> list[str]:
        """Task keys in reading order: part by part, layer by layer, top to bottom."""
        out: list[str] = []
        for part in self.parts:
            for layer in part.layers:
                out.extend(sorted((k for k in layer if not is_dummy(k)), key=part.rows.__getitem__))
        return out


def is_dummy(key: str) -> bool:
    return key.startswith(DUMMY)


def layout(keys: Sequence[str], deps: Iterable[tuple[str, str]]) -> Layout:
    """Lay out tasks ``keys`` with ``deps`` as (task_key, depends_on_key) pairs.

    Keys only named by a dependency are added; self-loops and cycles (never produced by a
    valid DAG) do not break it: cyclic remainders go to extra layers and back edges are
    left undrawn.
    """
    nodes = list(dict.fromkeys(keys))
    edges: list[tuple[str, str]] = []
    for task, dep in deps:
        for k in (dep, task):
            if k not in nodes:
                nodes.append(k)
        if task != dep and (dep, task) not in edges:
            edges.append((dep, task))
    return Layout([_layout_part(p, edges) for p in _components(nodes, edges)])


def _components(nodes: list[str], edges: list[tuple[str, str]]) -> list[list[str]]:
    parent = {n: n for n in nodes}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra
    groups: dict[str, list[str]] = {}
    for n in nodes:  # parts in the order their first key appears
        groups.setdefault(find(n), []).append(n)
    return list(groups.values())


def _layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    preds: dict[str, list[str]] = defaultdict(list)
    indeg = dict.fromkeys(nodes, 0)
    succs: dict[str, list[str]] = defaultdict(list)
    for a, b in edges:
        preds[b].append(a)
        succs[a].append(b)
        indeg[b] += 1
    layer: dict[str, int] = {}
    ready = [n for n in nodes if indeg[n] == 0]
    while ready:
        n = ready.pop(0)
        layer[n] = max((layer[p] + 1 for p in preds[n] if p in layer), default=0)
        for s in succs[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    extra = max(layer.values(), default=-1) + 1
    for n in nodes:  # a cycle: place what is left after everything else
        if n not in layer:
            layer[n] = extra
            extra += 1
    return layer


def _layout_part(nodes: list[str], all_edges: list[tuple[str, str]]) -> Part:
    member = set(nodes)
    edges = [(a, b) for a, b in all_edges if a in member]
    layer = _layers(nodes, edges)
    depth = max(layer.values()) + 1
    layers: list[list[str]] = [[] for _ in range(depth)]
    for n in nodes:
        layers[layer[n]].append(n)
    # Split long edges into unit hops through waypoints; drop back edges.
    hops: list[tuple[str, str]] = []
    for a, b in edges:
        la, lb = layer[a], layer[b]
        if lb <= la:
            continue
        prev = a
        for lvl in range(la + 1, lb):
            w = f"{DUMMY}{a}{DUMMY}{b}{DUMMY}{lvl}"
            layers[lvl].append(w)
            hops.append((prev, w))
            prev = w
        hops.append((prev, b))
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    for a, b in hops:
        preds[b].append(a)
        succs[a].append(b)
    _order(layers, preds, succs)
    return Part(layers, _rows(layers, preds), hops)


def _order(
    layers: list[list[str]], preds: Mapping[str, list[str]], succs: Mapping[str, list[str]]
) -> None:
    """Barycentre sweeps (down, then up) to reduce crossings; stable for ties."""

    def sweep(seq: Iterable[int], neigh: Mapping[str, list[str]], ref: int) -> None:
        for i in seq:
            pos = {n: j for j, n in enumerate(layers[i + ref])}
            current = {n: j for j, n in enumerate(layers[i])}
            layers[i].sort(key=lambda n: (_barycentre(n, neigh, pos, current), current[n]))

    for _ in range(2):
        sweep(range(1, len(layers)), preds, -1)
        sweep(range(len(layers) - 2, -1, -1), succs, +1)


def _barycentre(
    n: str, neigh: Mapping[str, list[str]], pos: Mapping[str, int], current: Mapping[str, int]
) -> float:
    ns = [pos[m] for m in neigh.get(n, []) if m in pos]
    return sum(ns) / len(ns) if ns else float(current[n])


def _rows(layers: list[list[str]], preds: Mapping[str, list[str]]) -> dict[str, int]:
    """Rows two apart in each layer, pulled towards the parents' mean row."""
    rows: dict[str, int] = {}
    for layer in layers:
        prev = -2
        for n in layer:
            ps = [rows[p] for p in preds.get(n, []) if p in rows]
            want = round(sum(ps) / len(ps) / 2) * 2 if ps else 0
            rows[n] = max(prev + 2, want)
            prev = rows[n]
    return rows


@dataclass
class Box:
    line: int
    x: int
    width: int


@dataclass
class Rendering:
    lines: list[str]
    boxes: dict[str, Box]
    """Where each task's label sits, for colouring and selection."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def render(lay: Layout, labels: Mapping[str, str] | None = None) -> Rendering:
    """Draw ``lay``; ``labels`` maps task keys to their text (default: the key)."""
    labels = labels or {}
    lines: list[str] = []
    boxes: dict[str, Box] = {}
    for part in lay.parts:
        if lines:
            lines.append("")
        part_lines, part_boxes = _render_part(part, labels)
        for key, box in part_boxes.items():
            boxes[key] = Box(box.line + len(lines), box.x, box.width)
        lines.extend(part_lines)
    return Rendering(lines, boxes)


def _render_part(part: Part, labels: Mapping[str, str]) -> tuple[list[str], dict[str, Box]]:
    def label(n: str) -> str:
        return "" if is_dummy(n) else labels.get(n, n)

    widths = [max([len(label(n)) for n in layer] + [1]) for layer in part.layers]
    # Each gutter gives one vertical track per source when sources are fewer (fan-out
    # reads as one bus), else one per target (fan-in converges on one bus).
    tracks: list[list[str]] = []
    by_source: list[bool] = []
    for i in range(len(part.layers) - 1):
        hop = [(a, b) for a, b in part.edges if a in part.layers[i]]
        sources, into = {a for a, _ in hop}, {b for _, b in hop}
        by_source.append(len(sources) < len(into))
        ends = sources if by_source[-1] else into
        tracks.append(sorted(ends, key=lambda n: part.rows[n]))
    xs: list[int] = []
    x = 0
    for i, w in enumerate(widths):
        xs.append(x)
        x += w
        if i < len(tracks):
            x += len(tracks[i]) + 3  # stub, tracks, lead-in, arrow
    width = x
    height = max(part.rows.values()) + 1
    bits: dict[tuple[int, int], int] = defaultdict(int)

    def hline(r: int, x1: int, x2: int) -> None:
        for cx in range(x1, x2 + 1):
            bits[(r, cx)] |= (_LEFT if cx > x1 else 0) | (_RIGHT if cx < x2 else 0)

    def vline(cx: int, r1: int, r2: int) -> None:
        lo, hi = min(r1, r2), max(r1, r2)
        for r in range(lo, hi + 1):
            bits[(r, cx)] |= (_UP if r > lo else 0) | (_DOWN if r < hi else 0)

    layer_of = {n: i for i, layer in enumerate(part.layers) for n in layer}
    for a, b in part.edges:
        i = layer_of[a]
        gutter = xs[i] + widths[i]
        track = gutter + 1 + tracks[i].index(a if by_source[i] else b)
        ra, rb = part.rows[a], part.rows[b]
        hline(ra, xs[i] + len(label(a)), track)
        vline(track, ra, rb)
        hline(rb, track, xs[i + 1] - 1)
    for n, i in layer_of.items():
        if is_dummy(n):
            hline(part.rows[n], xs[i] - 1, xs[i] + widths[i])

    grid = [[" "] * width for _ in range(height)]
    for (r, cx), mask in bits.items():
        if cx < width:
            grid[r][cx] = _BOX[mask]
    boxes: dict[str, Box] = {}
    for n, i in layer_of.items():
        if is_dummy(n):
            continue
        r, text = part.rows[n], label(n)
        if i > 0 and any(b == n for _, b in part.edges):
            grid[r][xs[i] - 1] = ARROW
        grid[r][xs[i] : xs[i] + len(text)] = list(text)
        boxes[n] = Box(r, xs[i], len(text))
    return ["".join(row).rstrip() for row in grid], boxes
