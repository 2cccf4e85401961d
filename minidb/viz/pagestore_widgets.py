"""The page store notebooks' interactive controls, each an Explorer over a pure callback.

- :func:`page_explorer` (``02_pages.ipynb``): a slider over the slotted-page
  script of :mod:`minidb.viz.page_demo`;
- :func:`volume_explorer` (``03_volume_extents.ipynb``): a slider that applies
  the volume operations of :mod:`minidb.viz.volume_demo` one at a time,
  showing the extent map and the log entries each one wrote;
- :func:`buffer_pool_explorer` (``04_buffer_pool.ipynb``): a slider over the
  fixes of :mod:`minidb.viz.bufferpool_demo`, showing frames, the clock's
  last sweep and what reached the disk.

Tests set ``explorer.controls["step"].value`` and read ``explorer.result``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.widgets import Explorer, show_figure_and_text


def _step_slider(steps: int, value: int, description: str = "step") -> widgets.IntSlider:
    return widgets.IntSlider(value=value, min=0, max=steps, description=description)


def page_explorer() -> Explorer:
    from minidb.viz.page_demo import STEPS, page_step

    return Explorer(page_step, {"step": _step_slider(STEPS, STEPS)}, show_figure_and_text)


def volume_explorer() -> Explorer:
    from minidb.viz.volume_demo import STEPS, volume_step

    return Explorer(volume_step, {"step": _step_slider(STEPS, 1)}, show_figure_and_text)


def buffer_pool_explorer() -> Explorer:
    from minidb.viz.bufferpool_demo import STEPS, pool_step

    return Explorer(pool_step, {"step": _step_slider(STEPS, STEPS)}, show_figure_and_text)
