"""Wrong: the checkpoint flushes its map top down (the highest level first) and a flushed child's parent does
not join the map, so each parent is logged before its children and points to their old versions."""

from minidb.logstore.checkpoint import checkpointer as reference, dirty_map
from minidb.logstore.checkpoint.records import CkptState


class DirtyINMap(dirty_map.DirtyINMap):
    def lowest_level_set(self):
        keys = [k for k, refs in self._levels.items() if refs]
        return max(keys) if keys else None

    def add_in(self, node, update_flush_levels):
        if self.state is CkptState.DIRTY_MAP_COMPLETE:
            return False
        return super().add_in(node, update_flush_levels)


class Checkpointer(reference.Checkpointer):
    pass
