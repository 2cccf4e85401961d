"""Notebook 14's interactive control: an Explorer over :func:`~minidb.viz.syncup_demo.master_dies`.

:func:`failover_explorer`: a slider choosing after which of the script's
writes and partitions the master dies (default
:data:`~minidb.viz.syncup_demo.SCRIPT`; the script's own kill, election and
rejoin are placed by the slider instead); shows every node's log once the
old master has rejoined, and the outcome: who won, what was rolled back,
which writes were acknowledged and whether any was lost. Tests drive it
from code: ``explorer.controls["after"].value = 1``.
"""

from __future__ import annotations

from functools import partial

from minidb.viz.syncup_demo import FAILOVER_OPS, SCRIPT, failover_script, master_dies
from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider


def failover_explorer(script=SCRIPT) -> Explorer:
    scenario = failover_script(script)  # the whole script checked now, before any control is shown
    dies = scenario.index(("elect",)) - 1  # the kill's place: after that many of the script's other operations
    controls = {"after": step_slider(len(scenario) - len(FAILOVER_OPS), dies,
                                     description="master dies after operation")}
    return Explorer(partial(master_dies, script=script), controls, show_figure_and_text)


__all__ = ["failover_explorer"]
