"""Notebook 12's interactive controls, each an Explorer over a pure callback.

- :func:`index_explorer`: sliders over the steps of a script (default
  :data:`~minidb.viz.vlsn_demo.SCRIPT`: appends, a transaction, a
  matchpoint, a checkpoint) and the index's stride and most offsets a
  bucket; shows the index after that many operations. The script is
  checked when the explorer is built, so a typo is reported with its step;
- :func:`tradeoff_explorer`: sliders over the stride and the most offsets a
  bucket keeps; shows, for a fixed replicated log of 600 VLSNs, the mappings
  the index keeps (space) against the log entries a lookup reads (time).

Tests drive them from code: ``explorer.controls["stride"].value = 50`` and
assert on ``explorer.result``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.script import checked
from minidb.viz.vlsn_demo import OPS, SCRIPT, index_step, tradeoff
from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider

MAX_MAPPINGS_CHOICES = (2, 4, 8, 16, 64, 1000)


def tradeoff_explorer() -> Explorer:
    controls = {
        "stride": widgets.IntSlider(value=10, min=1, max=100, description="stride"),
        "max_mappings": widgets.SelectionSlider(options=list(MAX_MAPPINGS_CHOICES), value=1000,
                                                description="max mappings"),
    }
    return Explorer(tradeoff, controls, show_figure_and_text)


def index_explorer(script=SCRIPT) -> Explorer:
    operations = checked(script, OPS)
    index_step(0, operations)  # the whole script checked now, before any control is shown
    controls = {
        "step": step_slider(len(operations)),
        "stride": widgets.IntSlider(value=3, min=1, max=10, description="stride"),
        "max_mappings": widgets.SelectionSlider(options=list(MAX_MAPPINGS_CHOICES), value=4,
                                                description="max mappings"),
    }
    return Explorer(lambda step, stride, max_mappings: index_step(step, operations, stride, max_mappings), controls,
                    show_figure_and_text)


__all__ = ["index_explorer", "tradeoff_explorer", "MAX_MAPPINGS_CHOICES"]
