"""The evictor (JE's ``Evictor``): keeps the resident INs within a budget of nodes.

Every resident IN and BIN is on the *INList* (here an LRU-ordered dict; a
node is moved to the back whenever a search passes through it). The budget
counts nodes (``node_budget``; JE counts bytes); the records cached in a BIN
leave with it. After every operation the evictor takes nodes from the front
of the list until the budget holds:

- only nodes without resident children are evicted (BINs first, then the
  INs whose children have gone), and never a root;
- a clean node is just detached: its parent's slot keeps its LSN;
- a dirty node is logged first (never in a read-only environment:
  ``clean_only``, below). How, the evictor asks the checkpointer
  (:meth:`~minidb.logstore.checkpoint.dirty_map.DirtyINMap.coordinate_eviction_with_checkpoint`):
  NO between checkpoints; during a checkpoint YES below the max flush level,
  NO at it. Logging dirties the parent, which now points at the new version.

``bug_evict_with_before_ckpt_end`` (off unless a demonstration turns it on)
reproduces SR #19422: where the rules say YES, it logs BEFORE_CKPT_END. The
old version is then counted obsolete at once, although the checkpoint may
end without logging the parent: the JE documentation's third, incorrect case.

A read-only environment evicts clean nodes only and keeps every node its
recovery changed resident, over the budget if need be. After a read in a
writable environment a full disk stops the eviction (the environment counts
``nEvictionsDeferred``); the node stays until a later turn.

Example: records ``k0`` .. ``k7`` in ``accounts`` (4-slot nodes: root IN 5
over BINs 6, 7, 8), a checkpoint, then ``k0`` put again (BIN 6 and the
utilization BIN 4 dirty); with no checkpoint running, a budget of 4 nodes::

    INList, oldest first: BIN 7, BIN 8, BIN 2, IN 1 (root), IN 3 (root), BIN 4 (dirty),
                          IN 5 (root), BIN 6 (dirty)                  -> 8 > 4
    BIN 7, BIN 8, BIN 2: clean, detached (their parents keep their LSNs)
    BIN 4: logged at 0x1/0x9c5 provisional NO; IN 3's slot -> 0x1/0x9c5; IN 3 dirty
    left: IN 1, IN 3, IN 5, BIN 6                                     -> 4, the budget holds
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from minidb.log import LSN, Provisional
from minidb.logstore.checkpoint.records import CkptState
from minidb.stats import Stats

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.logstore.checkpoint.dirty_map import DirtyINMap
    from minidb.logstore.core import EnvCore
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.node_logger import NodeLogger
    from minidb.logstore.tree.tree import DatabaseImpl


class Evictor:
    """The cache's INList and eviction. ``database_of(db_id)``, given by the environment, tells a root."""

    def __init__(self, core: EnvCore, node_logger: NodeLogger, dirty_map: DirtyINMap,
                 database_of: Callable[[int], DatabaseImpl]):
        self.core = core
        self.node_logger = node_logger
        self.dirty_map = dirty_map
        self.database_of = database_of
        self._resident: OrderedDict[int, IN] = OrderedDict()
        self.stats = Stats("evictor", ["nNodesEvicted", "nDirtyNodesEvicted", "nBINsEvicted", "nINsEvicted",
                                       "nEvictionsDeferred"])
        self.history: list[tuple[str, LSN | None, Provisional | None]] = []  # (node, lsn, provisional) per eviction

    # -- the INList -----------------------------------------------------------------------
    def register(self, node: IN) -> None:
        node.resident = True
        self._resident[node.node_id] = node

    def touch(self, node: IN) -> None:
        """Move a resident node to the back of the INList (a node not on it stays off)."""
        try:
            self._resident.move_to_end(node.node_id)  # one look-up: every level of every search calls this
        except KeyError:
            pass

    def forget(self, node: IN) -> None:
        self._resident.pop(node.node_id, None)
        node.resident = False

    def forget_subtree(self, node: IN | None) -> None:
        """Forget ``node`` and every resident node below it: a newer version replaced the subtree, or its
        database is gone."""
        stack = [node] if node is not None else []
        while stack:
            current = stack.pop()
            stack.extend(current.resident_children())
            self.forget(current)

    def resident_nodes(self) -> list[IN]:
        return list(self._resident.values())

    def resident_count(self) -> int:
        return len(self._resident)

    def clear(self) -> None:
        for node in self._resident.values():
            node.resident = False
        self._resident.clear()

    # -- evicting --------------------------------------------------------------------------
    def is_evictable(self, node: IN) -> bool:
        db = self.database_of(node.db_id)
        return db is not None and db.root is not node and node.parent is not None and not node.has_resident_children()

    def evict_to_budget(self, clean_only: bool = False) -> int:
        """Evict until the budget holds (or nothing more can go); return how many nodes left.
        ``clean_only``: only nodes that need no logging (in a read-only environment)."""
        budget = self.core.config.node_budget
        evicted = 0
        if budget is None:
            return 0
        clean_only = clean_only or self.core.read_only
        while len(self._resident) > budget:
            victim = next((n for n in self._resident.values()
                           if self.is_evictable(n) and not (clean_only and n.dirty)), None)
            if victim is None:
                break
            self.evict(victim)
            evicted += 1
        return evicted

    def evict(self, node: IN) -> LSN | None:
        """Evict one node (logging it first if dirty); return the LSN it was logged at, if it was."""
        core = self.core
        if not self.is_evictable(node):
            raise ValueError(f"{node.describe()} cannot be evicted (a root, or it has resident children)")
        parent = node.parent
        assert parent is not None
        lsn = None
        provisional = None
        if node.dirty:
            provisional = self.dirty_map.coordinate_eviction_with_checkpoint(node.db_id, node.level, parent)
            if (core.config.bug_evict_with_before_ckpt_end and provisional is Provisional.YES
                    and self.dirty_map.state is not CkptState.NONE):
                provisional = Provisional.BEFORE_CKPT_END  # SR #19422, for the demonstration only
            lsn = self.node_logger.log_in(node, provisional, reason="evicted")
            self.stats.add("nDirtyNodesEvicted")
        index = parent.index_of_child(node.node_id)
        assert index is not None
        parent.targets[index] = None
        node.parent = None
        self.forget(node)
        self.stats.add("nNodesEvicted")
        self.stats.add("nBINsEvicted" if node.is_bin else "nINsEvicted")
        self.history.append((node.describe(), lsn, provisional))
        core.trace.emit("evicted %s%s", node.describe(),
                       f" (logged at {lsn} provisional={provisional.name})" if lsn is not None and provisional else "")
        return lsn


__all__ = ["Evictor"]
