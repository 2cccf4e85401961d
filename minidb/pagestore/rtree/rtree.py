"""The R*-tree (Shore's ``rtree_m``): search by box, insert with forced reinsertion and splits, remove with
condensing, all logged so that rollback and restart undo it.

An R*-tree is a store of R-tree pages (:mod:`minidb.pagestore.rtree.node`)
whose **root page never moves**: the store directory records it once, a
root that splits *grows* the tree (both halves go to new pages, the root
keeps one entry for each, one level up), and a root left with one child
*shrinks* it (the child's entries come up into the root, the child's page
is freed). Invariants (:func:`minidb.pagestore.rtree.verify.check_rtree`):

- every leaf is at level 1 and every child one level below its parent, so
  all leaves are at one depth;
- every interior entry's box is the union of its child's entries' boxes
  (no larger: a search prunes as much as the entries allow);
- every node but the root holds between ``m`` (40% of the fanout) and
  ``M`` (the fanout) entries; an interior root holds at least 2;
- the index holds each (box, element) at most once.

**Locks.** The whole index is locked, not its entries (Shore's R*-trees,
``t_cc_file``): EX to change it, SH to search it, held to commit
(:class:`~minidb.pagestore.rtree.index.RTreeManager` takes them). So no
other transaction reads or changes a page of the tree while an operation
runs, and the tree needs no latch coupling: a page is latched only while
one node is read or changed, and a descent works on copies of the nodes. Without a lock manager
(every request granted) transactions must keep to entries of their own, as
the B+tree's must without key locks: a rollback makes its own entries
absent or present again, whoever touched them since.

**Inserting** (R*, :mod:`minidb.pagestore.rtree.rstar`): descend from the
root, choosing a subtree at each level, to a leaf; if it has room, place
the entry and set each ancestor's box to the union of its child's. If it
is full, the ``M + 1`` entries overflow: the first time a level overflows
in this insertion (never the root), the 30% farthest from the node's
centre leave it and are inserted again at their level, nearest first;
otherwise the node splits and its parent takes an entry for the new node,
which may overflow the parent in turn. A reinsertion is an insertion at a
given level (interior entries go to a node one level above their child).

**Removing**: find the entry by a search that follows every child whose
box covers its box; take it off its leaf; then *condense*: going up the
path, a node left with fewer than ``m`` entries is dissolved (its entry
leaves the parent, its page is freed, its entries are kept aside), any
other gets its box recomputed in its parent; the entries kept aside are
inserted again at their levels (highest first), and a root with one child
shrinks.

**Logging.** An insert logs ``rtree_insert`` (a logical record that
changes no page: the index's root, the box, the element), then does all
the work as one *nested top action*: the pieces (``rtree_page_insert``,
``rtree_page_remove``, ``rtree_header``, page allocations and frees), then
``compensate`` back to the ``rtree_insert``. A remove logs ``rtree_remove``,
then its compensated action. Rolling back skips the action (it jumps to the
logical record) and undoes the record *logically*: after an insert, remove
the entry wherever it is now, if it is there; after a remove, insert it
again, if it is absent. A crash inside the action leaves its pieces without
their ``compensate``: restart's undo, in decreasing LSN order, undoes them
first, each physically on its page, and the tree is as it was before the
operation; the logical record's undo then finds the entry absent (an
insert cut short) or present (a remove cut short) and changes nothing.
Reinsertions, splits and dissolved nodes move other transactions' entries,
so they are never undone once the action completes: only the logical
record is. Because the record comes *before* the action, a crash can never
leave a completed action without the record that undoes it.

Worked example (fanout 4, so ``m`` = 2 and ``p`` = 1): four points fill the
root leaf; the fifth overflows it, and as the root it splits: the root
becomes level 2 with two entries, for new leaves of 2 and 3 entries. A
later overflow of one of those leaves first reinserts its farthest entry
(level 1 has not overflowed yet in that insertion); the entry may land in
the sibling, and no split is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.btree.btree import nested_top_action
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import BadRequestError, PageStoreCorruptionError
from minidb.pagestore.files import recops
from minidb.pagestore.ids import ExtentId, PageId, extent_of
from minidb.pagestore.pages.page import PageTag, StoreFlags
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.rtree.box import COORD_MAX, COORD_MIN, Box, mbr
from minidb.pagestore.rtree.node import (
    LEAF_LEVEL,
    Entry,
    Node,
    log_header,
    log_insert,
    log_remove,
    read_node,
)
from minidb.pagestore.rtree.rstar import CHOOSE_SUBTREE, min_fill, pick_reinsert, reinsert_count, split
from minidb.pagestore.transactions.xct import log_xct_entry
from minidb.pagestore.volume.volpages import AllocMode
from minidb.pagestore.wal.logdef import RTREE_INSERT, RTREE_REMOVE
from minidb.pagestore.wal.logrec import LogContext, undo_handler
from minidb.stats import Stats, Trace

CONDITIONS = ("overlap", "cover", "inside", "exact")


class DuplicateEntryError(BadRequestError):
    """The index already holds this box with this element."""


class EntryNotFoundError(BadRequestError):
    """The index holds no such box with such an element."""


# For each search condition: (descend into a child whose box is c, for the query q?, return a leaf entry
# whose box is e?). A child's box covers every entry below it, so each descent test is implied by its
# leaf test for some entry below.
_TESTS: dict[str, tuple[Callable[[Box, Box], bool], Callable[[Box, Box], bool]]] = {
    "overlap": (lambda c, q: c.overlaps(q), lambda e, q: e.overlaps(q)),
    "cover": (lambda c, q: c.covers(q), lambda e, q: e.covers(q)),
    "inside": (lambda c, q: c.overlaps(q), lambda e, q: q.covers(e)),
    "exact": (lambda c, q: c.covers(q), lambda e, q: e == q),
}


STAT_NAMES = ("nPagesRead", "nInserts", "nRemoves", "nReinsertions", "nSplits", "nRootGrows",
              "nNodesDissolved", "nRootShrinks")


@dataclass
class RTree:
    """One R*-tree: its root page (see the module documentation). ``stats`` counts what it does
    (:data:`STAT_NAMES`: pages read, reinsertions, splits, ...); ``trace`` says each restructuring in a
    sentence ("p18 (level 1) splits: p19 takes 2 of 5 entries"). The R*-tree manager hands every tree it
    makes the same two."""

    volume: Any
    root: PageId
    stats: Stats = field(default_factory=lambda: Stats("rtree", STAT_NAMES))
    trace: Trace = field(default_factory=Trace)

    @property
    def fanout(self) -> int:
        return self.read(self.root.page).fanout

    @property
    def log(self) -> Any:
        return self.volume.log

    def _pid(self, number: int) -> PageId:
        return PageId(self.root.vol, self.root.store, number)

    def _fix(self, number: int, mode: Any) -> SlottedPage:
        page = self.volume.bp.fix(self._pid(number), mode)
        if page.tag != PageTag.RTREE or page.pid != self._pid(number):
            self.volume.bp.unfix(page)
            raise PageStoreCorruptionError(f"{self._pid(number)}: a page of the R*-tree rooted at {self.root} "
                                           f"holds a {page.tag.name} page {page.pid}")
        return page

    def read(self, number: int, level: int | None = None) -> Node:
        """The node on page ``number`` (a copy); ``level``: the level it must have."""
        page = self._fix(number, SH)
        try:
            node = read_node(page)
        finally:
            self.volume.bp.unfix(page)
        self.stats.add("nPagesRead")
        if level is not None and node.level != level:
            raise PageStoreCorruptionError(f"{self._pid(number)}: an R-tree node at level {node.level} "
                                           f"where its parent expects level {level}")
        return node

    # -- searching -------------------------------------------------------------------------------------
    def search(self, query: Box, cond: str = "overlap") -> list[tuple[Box, bytes]]:
        """The (box, element) pairs meeting ``cond`` with ``query``, sorted (see :data:`CONDITIONS`)."""
        descend, match = _TESTS[cond]
        found: list[tuple[Box, bytes]] = []
        stack = [(self.root.page, None)]
        while stack:
            number, level = stack.pop()
            node = self.read(number, level)
            if node.is_leaf:
                found += [(e.box, e.data) for e in node.entries if match(e.box, query)]
            else:
                stack += [(e.child, node.level - 1) for e in node.entries if descend(e.box, query)]
        return sorted(found)

    def find(self, box: Box, el: bytes) -> tuple[list[Node], int] | None:
        """The path from the root to the leaf holding (``box``, ``el``) and its index there (None: absent)."""
        def walk(path: list[Node]) -> tuple[list[Node], int] | None:
            node = path[-1]
            for i, e in enumerate(node.entries):
                if node.is_leaf and e.box == box and e.data == el:
                    return path, i
                if not node.is_leaf and e.box.covers(box):
                    hit = walk(path + [self.read(e.child, node.level - 1)])
                    if hit is not None:
                        return hit
            return None
        return walk([self.read(self.root.page)])

    # -- the operations, logged --------------------------------------------------------------------------
    def _operation(self, box: Box, el: bytes) -> dict[str, Any]:
        return {"vol": self.root.vol, "store": self.root.store, "root": self.root.page,
                "xlo": box.xlo, "ylo": box.ylo, "xhi": box.xhi, "yhi": box.yhi, "el": el}

    def insert(self, xct: LogContext, box: Box, el: bytes, present_ok: bool = False) -> bool:
        """Insert (``box``, ``el``); False if it is there already and ``present_ok`` (else
        :class:`DuplicateEntryError`, changing nothing)."""
        if self.find(box, el) is not None:
            if present_ok:
                return False
            raise DuplicateEntryError(f"{self.root.stid}: the R*-tree already holds {box} with element {el.hex()}")
        self.stats.add("nInserts")
        log_xct_entry(self.log, xct, RTREE_INSERT, self._operation(box, el))
        with nested_top_action(self.volume, xct):
            self._insert_at(xct, Entry(box, el), LEAF_LEVEL, set())
        return True

    def remove(self, xct: LogContext, box: Box, el: bytes, missing_ok: bool = False) -> bool:
        """Remove (``box``, ``el``); False if it is absent and ``missing_ok`` (else
        :class:`EntryNotFoundError`, changing nothing)."""
        found = self.find(box, el)
        if found is None:
            if missing_ok:
                return False
            raise EntryNotFoundError(f"{self.root.stid}: the R*-tree holds no {box} with element {el.hex()}")
        path, i = found
        self.stats.add("nRemoves")
        log_xct_entry(self.log, xct, RTREE_REMOVE, self._operation(box, el))
        with nested_top_action(self.volume, xct):
            self._take(xct, path[-1], i)
            self._condense(xct, path)
        return True

    # -- inserting (inside a nested top action) -------------------------------------------------------
    def _choose_path(self, box: Box, level: int) -> list[Node]:
        """The nodes from the root down to the node of ``level`` that takes an entry of box ``box``."""
        path = [self.read(self.root.page)]
        if path[0].level < level:
            raise PageStoreCorruptionError(f"{self.root}: an entry for level {level} in a tree of "
                                           f"{path[0].level} levels")
        while path[-1].level > level:
            node = path[-1]
            i = CHOOSE_SUBTREE.call(node.boxes(), box, node.level == LEAF_LEVEL + 1)  # its one call site
            path.append(self.read(node.entries[i].child, node.level - 1))
        return path

    def _insert_at(self, xct: LogContext, entry: Entry, level: int, reinserted: set[int]) -> None:
        """Insert ``entry`` into a node of ``level``; ``reinserted``: the levels that have overflowed in
        this insertion (forced reinsertion happens once per level)."""
        self._add(xct, self._choose_path(entry.box, level), entry, reinserted)

    def _add(self, xct: LogContext, path: list[Node], entry: Entry, reinserted: set[int]) -> None:
        node = path[-1]
        if len(node.entries) < node.fanout:
            self._put(xct, node, [entry])
            self._adjust(xct, path)
            return
        entries = node.entries + [entry]
        boxes = [e.box for e in entries]
        if len(path) > 1 and node.level not in reinserted:
            reinserted.add(node.level)
            out = pick_reinsert(boxes, reinsert_count(node.fanout))
            self.stats.add("nReinsertions")
            self.trace.emit("p%d (level %d) overflows: reinsert %s", node.number, node.level,
                            ", ".join(str(boxes[i]) for i in out))
            self._keep_only(xct, node, [e for i, e in enumerate(entries) if i not in out])
            self._adjust(xct, path)
            for i in out:
                self._insert_at(xct, entries[i], node.level, reinserted)
            return
        one, two = split(boxes, min_fill(node.fanout))
        first, second = [entries[i] for i in one], [entries[i] for i in two]
        if len(path) == 1:  # the root grows: both halves go to new pages
            left = self._new_node(xct, node.level, first)
            right = self._new_node(xct, node.level, second)
            self._take(xct, node, 0, len(node.entries))
            self._set_level(xct, node, node.level + 1)
            self._put(xct, node, [Entry.node(mbr(e.box for e in first), left.number),
                                  Entry.node(mbr(e.box for e in second), right.number)])
            self.stats.add_each(("nSplits", "nRootGrows"))
            self.trace.emit("root p%d splits into p%d and p%d, the tree grows to %d levels", node.number,
                            left.number, right.number, node.level)
            return
        self._keep_only(xct, node, first)
        new = self._new_node(xct, node.level, second)
        self.stats.add("nSplits")
        self.trace.emit("p%d (level %d) splits: p%d takes %d of %d entries", node.number, node.level, new.number,
                        len(second), len(entries))
        self._adjust(xct, path, stop_early=False, height=2)
        self._add(xct, path[:-1], Entry.node(mbr(e.box for e in second), new.number), reinserted)

    def _adjust(self, xct: LogContext, path: list[Node], stop_early: bool = True, height: int | None = None) -> None:
        """Set each ancestor's box of the path's last node to the union of its child's entries, from the
        bottom up; ``stop_early``: stop at the first box already right; ``height``: only that many nodes."""
        top = 0 if height is None else max(0, len(path) - height)
        for j in range(len(path) - 1, top, -1):
            node, parent = path[j], path[j - 1]
            i = parent.index_of_child(node.number)
            box = mbr(node.boxes())
            if parent.entries[i].box == box:
                if stop_early:
                    return
                continue
            self._replace(xct, parent, i, Entry.node(box, node.number))

    # -- removing (inside a nested top action) ---------------------------------------------------------
    def _condense(self, xct: LogContext, path: list[Node]) -> None:
        orphans: list[tuple[int, list[Entry]]] = []
        fill = min_fill(path[0].fanout)
        for j in range(len(path) - 1, 0, -1):
            node, parent = path[j], path[j - 1]
            i = parent.index_of_child(node.number)
            if len(node.entries) < fill:
                self._take(xct, parent, i)
                orphans.append((node.level, list(node.entries)))
                self._free_node(xct, node.number)
                self.stats.add("nNodesDissolved")
                self.trace.emit("p%d (level %d) has %d entries, fewer than %d: dissolved", node.number,
                                node.level, len(node.entries), fill)
            elif parent.entries[i].box != mbr(node.boxes()):
                self._replace(xct, parent, i, Entry.node(mbr(node.boxes()), node.number))
        for level, entries in sorted(orphans, key=lambda o: -o[0]):
            for entry in entries:
                self._insert_at(xct, entry, level, set())
        self._shrink_root(xct)

    def _shrink_root(self, xct: LogContext) -> None:
        root = self.read(self.root.page)
        while not root.is_leaf and len(root.entries) == 1:
            child = self.read(root.entries[0].child, root.level - 1)
            self._take(xct, root, 0)
            self._set_level(xct, root, child.level)
            self._put(xct, root, child.entries)
            self._free_node(xct, child.number)
            self.stats.add("nRootShrinks")
            self.trace.emit("root p%d has one child: it takes p%d's entries, the tree shrinks to %d levels",
                            root.number, child.number, root.level)

    # -- the pieces: each changes one page, logged, and keeps the node copy in step ----------------------
    def _change(self, number: int, change: Callable[[SlottedPage], None]) -> None:
        page = self._fix(number, EX)
        try:
            change(page)
        finally:
            self.volume.bp.unfix(page, dirty=True)

    def _put(self, xct: LogContext, node: Node, entries: list[Entry]) -> None:
        """Append ``entries`` to ``node``."""
        self._change(node.number, lambda page: log_insert(self.volume, xct, page, len(node.entries) + 1,
                                                          [e.pack() for e in entries]))
        node.entries += entries

    def _take(self, xct: LogContext, node: Node, i: int, count: int = 1) -> None:
        """Take entries ``i`` .. ``i + count - 1`` off ``node``."""
        self._change(node.number, lambda page: log_remove(self.volume, xct, page, i + 1, count))
        del node.entries[i:i + count]

    def _replace(self, xct: LogContext, node: Node, i: int, entry: Entry) -> None:
        def change(page: SlottedPage) -> None:
            log_remove(self.volume, xct, page, i + 1, 1)
            log_insert(self.volume, xct, page, i + 1, [entry.pack()])
        self._change(node.number, change)
        node.entries[i] = entry

    def _set_level(self, xct: LogContext, node: Node, level: int) -> None:
        self._change(node.number, lambda page: log_header(self.volume, xct, page, level, node.fanout))
        node.level = level

    def _keep_only(self, xct: LogContext, node: Node, keep: list[Entry]) -> None:
        """Make ``node`` hold ``keep``: take off the entries not in it (a run at a time, from the end),
        append those it lacks."""
        wanted = {e.pack() for e in keep}
        present = {e.pack() for e in node.entries}
        gone = [i for i, e in enumerate(node.entries) if e.pack() not in wanted]
        for start, count in reversed(_runs(gone)):
            self._take(xct, node, start, count)
        added = [e for e in keep if e.pack() not in present]
        if added:
            self._put(xct, node, added)

    def _new_node(self, xct: LogContext, level: int, entries: list[Entry]) -> Node:
        fanout = self.fanout
        page = new_rtree_page(self.volume, xct, self.root.stid, AllocMode.COMPACT)
        try:
            log_header(self.volume, xct, page, level, fanout)
            log_insert(self.volume, xct, page, 1, [e.pack() for e in entries])
        finally:
            self.volume.bp.unfix(page, dirty=True)
        return Node(page.pid.page, level, fanout, list(entries))

    def _free_node(self, xct: LogContext, number: int) -> None:
        pid = self._pid(number)
        manager = getattr(xct, "manager", None)
        if manager is not None:
            manager.lock(xct, pid, "EX")
            manager.lock(xct, ExtentId(pid.vol, extent_of(pid.page, self.volume.ext_sz)), "IX")
        self.volume.free_page(pid, xct, free_empty_extent=False)
        if manager is not None:
            manager.note_page_freed(xct, pid)


def _runs(indexes: list[int]) -> list[tuple[int, int]]:
    """Sorted indexes as (start, count) runs of consecutive ones."""
    runs: list[tuple[int, int]] = []
    for i in indexes:
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((i, 1))
    return runs


def new_rtree_page(volume: Any, xct: LogContext, stid: Any, mode: AllocMode) -> SlottedPage:
    """Allocate a page to the R*-tree's store and format it as an empty ``RTREE`` page; return it fixed EX."""
    flags = volume.store_node(stid.store).store_flags or StoreFlags.REGULAR
    pid = volume.alloc_page(stid, mode, xct)
    manager = getattr(xct, "manager", None)
    if manager is not None:
        manager.lock(xct, ExtentId(pid.vol, extent_of(pid.page, volume.ext_sz)), "IX")
    return recops.format_page(volume, xct, pid, PageTag.RTREE, flags)


