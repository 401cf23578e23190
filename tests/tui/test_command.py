"""The ``:`` command line and the state picker (``t``), driven by pilot on azync's
dashboard over both backends, and declared the same way on every registered system:
the names complete from the system's tabs and the states its package declares."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from qctl import systems
from qctl.systems.azync.tui import DagGraphScreen, DagsPane, JobsPane
from qctl.tui.app import MainScreen, QctlTop
from qctl.tui.panes import StatePicked
from qctl.tui.widgets import CommandPrompt, StatePicker
from qctl_store.types import DAGParams, DAGState, DAGTask, EnqueueParams, JobState
from tests.tui.helpers import SIZE, row_keys, until

pytestmark = pytest.mark.timeout(120)


def kind() -> str:
    return f"cmd_{uuid.uuid4().hex[:10]}"


def notices(app: QctlTop) -> list[str]:
    return [str(n.message) for n in app._notifications]


def active_tab(app: QctlTop) -> str:
    screen = app.screen
    return screen.active_tab() if isinstance(screen, MainScreen) else ""


async def command(pilot: Any, app: QctlTop, *keys: str) -> None:
    """``:``, then ``keys`` typed in the prompt, then enter."""
    await pilot.press("colon")
    await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
    await pilot.press(*keys, "enter")
    await until(pilot, lambda: not isinstance(app.screen, CommandPrompt))


async def test_command_line_completes_switches_and_narrows(store: Any) -> None:
    k = kind()
    store.enqueue(EnqueueParams(kind=k))
    dag = DAGParams(name=kind(), tasks=[DAGTask("a", kind())])
    store.create_dag(dag)
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.refresh_count >= 1)
        # tab completes the screen's name, then one of its states
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
        field = app.screen.query_one(Input)
        await pilot.press("j", "o", "tab")
        assert field.value == "jobs"
        await pilot.press("space", "d", "e", "tab")
        assert field.value == "jobs dead"
        await pilot.press("enter")
        await until(pilot, lambda: active_tab(app) == "jobs")
        assert app.screen.query_one(JobsPane).state == JobState.DEAD
        # a singular, and a state of another list
        await command(pilot, app, *"dag suspended")
        await until(pilot, lambda: active_tab(app) == "dags")
        assert app.screen.query_one(DagsPane).state == DAGState.SUSPENDED
        await command(pilot, app, *"dags all")
        await until(pilot, lambda: app.screen.query_one(DagsPane).state is None)
        # words that name no state and no id narrow the tab's list
        await command(pilot, app, *f"jobs {k}")
        pane = app.screen.query_one(JobsPane)
        await until(pilot, lambda: active_tab(app) == "jobs" and pane.filter_text == k)
        # an id after a screen, or alone, opens what it names
        await command(pilot, app, *f"dag {dag.id}")
        await until(pilot, lambda: isinstance(app.screen, DagGraphScreen))
        assert app.screen.record_id == dag.id
        # from a detail screen, a screen's name goes back to the tabs
        await command(pilot, app, *"overview")
        await until(pilot, lambda: active_tab(app) == "overview")
        # what names nothing says so in one line
        await command(pilot, app, *"nosuch")
        await until(pilot, lambda: any("no screen 'nosuch'" in n for n in notices(app)))
        said = next(n for n in notices(app) if "no screen 'nosuch'" in n)
        assert "\n" not in said and "jobs" in said
        await command(pilot, app, *"nosuch dead")
        await until(pilot, lambda: any("no screen 'nosuch' on azync" in n for n in notices(app)))
        # esc leaves, nothing changed
        await pilot.press("colon")
        await until(pilot, lambda: isinstance(app.screen, CommandPrompt))
        await pilot.press("j", "escape")
        await until(pilot, lambda: isinstance(app.screen, MainScreen))
        assert active_tab(app) == "overview"


async def test_state_picker_lists_the_declared_states(store: Any) -> None:
    k = kind()
    store.enqueue(EnqueueParams(kind=k))
    app = QctlTop(store, live=False, location="test")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("2")
        pane = app.screen.query_one(JobsPane)
        pane.filter_text = k
        pane.filter_changed()
        await until(pilot, lambda: len(row_keys(app, "#jobs-table")) == 1)
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, StatePicker))
        options = app.screen.query_one(OptionList)
        listed = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert listed == ["all", *JobState]
        assert options.highlighted == listed.index("all")  # the state shown
        # esc leaves the list as it was
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, StatePicker))
        assert pane.state is None
        # arrows and enter pick: scheduled, where the job is not
        await pilot.press("t")
        await until(pilot, lambda: isinstance(app.screen, StatePicker))
        await pilot.press("down", "down", "enter")
        await until(pilot, lambda: pane.state == JobState.SCHEDULED)
        await until(pilot, lambda: row_keys(app, "#jobs-table") == [])
        await pilot.press("t", "a", "enter")
        await until(pilot, lambda: pane.state is None)
        await until(pilot, lambda: len(row_keys(app, "#jobs-table")) == 1)


@pytest.mark.parametrize("system", [s.name for s in systems.systems()])
def test_every_list_with_states_picks_from_its_system(system: str) -> None:
    """Every registered system: each tab names itself on the command line, and each
    list with states offers the states its pane declares, completed by their start."""
    screens = systems.load(systems.get(system).screens)
    with_states = 0
    for tab in screens.tabs:
        assert screens.tab_named(tab.name) is tab
        assert screens.tab_named(tab.name.upper()) is tab
        assert screens.complete(tab.name[:-1] if len(tab.name) > 1 else "") in (tab.name, None)
        pane = screens.pane_class(tab.name)
        if not issubclass(pane, StatePicked):
            assert screens.tab_states(tab) == ()
            continue
        with_states += 1
        states = screens.tab_states(tab)
        assert states and len(set(states)) == len(states)
        for state in states:
            completed = screens.complete(f"{tab.name} {state[:-1]}")
            assert completed is not None and completed.startswith(f"{tab.name} {state[:-1]}")
    assert with_states >= 1, f"{system}: no list picks a state"
