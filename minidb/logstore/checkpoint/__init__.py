"""The checkpoint of a log store environment (JE's ``Checkpointer`` and ``DirtyINMap``), a module per part.

:mod:`.checkpointer` runs the ten steps, one stanza each, as a generator
that a :mod:`.run` drives and a caller can pause; :mod:`.dirty_map` holds
what a checkpoint must flush (the dirty INs by level, each database's
highest flush level, the state the evictor consults); :mod:`.provisional`
says which logged INs recovery replays and how far up a dirty IN asks the
checkpoint to flush; :mod:`.records` holds what they report (the state, the
map's snapshot, the result of a run). The checkpointer and the dirty map are
the components of the course project ``checkpointer``: the engine builds
them through their hot spots, ``CHECKPOINTER`` and ``DIRTY_IN_MAP``.
"""

from minidb.logstore.checkpoint.checkpointer import CHECKPOINTER, Checkpointer, checkpoint_provisional
from minidb.logstore.checkpoint.dirty_map import DIRTY_IN_MAP, DirtyINMap
from minidb.logstore.checkpoint.provisional import flush_level_of, is_provisional
from minidb.logstore.checkpoint.records import (
    MAPPING_RANK,
    STEP_NAMES,
    CheckpointReference,
    CheckpointResult,
    CkptState,
    DirtyMapSnapshot,
)
from minidb.logstore.checkpoint.run import CheckpointRun

__all__ = ["Checkpointer", "CHECKPOINTER", "CheckpointRun", "CheckpointResult", "STEP_NAMES", "CkptState", "DirtyINMap",
           "DIRTY_IN_MAP", "DirtyMapSnapshot", "CheckpointReference", "MAPPING_RANK", "checkpoint_provisional",
           "flush_level_of", "is_provisional"]