def create_root(volume: Any, xct: LogContext, stid: Any, fanout: int) -> PageId:
    """The root of a new, empty R*-tree in store ``stid``: a leaf with no entries."""
    page = new_rtree_page(volume, xct, stid, AllocMode.APPEND)
    try:
        log_header(volume, xct, page, LEAF_LEVEL, fanout)
    finally:
        volume.bp.unfix(page, dirty=True)
    return page.pid


def _tree_and_entry(volume: Any, v: dict[str, Any]) -> tuple[RTree, Box, bytes]:
    tree = RTree(volume, PageId(v["vol"], v["store"], v["root"]))
    return tree, Box(v["xlo"], v["ylo"], v["xhi"], v["yhi"]), v["el"]


@undo_handler("rtree_insert")
def _undo_rtree_insert(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    """Logical undo: the entry leaves the index, wherever it is now (absent: the insert was cut short)."""
    tree, box, el = _tree_and_entry(volume, v)
    tree.remove(xct, box, el, missing_ok=True)


@undo_handler("rtree_remove")
def _undo_rtree_remove(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    """Logical undo: the entry goes back where the tree chooses now (present: the remove was cut short)."""
    tree, box, el = _tree_and_entry(volume, v)
    tree.insert(xct, box, el, present_ok=True)


def entries_of(tree: RTree) -> Iterable[tuple[Box, bytes]]:
    """Every (box, element) of ``tree``, sorted."""
    return tree.search(Box(COORD_MIN, COORD_MIN, COORD_MAX, COORD_MAX), "inside")
