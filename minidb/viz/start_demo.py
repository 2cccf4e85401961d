"""The small crash demonstration of ``notebooks/00_start_here.ipynb``: how the notebooks' controls work.

A script of log appends and syncs (see :mod:`minidb.viz.script`)::

    script = [
        ("append", "open account alice"),   # one entry, written to the file but not yet durable
        ("sync",),                          # everything written so far is now durable
    ]

:func:`crash_after` is the pure function behind the notebook's control: it
runs the first ``step`` operations on a fresh simulated disk, pulls the
plug, keeping ``nothing`` or ``everything`` of what was written but not
synced, reopens the log and reports which entries survived. Invariant, the
promise of the log: every entry appended before a ``sync`` survives any crash;
an entry after the last sync survives only if the crash happened to keep it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from matplotlib.figure import Figure

from minidb.io import CrashMode, SimDisk
from minidb.log import TRACE, LogManager
from minidb.viz.log import draw_log, log_layout
from minidb.viz.script import Op, checked, op_table, script_error
from minidb.viz.widgets import Explorer, keep_dropdown, show_figure_and_text, step_slider

OPS = op_table(
    Op("append", ("text",), "append one entry (a Trace entry holding text) and write it to the file, not synced"),
    Op("sync", (), "make every entry written so far durable (fsync)"),
)
SCRIPT = [
    ("append", "open account alice"),
    ("append", "deposit alice 100"),
    ("sync",),
    ("append", "open account bob"),
    ("append", "deposit bob 50"),
]
KEEP = {"nothing": CrashMode.nothing(), "everything": CrashMode.everything()}
FILE_MAX = 400  # bytes: one file holds the whole demo


def _clock() -> float:
    return 1_700_000_000.0


@dataclass(frozen=True)
class StartCrash:
    step: int
    keep: str
    appended: tuple[str, ...]  # the texts appended by the first ``step`` operations
    synced: int  # how many of them a sync had made durable
    survivors: tuple[str, ...]  # the texts found after the crash and reopening
    figure: Figure  # the disk after the crash, before reopening

    def summary(self) -> str:
        lost = len(self.appended) - len(self.survivors)
        return "\n".join([
            f"crash after step {self.step}, keeping {self.keep} of the unsynced writes",
            f"appended {len(self.appended)}, synced {self.synced}, found after reopening {len(self.survivors)}"
            + (f" ({lost} lost)" if lost else ""),
            *(f"  survived: {text}" for text in self.survivors),
        ])


def crash_after(step: int, keep: str = "nothing", script: Sequence[Sequence[object]] = SCRIPT) -> StartCrash:
    """Run the first ``step`` operations of ``script``, crash keeping ``keep`` of the unsynced writes,
    reopen the log: what survived."""
    operations = checked(script, OPS)
    for number, operation in enumerate(operations, 1):
        if operation[0] == "append" and not isinstance(operation[1], str):
            raise script_error(number, operation, f"the text is a string in quotes, not {operation[1]!r}")
    if not 0 <= step <= len(operations):
        raise ValueError(f"step must be between 0 and {len(operations)} for this script, not {step}")
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {', '.join(KEEP)}, not {keep!r}")
    disk = SimDisk("start")
    log = LogManager(disk, file_max=FILE_MAX, clock=_clock)
    appended: list[str] = []
    synced = 0
    for operation in operations[:step]:
        if operation[0] == "append":
            log.append(TRACE, {"message": operation[1]})
            log.flush()
            appended.append(operation[1])
        else:
            log.sync()
            synced = len(appended)
    disk.crash(KEEP[keep])
    figure = draw_log(log_layout(disk), title=f"the log file after a crash after step {step} (keeping {keep})",
                      scale=FILE_MAX)
    reopened = LogManager(disk, file_max=FILE_MAX, clock=_clock)
    survivors = tuple(e.values["message"] for e in reopened.scan() if e.entry_type is TRACE)
    reopened.close()
    return StartCrash(step, keep, tuple(appended), synced, survivors, figure)


def start_explorer(script: Sequence[Sequence[object]] = SCRIPT, step: int | None = None) -> Explorer:
    """A slider over the script's steps and a choice of what the crash keeps, over ``crash_after``."""
    steps = len(checked(script, OPS))
    controls = {
        "step": step_slider(steps, step, description="crash after"),
        "keep": keep_dropdown(KEEP, "nothing"),
    }
    return Explorer(partial(crash_after, script=list(script)), controls, show_figure_and_text)
