"""The log store notebooks' interactive controls, each an Explorer over a pure callback and a script.

- :func:`tree_explorer` (notebook 09): a slider over the steps of a script
  (default :data:`~minidb.viz.logstore_demo.SCRIPT`); shows the tree above
  the log after that many operations;
- :func:`logstore_crash_explorer` (notebook 10): crash the bank workload (or
  a script) after its k-th disk write, keeping nothing, everything or a torn
  part of the unsynced writes, then step through recovery's phases;
- :func:`eviction_bug_explorer` (notebook 10b): the JE documentation's case 3
  with the evictor's bug on or off, and what a cleaner trusting the
  utilization counts then does.

The script is checked when the explorer is built, so a typo is reported
with its step before any control is shown. Tests drive them from code:
``explorer.controls["after_write"].value = 5`` and assert on ``explorer.result``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.logstore_demo import (
    BANK_SCRIPT,
    KEEP_MODES,
    OPS,
    SCRIPT,
    bank_writes,
    eviction_bug_demo,
    logstore_crash_demo,
    tree_step,
)
from minidb.viz.script import checked
from minidb.viz.widgets import Explorer, crash_slider, keep_dropdown, show_figure_and_text, step_slider


def tree_explorer(script=SCRIPT) -> Explorer:
    operations = checked(script, OPS)
    controls = {"step": step_slider(len(operations))}
    return Explorer(lambda step: tree_step(step, operations), controls, show_figure_and_text)


def logstore_crash_explorer(script=BANK_SCRIPT) -> Explorer:
    operations = checked(script, OPS)
    writes = len(bank_writes(operations))
    controls = {
        "after_write": crash_slider(writes, writes),
        "keep": keep_dropdown(KEEP_MODES, "nothing"),
        "phase": widgets.IntSlider(value=8, min=0, max=10, description="recovery phase"),
    }
    return Explorer(lambda after_write, keep, phase: logstore_crash_demo(after_write, keep, phase, operations),
                    controls, show_figure_and_text)


def eviction_bug_explorer() -> Explorer:
    controls = {"bug": widgets.ToggleButtons(options=[("bug off (JE's rule)", False), ("bug on", True)], value=True,
                                             description="evictor")}
    return Explorer(eviction_bug_demo, controls, show_figure_and_text)


__all__ = ["tree_explorer", "logstore_crash_explorer", "eviction_bug_explorer"]
