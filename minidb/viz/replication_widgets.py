"""Notebook 13's interactive control: an Explorer over :func:`~minidb.viz.replication_demo.group_step`.

:func:`group_explorer`: a slider over the steps of a script (default
:data:`~minidb.viz.replication_demo.SCRIPT`) and a choice of trouble for
replica n3 (none, cut off, slow); shows the group's stream after that many
operations and what each commit did. Tests drive it from code:
``explorer.controls["trouble"].value = "cut off n3"``.
"""

from __future__ import annotations

import ipywidgets as widgets

from minidb.viz.replication_demo import OPS, SCRIPT, TROUBLES, group_step
from minidb.viz.script import checked
from minidb.viz.widgets import Explorer, show_figure_and_text, step_slider


def group_explorer(script=SCRIPT) -> Explorer:
    operations = checked(script, OPS)
    group_step(0, operations)  # the whole script checked now, before any control is shown
    controls = {
        "step": step_slider(len(operations)),
        "trouble": widgets.Dropdown(options=list(TROUBLES), value="none", description="trouble"),
    }
    return Explorer(lambda step, trouble: group_step(step, operations, trouble), controls, show_figure_and_text)


__all__ = ["group_explorer"]
