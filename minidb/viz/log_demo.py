"""The log crash demonstration used by ``notebooks/01_log.ipynb`` and the tour.

:func:`demo_disk` runs a small scripted workload on a simulated disk: ten
entries of a toy bank's log across two files, a ``sync`` after the fourth and
the eighth. :func:`log_crash_demo` is the pure function behind the notebook's
widget: crash right after the k-th write of that workload, keeping nothing,
everything, or a torn part of the unsynced writes, then open the log on what
the crash left and report what survived.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import CrashMode, SimDisk
from minidb.log import TRACE, LogManager
from minidb.viz.log import draw_log, log_layout

DEMO_MESSAGES = [
    "open account alice",
    "open account bob",
    "deposit alice 100",
    "deposit bob 50",
    "transfer alice->bob 30",
    "withdraw bob 20",
    "open account carol",
    "deposit carol 75",
    "transfer carol->alice 25",
    "close account bob",
]
SYNC_AFTER = (4, 8)
DEMO_FILE_MAX = 330
DEMO_BUFFER = 70
KEEP_MODES = {
    "nothing": CrashMode.nothing(),
    "everything": CrashMode.everything(),
    "torn": CrashMode.torn(seed=7),
}


def _fixed_clock() -> float:
    return 1_700_000_000.0


def demo_log(disk: SimDisk) -> LogManager:
    return LogManager(disk, file_max=DEMO_FILE_MAX, buffer_size=DEMO_BUFFER, clock=_fixed_clock)


@lru_cache(maxsize=1)
def _demo_run() -> tuple[SimDisk, tuple[tuple[int, int], ...]]:
    """The workload's disk, and (event index, entries promised) for each sync."""
    disk = SimDisk("demo")
    log = demo_log(disk)
    promises = []
    for number, message in enumerate(DEMO_MESSAGES, start=1):
        log.append(TRACE, {"message": message})
        if number in SYNC_AFTER:
            log.sync()
            promises.append((len(disk.events) - 1, number))
    log.flush()
    return disk, tuple(promises)


def _demo_history() -> SimDisk:
    return _demo_run()[0]


def demo_disk() -> SimDisk:
    """A fresh copy of the demo workload's disk (nothing crashed yet)."""
    return _demo_history().clone()


def demo_writes() -> list[int]:
    """Event indices of the demo's writes, in order (write k is ``demo_writes()[k-1]``)."""
    return [e.index for e in _demo_history().events if e.kind == "write"]


@dataclass(frozen=True)
class CrashDemo:
    after_write: int
    keep: str
    event: str  # the write the crash came after
    synced: int  # entries a sync had promised by then
    survivors: tuple[str, ...]  # Trace messages found after reopening
    cut: str | None  # what opening the log cut off
    figure: Figure  # the crashed disk, before the log was reopened

    def summary(self) -> str:
        lines = [
            f"crash after write {self.after_write} ({self.event}), keeping {self.keep} of the unsynced writes",
            f"synced before the crash: {self.synced} entries; found after reopening: {len(self.survivors)}",
        ]
        lines.append(f"opening cut: {self.cut}" if self.cut else "opening cut nothing")
        return "\n".join(lines)


def log_crash_demo(after_write: int, keep: str = "nothing") -> CrashDemo:
    """Crash the demo workload after its ``after_write``-th write; see the module doc."""
    writes = demo_writes()
    if not 1 <= after_write <= len(writes):
        raise ValueError(f"after_write must be between 1 and {len(writes)}, not {after_write}")
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {sorted(KEEP_MODES)}, not {keep!r}")
    history = _demo_history()
    event = history.events[writes[after_write - 1]]
    image = history.crash_image(event.index, KEEP_MODES[keep])
    figure = draw_log(log_layout(image), title=f"the disk after a crash after write {after_write} (keep {keep})",
                      scale=DEMO_FILE_MAX)
    synced = max([n for index, n in _demo_run()[1] if index <= event.index], default=0)
    log = demo_log(image)
    survivors = tuple(e.values["message"] for e in log.scan() if e.entry_type is TRACE)
    cut = str(log.tail_cut) if log.tail_cut else None
    log.close()
    return CrashDemo(after_write, keep, str(event), synced, survivors, cut, figure)

