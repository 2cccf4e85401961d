"""The log crash demonstration used by ``notebooks/01_log.ipynb`` and the tour.

The workload is a *script* (:mod:`minidb.viz.script`): a list of operations on
one log, ``("append", message)``, ``("flush",)`` and ``("sync",)``. The default,
:data:`SCRIPT`, is a toy bank's log: ten Trace entries across two files, a
``sync`` after the fourth and the eighth, a ``flush`` at the end.
:func:`run_script` applies a stretch of a script to a log (the notebook's
sections do that piece by piece); :func:`log_crash_demo` is the pure function
behind the notebook's widget: run the whole script on a simulated disk, crash
right after its k-th write, keeping nothing, everything, or a torn part of the
unsynced writes, then open the log on what the crash left and report what
survived. Invariants: a crash never loses what a sync before it promised, and
what survives is always a prefix of the appended messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from matplotlib.figure import Figure

from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, TRACE, LogManager
from minidb.viz.log import draw_log, log_layout
from minidb.viz.script import Op, checked, op_table, script_error

OPS = op_table(
    Op("append", ("message",), "append a Trace entry carrying the message (it goes to the log buffer)"),
    Op("flush", (), "write the log buffer to the file: written, not yet durable"),
    Op("sync", (), "flush, then fsync: everything appended so far is durable"),
)
SCRIPT: list[tuple] = [
    ("append", "open account alice"),
    ("append", "open account bob"),
    ("append", "deposit alice 100"),
    ("append", "deposit bob 50"),
    ("sync",),
    ("append", "transfer alice->bob 30"),
    ("append", "withdraw bob 20"),
    ("append", "open account carol"),
    ("append", "deposit carol 75"),
    ("sync",),
    ("append", "transfer carol->alice 25"),
    ("append", "close account bob"),
    ("flush",),
]
DEMO_MESSAGES = [op[1] for op in SCRIPT if op[0] == "append"]
DEMO_FILE_MAX = 330
DEMO_BUFFER = 70
MAX_MESSAGE = 100  # characters: an entry must fit a 330-byte file after its FileHeader
KEEP_MODES = {
    "nothing": CrashMode.nothing(),
    "everything": CrashMode.everything(),
    "torn": CrashMode.torn(seed=7),
}


def _fixed_clock() -> float:
    return 1_700_000_000.0


def demo_log(disk: SimDisk) -> LogManager:
    return LogManager(disk, file_max=DEMO_FILE_MAX, buffer_size=DEMO_BUFFER, clock=_fixed_clock)


def checked_script(script: Sequence[Sequence[object]]) -> tuple[tuple, ...]:
    """The script as tuples, every operation known and every message a short string."""
    ops = checked(script, OPS)
    for step, op in enumerate(ops, 1):
        if op[0] == "append" and not (isinstance(op[1], str) and 1 <= len(op[1]) <= MAX_MESSAGE):
            raise script_error(step, op, f"the message must be a string of 1 to {MAX_MESSAGE} characters")
    return tuple(ops)


def run_script(log: LogManager, script: Sequence[Sequence[object]], start: int = 0,
               stop: int | None = None) -> list[LSN]:
    """Apply operations ``start`` to ``stop`` of ``script`` (all checked first) to ``log``;
    return the LSNs of the entries appended."""
    lsns = []
    for op in checked_script(script)[start:stop]:
        if op[0] == "append":
            lsns.append(log.append(TRACE, {"message": op[1]}))
        elif op[0] == "flush":
            log.flush()
        else:
            log.sync()
    return lsns


@lru_cache(maxsize=8)
def _demo_run(script: tuple[tuple, ...]) -> tuple[SimDisk, tuple[tuple[int, int], ...]]:
    """The script's disk, and (event index, entries promised) for each sync."""
    disk = SimDisk("demo")
    log = demo_log(disk)
    promises = []
    appended = 0
    for step in range(len(script)):
        appended += len(run_script(log, script, step, step + 1))
        if script[step][0] == "sync":
            promises.append((len(disk.events) - 1, appended))
    log.flush()
    return disk, tuple(promises)


def _demo_history(script: Sequence[Sequence[object]]) -> SimDisk:
    return _demo_run(checked_script(script))[0]


def demo_disk(script: Sequence[Sequence[object]] = SCRIPT) -> SimDisk:
    """A fresh copy of the script's disk (nothing crashed yet)."""
    return _demo_history(script).clone()


def demo_writes(script: Sequence[Sequence[object]] = SCRIPT) -> list[int]:
    """Event indices of the script's writes, in order (write k is ``demo_writes()[k-1]``)."""
    return [e.index for e in _demo_history(script).events if e.kind == "write"]


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


def log_crash_demo(after_write: int, keep: str = "nothing",
                   script: Sequence[Sequence[object]] = SCRIPT) -> CrashDemo:
    """Crash the script's run after its ``after_write``-th write; see the module doc."""
    ops = checked_script(script)
    writes = demo_writes(ops)
    if not 1 <= after_write <= len(writes):
        raise ValueError(f"after_write must be between 1 and {len(writes)}, not {after_write}")
    if keep not in KEEP_MODES:
        raise ValueError(f"keep must be one of {sorted(KEEP_MODES)}, not {keep!r}")
    history, promises = _demo_run(ops)
    event = history.events[writes[after_write - 1]]
    image = history.crash_image(event.index, KEEP_MODES[keep])
    figure = draw_log(log_layout(image), title=f"the disk after a crash after write {after_write} (keep {keep})",
                      scale=DEMO_FILE_MAX)
    synced = max([n for index, n in promises if index <= event.index], default=0)
    log = demo_log(image)
    survivors = tuple(e.values["message"] for e in log.scan() if e.entry_type is TRACE)
    cut = str(log.tail_cut) if log.tail_cut else None
    log.close()
    return CrashDemo(after_write, keep, str(event), synced, survivors, cut, figure)
