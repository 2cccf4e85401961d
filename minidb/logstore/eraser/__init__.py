"""The data eraser of the log store (JE's ``DataEraser``); see :mod:`.eraser`.

Modules: :mod:`.eraser` (cycles, selection, exclusions, aborts, statistics),
:mod:`.protocol` (the write protocol: the intent recorded, type bytes, fsync, the
erased forms, fsync, the file marked erased),
:mod:`.throttle` (work units and the clock), :mod:`.state` (a cycle's
persisted state and its byte format).
"""

from minidb.logstore.eraser.eraser import (
                                           ERASER_STATS,
                                           EXTINCT,
                                           MAYBE_EXTINCT,
                                           NOT_EXTINCT,
                                           DataEraser,
                                           EraserAbort,
                                           EraserConfig,
)
from minidb.logstore.eraser.protocol import STEP_SHARES, erase_entries, erase_file, finish_recorded_erasure, locate
from minidb.logstore.eraser.state import STATE_FILE, CycleState, erasing_of, read_state, write_state
from minidb.logstore.eraser.throttle import ManualClock, SystemClock, WorkThrottle

__all__ = ["DataEraser", "EraserConfig", "EraserAbort", "ERASER_STATS", "EXTINCT", "NOT_EXTINCT", "MAYBE_EXTINCT",
           "STEP_SHARES", "erase_entries", "erase_file", "finish_recorded_erasure", "locate", "erasing_of", "STATE_FILE", "CycleState", "read_state", "write_state",
           "ManualClock", "SystemClock", "WorkThrottle"]
