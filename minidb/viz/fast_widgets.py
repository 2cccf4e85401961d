"""The control at the end of ``17_making_it_fast.ipynb``: which implementation, how large a workload.

:func:`fast_explorer` takes the notebook's ``script`` (see :mod:`minidb.viz.fast`);
choosing ``reference`` or ``fast`` and how many times the script runs calls
the pure callback :func:`~minidb.viz.fast.fast_step`, which profiles both and
shows the chosen one's calls per function against the reference's, with the
totals. A bad script is refused when the control is built, with the step
named. Tests set ``explorer.controls["which"].value`` and read ``explorer.result``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import ipywidgets as widgets

from minidb.viz.fast import IMPLS, SCRIPT, fast_step, parsed
from minidb.viz.widgets import Explorer, show_figure_and_text

MOST_TIMES = 20


def fast_explorer(script: Sequence[Sequence[object]] = SCRIPT, which: str = "fast", times: int = 1) -> Explorer:
    """A choice of implementation and a slider of 1 to MOST_TIMES repetitions of ``script``, over ``fast_step``."""
    parsed(script)  # a bad script is refused now, with its step
    controls = {
        "which": widgets.Dropdown(options=list(IMPLS), value=which, description="implementation"),
        "times": widgets.IntSlider(value=max(1, min(times, MOST_TIMES)), min=1, max=MOST_TIMES,
                                   description="times the script runs"),
    }
    return Explorer(partial(fast_step, script=list(script)), controls, show_figure_and_text)
