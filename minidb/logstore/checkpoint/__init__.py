"""The checkpoint of a log store environment (JE's ``Checkpointer`` and ``DirtyINMap``), a module per part.

:mod:`.checkpointer` runs the ten steps, one stanza each, as a generator a
caller can pause; :mod:`.dirty_map` holds what a checkpoint must flush (the
dirty INs by level, each database's highest flush level, the state the evictor
consults); :mod:`.provisional` says which logged INs recovery replays and
which Provisional value each level a checkpoint flushes gets.
"""

from minidb.logstore.checkpoint.checkpointer import STEP_NAMES, Checkpointer, CheckpointResult, CheckpointRun
from minidb.logstore.checkpoint.dirty_map import CkptState, DirtyINMap, DirtyMapSnapshot
from minidb.logstore.checkpoint.provisional import checkpoint_provisional, is_provisional

__all__ = ["Checkpointer", "CheckpointRun", "CheckpointResult", "STEP_NAMES", "CkptState", "DirtyINMap",
           "DirtyMapSnapshot", "checkpoint_provisional", "is_provisional"]
