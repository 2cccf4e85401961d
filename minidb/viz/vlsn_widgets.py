"""Notebook 12's interactive control, an Explorer over a pure callback.

:func:`tradeoff_explorer`: sliders over the stride and the most offsets a
bucket keeps; shows, for a fixed replicated log of 600 VLSNs, the mappings
the index keeps (space) against the log entries a lookup reads (time).
Tests drive it from code: ``explorer.controls["stride"].value = 50`` and
assert on ``explorer.result`` (a :class:`~minidb.viz.vlsn_demo.TradeoffResult`).
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.vlsn_demo import tradeoff
from minidb.viz.widgets import Explorer, show_figure_and_text

MAX_MAPPINGS_CHOICES = (2, 4, 8, 16, 64, 1000)


def tradeoff_explorer() -> Explorer:
    controls = {
        "stride": widgets.IntSlider(value=10, min=1, max=100, description="stride"),
        "max_mappings": widgets.SelectionSlider(options=list(MAX_MAPPINGS_CHOICES), value=1000,
                                                description="max mappings"),
    }
    return Explorer(tradeoff, controls, show_figure_and_text)


__all__ = ["tradeoff_explorer", "MAX_MAPPINGS_CHOICES"]
