"""The page store notebooks' interactive controls, each an Explorer over a pure callback.

- :func:`page_explorer` (``02_pages.ipynb``): a slider over a slotted-page
  script of :mod:`minidb.viz.page_demo` (the notebook's editable one);
- :func:`volume_explorer` (``03_volume_extents.ipynb``): a slider that applies
  a script of volume operations (:mod:`minidb.viz.volume_demo`) one at a time,
  showing the extent map and the log entries each one wrote;
- :func:`buffer_pool_explorer` (``04_buffer_pool.ipynb``): a slider over the
  steps of a script of :mod:`minidb.viz.bufferpool_demo`, showing frames, the
  clock's last sweep and what reached the disk;
- :func:`xct_explorer` (``06_transactions_records.ipynb``): a slider over the
  steps of a transaction script of :mod:`minidb.viz.xct_demo`, showing the log
  in transaction lanes (CLRs and their undo-next) and the file page;
- :func:`recovery_explorer` (``08_aries_recovery.ipynb``): the crash point (any
  write of the simulated disk while a script of
  :mod:`minidb.viz.recovery_demo` runs), what the crash keeps of unsynced
  writes, and how far restart has gone.

The three take the script the notebook shows (their module's ``SCRIPT`` by
default) and check it first, so a bad step is reported before any control
is drawn.

Tests set ``explorer.controls[name].value`` and read ``explorer.result``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import ipywidgets as widgets

from minidb.viz.script import checked
from minidb.viz.widgets import Explorer, crash_slider, keep_dropdown, show_figure_and_text, step_slider


def page_explorer(script: Sequence[Sequence[object]] | None = None) -> Explorer:
    """The slider of ``02_pages.ipynb``: ``script`` (default: the demo's) replayed on a fresh page up to a step."""
    from minidb.viz.page_demo import SCRIPT, page_step

    script = SCRIPT if script is None else script
    return Explorer(partial(page_step, script=script), {"step": step_slider(len(script))},
                    show_figure_and_text)


def volume_explorer(script: Sequence[Sequence[object]] | None = None) -> Explorer:
    """The slider of ``03_volume_extents.ipynb``: ``script`` (default: the demo's) applied to a fresh volume."""
    from minidb.viz.volume_demo import SCRIPT, volume_step

    script = SCRIPT if script is None else script
    return Explorer(partial(volume_step, script=script), {"step": step_slider(len(script), 1)},
                    show_figure_and_text)


def buffer_pool_explorer(script: Sequence[Sequence[Any]] | None = None) -> Explorer:
    """The slider of ``04_buffer_pool.ipynb``: the pool after each step of ``script``."""
    from minidb.viz.bufferpool_demo import OPS, SCRIPT, pool_step

    script = checked(SCRIPT if script is None else script, OPS)
    return Explorer(partial(pool_step, script=script), {"step": step_slider(len(script))},
                    show_figure_and_text)


def show_xct_step(result) -> None:
    """Show an :class:`~minidb.viz.xct_demo.XctStep`: the log in lanes, the page, the entries."""
    from IPython.display import display

    display(result.figure)
    display(result.page_figure)
    print(result.summary())


def xct_explorer(script: Sequence[Sequence[Any]] | None = None) -> Explorer:
    """The slider of ``06_transactions_records.ipynb``: the transaction script, step by step."""
    from minidb.viz.xct_demo import OPS, SCRIPT, xct_step

    script = checked(SCRIPT if script is None else script, OPS)
    return Explorer(partial(xct_step, script=script), {"step": step_slider(len(script))},
                    show_xct_step)


def recovery_explorer(script: Sequence[Sequence[Any]] | None = None) -> Explorer:
    """The crash-recovery control of ``08_aries_recovery.ipynb``: crash point, what survives, restart phase."""
    from minidb.viz.recovery_demo import KEEP_MODES, PHASES, SCRIPT, last_write, recovery_view

    script = SCRIPT if script is None else script
    writes = last_write(script)
    controls = {
        "crash_write": crash_slider(writes, writes // 2),
        "keep": keep_dropdown(KEEP_MODES, "nothing"),
        "phase": widgets.ToggleButtons(options=list(PHASES), value="restarted", description="restart"),
    }
    return Explorer(partial(recovery_view, script=script), controls, show_figure_and_text)
