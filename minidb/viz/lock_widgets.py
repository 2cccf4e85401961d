"""The lock notebook's interactive control: a scenario and a step, over a pure callback.

:func:`lock_explorer` (``05_locks.ipynb``) offers the scenarios of
:mod:`minidb.viz.locks_demo` in a drop-down and a slider over their steps;
each change replays the scenario up to the step (real threads, scripted) and
shows the lock table, the waits-for graph, the digests and what the step did.
Tests set ``explorer.controls["scenario"].value`` and
``explorer.controls["step"].value`` and read ``explorer.result``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.locks_demo import SCENARIOS, LockStep, lock_step, steps_of
from minidb.viz.widgets import Explorer, show_figure_and_text


def scenario_step(scenario: str, step: int) -> LockStep:
    """The pure callback: ``lock_step`` with the step clamped to the scenario's length."""
    return lock_step(scenario, max(0, min(step, steps_of(scenario))))


def lock_explorer(scenario: str = "cycle", step: int | None = None) -> Explorer:
    longest = max(steps_of(name) for name in SCENARIOS)
    slider = widgets.IntSlider(value=steps_of(scenario) if step is None else step, min=0, max=longest,
                               description="step")
    chooser = widgets.Dropdown(options=list(SCENARIOS), value=scenario, description="scenario")
    return Explorer(scenario_step, {"scenario": chooser, "step": slider}, show_figure_and_text)
