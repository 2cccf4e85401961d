"""The log store notebooks' interactive controls, each an Explorer over a pure callback.

- :func:`tree_explorer` (notebook 09): a slider over the tree demo's
  operations; shows the tree above the log after that many of them;
- :func:`logstore_crash_explorer` (notebook 10): crash the bank workload
  after its k-th disk write, keeping nothing, everything or a torn part of
  the unsynced writes, then step through recovery's phases.

Tests drive them from code: ``explorer.controls["after_write"].value = 5``
and assert on ``explorer.result``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.logstore_demo import KEEP_MODES, TREE_OPS, bank_writes, logstore_crash_demo, tree_step
from minidb.viz.widgets import Explorer, show_figure_and_text


def tree_explorer() -> Explorer:
    controls = {"step": widgets.IntSlider(value=len(TREE_OPS), min=0, max=len(TREE_OPS), description="operations")}
    return Explorer(tree_step, controls, show_figure_and_text)


def logstore_crash_explorer() -> Explorer:
    writes = len(bank_writes())
    controls = {
        "after_write": widgets.IntSlider(value=writes - 2, min=1, max=writes, description="crash after write"),
        "keep": widgets.Dropdown(options=list(KEEP_MODES), value="nothing", description="unsynced kept"),
        "phase": widgets.IntSlider(value=10, min=0, max=10, description="recovery phase"),
    }
    return Explorer(logstore_crash_demo, controls, show_figure_and_text)


__all__ = ["tree_explorer", "logstore_crash_explorer"]
