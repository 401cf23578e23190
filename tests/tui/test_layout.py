"""The pure DAG layout and its text drawing (qctl.systems.azync.graph)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from qctl.core.graph import ARROW, is_dummy, layout, render


def draw(keys: list[str], deps: list[tuple[str, str]]) -> str:
    return render(layout(keys, deps)).text


def test_chain_is_one_straight_line() -> None:
    lay = layout(["a", "b", "c"], [("b", "a"), ("c", "b")])
    assert [lay.layer_of(k) for k in "abc"] == [0, 1, 2]
    assert draw(["a", "b", "c"], [("b", "a"), ("c", "b")]) == "a───▶b───▶c"


def test_diamond_shows_fan_out_and_fan_in() -> None:
    keys = ["root", "fan_a", "fan_b", "sink"]
    deps = [("fan_a", "root"), ("fan_b", "root"), ("sink", "fan_a"), ("sink", "fan_b")]
    lay = layout(keys, deps)
    assert [lay.layer_of(k) for k in keys] == [0, 1, 1, 2]
    assert draw(keys, deps) == ("root─┬─▶fan_a─┬─▶sink\n     │        │\n     └─▶fan_b─┘")


def test_wide_fan_out_uses_one_bus_per_side() -> None:
    parts = [f"t{i}" for i in range(5)]
    deps = [(p, "s") for p in parts] + [("end", p) for p in parts]
    text = draw(["s", *parts, "end"], deps)
    assert text == (
        "s─┬─▶t0─┐\n"
        "  │     │\n"
        "  ├─▶t1─┤\n"
        "  │     │\n"
        "  ├─▶t2─┼─▶end\n"
        "  │     │\n"
        "  ├─▶t3─┤\n"
        "  │     │\n"
        "  └─▶t4─┘"
    )
    assert text.count(ARROW) == 6


def test_long_edges_get_waypoints_and_are_drawn() -> None:
    keys = ["a", "b", "c", "d"]
    deps = [("b", "a"), ("c", "b"), ("d", "a"), ("d", "c")]
    lay = layout(keys, deps)
    assert lay.layer_of("d") == 3
    waypoints = [n for part in lay.parts for layer in part.layers for n in layer if is_dummy(n)]
    assert len(waypoints) == 2  # a->d crosses layers 1 and 2
    assert draw(keys, deps) == ("a─┬─▶b────▶c─┬─▶d\n  │          │\n  └──────────┘")


def test_compensation_chain_and_single_compensation_are_separate_parts() -> None:
    # A chain of compensations has an edge comp[i] -> comp[i-1]; one compensation has none.
    assert draw(["a", "b", "comp:b", "comp:a"], [("b", "a"), ("comp:a", "comp:b")]) == (
        "a───▶b\n\ncomp:b───▶comp:a"
    )
    keys = ["root", "fan_a", "fan_b", "sink", "comp:root"]
    deps = [("fan_a", "root"), ("fan_b", "root"), ("sink", "fan_a"), ("sink", "fan_b")]
    lay = layout(keys, deps)
    assert len(lay.parts) == 2
    assert render(lay).lines[-1] == "comp:root"


def test_disconnected_parts_keep_first_appearance_order() -> None:
    lay = layout(["x", "a", "b", "y"], [("b", "a")])
    assert [sorted(n for layer in p.layers for n in layer) for p in lay.parts] == [
        ["x"],
        ["a", "b"],
        ["y"],
    ]
    assert render(lay).text == "x\n\na───▶b\n\ny"


def test_labels_and_boxes_locate_each_task() -> None:
    lay = layout(["a", "b"], [("b", "a")])
    r = render(lay, {"a": "a [succeeded]", "b": "b [pending]"})
    assert r.lines == ["a [succeeded]───▶b [pending]"]
    for key, label in [("a", "a [succeeded]"), ("b", "b [pending]")]:
        box = r.boxes[key]
        assert r.lines[box.line][box.x : box.x + box.width] == label


def test_unknown_keys_self_loops_and_cycles_do_not_break() -> None:
    lay = layout(["a"], [("b", "a"), ("a", "a")])
    assert lay.order() == ["a", "b"]
    cyc = layout(["a", "b", "c"], [("b", "a"), ("a", "b"), ("c", "b")])
    assert sorted(cyc.order()) == ["a", "b", "c"]
    assert render(cyc).text  # back edges are left undrawn, never a crash
    assert render(layout([], [])).lines == []


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=9).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(
                    lambda e: e[0] > e[1]
                ),
                max_size=14,
            ),
        )
    )
)
def test_random_dags_place_tasks_after_their_deps(spec: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = spec
    keys = [f"k{i}" for i in range(n)]
    deps = [(keys[a], keys[b]) for a, b in edges]
    lay = layout(keys, deps)
    for task, dep in deps:
        assert lay.layer_of(task) > lay.layer_of(dep)
    r = render(lay)
    assert set(r.boxes) == set(keys)
    # Labels never overlap each other.
    cells = [(b.line, x) for b in r.boxes.values() for x in range(b.x, b.x + b.width)]
    assert len(cells) == len(set(cells))
