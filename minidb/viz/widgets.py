"""Interactive controls for the notebooks, built on pure callbacks.

An :class:`Explorer` joins ipywidgets controls to a pure function: whenever a
control changes, the function is called with all control values as keyword
arguments, its result is kept in ``explorer.result`` and shown in an output
area. Tests drive an explorer from code (``explorer.controls["k"].value = 3``)
and assert on ``explorer.result``; an exception in the callback propagates to
the code that set the value, instead of vanishing as it would inside
``ipywidgets.interact``.

Every control must work with the mouse on a laptop screen (1366 x 768): a
slider whose track shares a row with other controls shrinks to nothing in a
narrow window (only its handle is left, movable by the keyboard alone). So
each slider gets a row of its own, as wide as the output area
(:data:`SLIDER_LAYOUT`), and the other controls (menus) share one row under
the sliders; every label is shown whole (``description_width="initial"``).
The browser test (``tests/browser``) measures the track at that screen size
and moves it with a click.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import ipywidgets as widgets
from IPython.display import display

#: A slider's row: the whole width of the output area, so its track is long enough to click on.
SLIDER_LAYOUT = {"width": "100%", "max_width": "1100px"}
SLIDERS = (widgets.IntSlider, widgets.FloatSlider, widgets.SelectionSlider)


class Explorer:
    def __init__(
        self,
        callback: Callable[..., Any],
        controls: dict[str, widgets.ValueWidget],
        show: Callable[[Any], None],
    ):
        self.callback = callback
        self.controls = controls
        self.show = show
        self.output = widgets.Output()
        self.result: Any = None
        for control in controls.values():
            control.style.description_width = "initial"  # the whole label, never "crash afte..."
            if isinstance(control, SLIDERS):
                control.layout = widgets.Layout(**SLIDER_LAYOUT)
            control.observe(self._update, names="value")
        self._update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def _update(self, change: object = None) -> None:
        self.result = self.callback(**self.values())
        with self.output:
            self.output.clear_output(wait=True)
            self.show(self.result)

    def widget(self) -> widgets.Widget:
        sliders = [c for c in self.controls.values() if isinstance(c, SLIDERS)]
        others = [c for c in self.controls.values() if not isinstance(c, SLIDERS)]
        rows = [*sliders, *([widgets.HBox(others)] if others else [])]
        return widgets.VBox([*rows, self.output], layout=widgets.Layout(width="100%"))

    def _ipython_display_(self) -> None:
        display(self.widget())


def step_slider(steps: int, value: int | None = None, description: str = "step") -> widgets.IntSlider:
    """A slider over a script's steps, 0 (nothing run) to ``steps``; at ``value`` (clamped), or the end."""
    value = steps if value is None else max(0, min(value, steps))
    return widgets.IntSlider(value=value, min=0, max=steps, description=description)


def crash_slider(writes: int, value: int) -> widgets.IntSlider:
    """The crash point of a demo: after write 1 .. ``writes`` of its disk (a browser test finds it by its label)."""
    return widgets.IntSlider(value=max(1, min(value, writes)), min=1, max=writes, description="crash after write")


def keep_dropdown(modes: Iterable[str], value: str) -> widgets.Dropdown:
    """What a crash keeps of the writes that were not yet synced."""
    return widgets.Dropdown(options=list(modes), value=value, description="unsynced kept")


def show_figure(result: Any) -> None:
    """Show ``result``, a Figure."""
    display(result)


def show_figure_and_text(result: Any) -> None:
    """Show ``result.figure`` (unless None: a crashed disk waiting for restart) and ``result.summary()``
    (the usual demo result)."""
    if result.figure is not None:
        display(result.figure)
    print(result.summary())


def log_crash_explorer(script: Sequence[Sequence[object]] | None = None) -> Explorer:
    """The crash slider of ``01_log.ipynb``: run ``script`` (default: the bank's), crash after write k, keep what?"""
    from minidb.viz.log_demo import KEEP_MODES, SCRIPT, demo_writes, log_crash_demo

    script = SCRIPT if script is None else script
    writes = len(demo_writes(script))
    controls = {
        "after_write": crash_slider(writes, (writes + 1) // 2),
        "keep": keep_dropdown(KEEP_MODES, "torn"),
    }
    return Explorer(partial(log_crash_demo, script=script), controls, show_figure_and_text)
