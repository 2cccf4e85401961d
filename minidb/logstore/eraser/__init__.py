"""The data eraser of the log store (JE's ``DataEraser``); see :mod:`.eraser`.

Modules: :mod:`.eraser` (cycles, selection, exclusions, aborts, statistics),
:mod:`.protocol` (the write protocol: type bytes, fsync, zeroed items, fsync),
:mod:`.throttle` (work units and the clock), :mod:`.state` (a cycle's
persisted state and its byte format).
"""

from minidb.logstore.eraser.eraser import (ERASER_STATS, EXTINCT, MAYBE_EXTINCT, NOT_EXTINCT, DataEraser, EraserAbort,
                                           EraserConfig)
from minidb.logstore.eraser.protocol import STEP_SHARES, erase_entries, locate
from minidb.logstore.eraser.state import STATE_FILE, CycleState, read_state, write_state
from minidb.logstore.eraser.throttle import ManualClock, SystemClock, WorkThrottle

__all__ = ["DataEraser", "EraserConfig", "EraserAbort", "ERASER_STATS", "EXTINCT", "NOT_EXTINCT", "MAYBE_EXTINCT",
           "STEP_SHARES", "erase_entries", "locate", "STATE_FILE", "CycleState", "read_state", "write_state",
           "ManualClock", "SystemClock", "WorkThrottle"]
