"""The lock notebooks' interactive control: a slider over the steps of an editable script.

:func:`lock_explorer` (the end of ``05_locks.ipynb`` and ``05b_deadlocks.ipynb``)
takes the notebook's ``script`` (see :mod:`minidb.viz.locks_demo`) and the lock
manager's settings; moving the slider to step ``k`` replays the first ``k``
operations (real threads, scripted) through the pure callback
:func:`~minidb.viz.locks_demo.lock_step` and shows the lock table, the
waits-for graph, the digests and what the step did. A bad script is refused
when the control is built, with the step named. Tests set
``explorer.controls["step"].value`` and read ``explorer.result``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from minidb.viz.locks_demo import SCRIPT, lock_step, parsed
from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider


def lock_explorer(script: Sequence[Sequence[object]] = SCRIPT, step: int | None = None,
                  **settings: object) -> Explorer:
    """A slider from 0 to ``len(script)`` (starting at ``step``, or the end) over ``lock_step``."""
    steps = len(parsed(script))
    return Explorer(partial(lock_step, script=list(script), **settings), {"step": step_slider(steps, step)},
                    show_figure_and_text)
