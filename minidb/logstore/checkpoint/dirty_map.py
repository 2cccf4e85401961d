"""The checkpoint dirty map (JE's ``DirtyINMap``): dirty INs by level, flush levels, state.

One object per environment holds the state of the checkpoint, the INs it
must flush organized by B-tree level, and the *highest flush level* of each
database. The evictor consults it concurrently with the checkpoint.

State (``CkptState``)::

    NONE                  no checkpoint; the map is empty
    DIRTY_MAP_INCOMPLETE  steps 2-4: the map is being built
    DIRTY_MAP_COMPLETE    steps 4-10: the map is built; INs are being flushed

Highest flush level, computed while the map is built (JE's
``updateFlushLevels``): a dirty BIN that is not the root asks for level 2 (its
parent must be logged, so that the BIN can be logged provisionally and
recovery never has to process BINs); a dirty upper IN asks for its own level;
a root for its own level. A database's highest flush level is the maximum
over its dirty INs (with ``minimize_recovery_time``, JE's flushAll, and
always for the mapping tree: its root level). Example, a 3-level tree::

    dirty: BIN 12 (level 1), BIN 13 (level 1)           -> highest flush level 2
    dirty: BIN 12, IN 5 (level 2, not the root)         -> 2
    dirty: BIN 12, root IN 3 (level 3)                  -> 3

Coordination with eviction (:meth:`DirtyINMap.coordinate_eviction_with_checkpoint`),
exactly the JE documentation's rules: NONE -> NO; DIRTY_MAP_INCOMPLETE -> add the
parent to the map as if it had been found dirty, then NO if the IN's level
is at least the database's highest flush level, else YES; DIRTY_MAP_COMPLETE
-> NO for a root, YES otherwise.

Coordination with splits (:meth:`DirtyINMap.coordinate_split_with_checkpoint`,
JE's ``coordinateSplitWithCheckpoint``): a split logs both halves with
Provisional.YES. While the map is being built, the parents of the logged
halves are added to it, as eviction does. While the checkpoint flushes, a
split of an IN at the database's highest flush level changes that IN's key
range after the map was made; the checkpoint would log the IN
non-provisionally without the new sibling, and recovery could not place it.
So the highest flush level is raised by one and the parent added: the
parent, which records both halves, becomes the level logged
non-provisionally.

The environment builds the map through the hot spot ``DIRTY_IN_MAP`` (a
component of the course project ``checkpointer``) and hands the same map to
the checkpointer, the evictor, the trees and the mapping tree; the records it
reports (``CkptState``, ``CheckpointReference``, ``DirtyMapSnapshot``) are in
:mod:`.records`.

Locking order: the environment latch (held by every operation and by each
checkpoint step) covers the map; the evictor and the checkpointer never run
at the same instant, they interleave between steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb import impl
from minidb.log import Provisional
from minidb.logstore.checkpoint.provisional import flush_level_of
from minidb.logstore.checkpoint.records import MAPPING_RANK, CheckpointReference, CkptState, DirtyMapSnapshot
from minidb.logstore.logdef import MAPPING_DB_ID

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from minidb.logstore.core import EnvCore
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.tree import DatabaseImpl

class DirtyINMap:
    """The checkpoint's dirty map. Given by the environment: ``database_of(db_id)`` and
    ``resident_nodes()``, the cache's INList (the INs step 4 examines)."""

    def __init__(self, core: EnvCore, database_of: Callable[[int], DatabaseImpl],
                 resident_nodes: Callable[[], list[IN]]):
        self.core = core
        self.database_of = database_of
        self.resident_nodes = resident_nodes
        self.state = CkptState.NONE
        self.flush_all = False
        self.flush_done = False
        self._levels: dict[tuple[int, int], dict[int, CheckpointReference]] = {}
        self.highest_flush_levels: dict[int, int] = {}

    # -- state ----------------------------------------------------------------------
    def begin_checkpoint(self, flush_all: bool) -> None:
        assert self.state is CkptState.NONE and not self._levels and not self.highest_flush_levels
        self.state = CkptState.DIRTY_MAP_INCOMPLETE
        self.flush_all = flush_all
        self.flush_done = False

    def complete(self) -> None:
        assert self.state is CkptState.DIRTY_MAP_INCOMPLETE
        self.state = CkptState.DIRTY_MAP_COMPLETE

    def reset(self) -> None:
        self._levels.clear()
        self.highest_flush_levels.clear()
        self.state = CkptState.NONE
        self.flush_all = False
        self.flush_done = False

    # -- building ---------------------------------------------------------------------
    @staticmethod
    def level_key(db_id: int, level: int) -> tuple[int, int]:
        return (MAPPING_RANK if db_id == MAPPING_DB_ID else 0, level)

    def _reference(self, node: IN) -> CheckpointReference:
        db = self.database_of(node.db_id)
        return CheckpointReference(node.db_id, node.node_id, node.level, db.root is node, node.is_bin,
                                   node.id_key, node.last_logged_lsn)

    def add_in(self, node: IN, update_flush_levels: bool) -> bool:
        """Add ``node`` to the map (JE's ``addIN``); False if it was there already."""
        ref = self._reference(node)
        level_map = self._levels.setdefault(self.level_key(ref.db_id, ref.level), {})
        if ref.node_id in level_map:
            return False
        level_map[ref.node_id] = ref
        if update_flush_levels:
            self._update_flush_levels(ref)
        return True

    def _update_flush_levels(self, ref: CheckpointReference) -> None:
        flush_all = self.flush_all or ref.db_id == MAPPING_DB_ID
        root_level = self.database_of(ref.db_id).tree.root_node().level if flush_all else ref.level
        level = flush_level_of(ref.level, ref.is_bin, ref.is_root, root_level, flush_all)
        if level > self.highest_flush_levels.get(ref.db_id, 0):
            self.highest_flush_levels[ref.db_id] = level

    def select_for_checkpoint(self, node: IN) -> None:
        """Add ``node`` as a dirty IN found while the map is built (only then)."""
        if self.state is CkptState.DIRTY_MAP_INCOMPLETE:
            self.add_in(node, update_flush_levels=True)

    def select_dirty_ins_for_checkpoint(self) -> Iterator[IN]:
        """Step 4: examine every resident IN; add the dirty ones. Yields each IN examined.

        Between two INs, the environment may run other operations (and
        evictions); the INs are examined in node-id order, skipping those
        evicted in the meantime.
        """
        assert self.state is CkptState.DIRTY_MAP_INCOMPLETE
        for node in sorted(self.resident_nodes(), key=lambda n: n.node_id):
            if not node.resident:
                continue
            if node.dirty:
                self.select_for_checkpoint(node)
            yield node

    # -- coordination ---------------------------------------------------------------------
    def coordinate_eviction_with_checkpoint(self, db_id: int, target_level: int, parent: IN | None) -> Provisional:
        """How eviction must log an IN of ``target_level`` (``parent`` None: the root). The JE documentation's rules."""
        if self.state is CkptState.NONE:
            return Provisional.NO
        if self.state is CkptState.DIRTY_MAP_INCOMPLETE:
            if parent is not None:
                self.select_for_checkpoint(parent)
            highest = self.highest_flush_levels.get(db_id)
            return Provisional.NO if highest is None or target_level >= highest else Provisional.YES
        return Provisional.NO if parent is None else Provisional.YES

    def coordinate_split_with_checkpoint(self, db: DatabaseImpl, splits: list[tuple[IN, IN]]) -> None:
        """A split logged ``splits`` (left, right) pairs, bottom up, with Provisional.YES."""
        if self.state is CkptState.NONE or self.flush_done:
            return
        if self.state is CkptState.DIRTY_MAP_INCOMPLETE:
            for left, right in splits:
                for half in (left, right):
                    if half.parent is not None:
                        self.select_for_checkpoint(half.parent)
            return
        highest = self.highest_flush_levels.get(db.id)
        if highest is None:
            return
        for left, right in splits:
            if left.level == highest:
                highest = left.level + 1
                self.highest_flush_levels[db.id] = highest
                for half in (left, right):
                    if half.parent is not None:
                        self.add_in(half.parent, update_flush_levels=False)
                self.core.trace.emit("split of %s at the max flush level of %s: max flush level raised to %d",
                                    left.describe(), db.name, highest)

    def note_map_ln_logged(self, mapping: DatabaseImpl, key: bytes) -> None:
        """A checkpoint logged a root, hence a MapLN: its mapping-tree BIN must be flushed too."""
        if self.state is CkptState.NONE or self.flush_done:
            return
        self.add_in(mapping.tree.search(key), update_flush_levels=True)

    def forget_database(self, db_id: int) -> None:
        """A database was removed (:meth:`~minidb.logstore.mapping_tree.DbTree.remove`): none of its INs is
        flushed any more."""
        for refs in self._levels.values():
            for node_id in [n for n, ref in refs.items() if ref.db_id == db_id]:
                del refs[node_id]
        self.highest_flush_levels.pop(db_id, None)

    # -- flushing ---------------------------------------------------------------------------
    def highest_flush_level(self, db_id: int) -> int | None:
        return self.highest_flush_levels.get(db_id)

    def raise_flush_level(self, db_id: int, level: int) -> None:
        if level > self.highest_flush_levels.get(db_id, 0):
            self.highest_flush_levels[db_id] = level

    def lowest_level_set(self) -> tuple[int, int] | None:
        keys = [k for k, refs in self._levels.items() if refs]
        return min(keys) if keys else None

    def remove_next_node(self, key: tuple[int, int]) -> CheckpointReference | None:
        refs = self._levels.get(key)
        if not refs:
            return None
        node_id = min(refs)
        return refs.pop(node_id)

    def remove_node(self, db_id: int, level: int, node_id: int) -> CheckpointReference | None:
        refs = self._levels.get(self.level_key(db_id, level))
        if not refs:
            return None
        return refs.pop(node_id, None)

    def contains(self, db_id: int, level: int, node_id: int) -> bool:
        return node_id in self._levels.get(self.level_key(db_id, level), {})

    def remove_level(self, key: tuple[int, int]) -> None:
        if not self._levels.get(key):
            self._levels.pop(key, None)

    def __len__(self) -> int:
        return sum(len(refs) for refs in self._levels.values())

    def snapshot(self) -> DirtyMapSnapshot:
        levels = tuple(
            (rank, level, tuple(sorted(refs.values(), key=lambda r: (r.db_id, r.node_id))))
            for (rank, level), refs in sorted(self._levels.items()) if refs
        )
        return DirtyMapSnapshot(self.state, levels, tuple(sorted(self.highest_flush_levels.items())))


DIRTY_IN_MAP = impl.hot_spot(DirtyINMap, twin=False, project="checkpointer")

__all__ = ["DirtyINMap", "DIRTY_IN_MAP"]
