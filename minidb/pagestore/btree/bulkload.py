"""Bulk loading (Shore's ``bulkld``): a B+tree built bottom-up from a stream of sorted key/element pairs.

Inserting sorted keys one by one splits every leaf in half and logs each
entry; a *bulk load* instead fills the leaves left to right, each to a
*fill factor* of its room (0.9: a tenth left for later inserts), links them
both ways as it goes, and builds each level above from the first sort key
of each page below, bottom-up, until one page holds the top level. Shore
loads B-trees "from files of sorted key-value pairs, as long as the keys
are in lexicographic form" (`docs/sources.md#bulk-load`); minidb's keys are
encoded that way (:mod:`minidb.pagestore.btree.keydesc`).

Invariants of a loaded tree (those of :mod:`minidb.pagestore.btree.btree`,
which :func:`~minidb.pagestore.btree.verify.check_tree` checks):

- every page but the last of each level holds entries up to the fill factor
  (at least one entry on a leaf, at least two children on an interior page
  but possibly the last one of its level, which may hold one);
- a page's separator in its parent is the sort key of its first entry (or,
  for an interior page, of its leftmost subtree), so every sort key of a
  subtree lies in [separator, next separator);
- the root is the page the index was created with (the root never moves):
  the top level is written into it at the end; a load that fits one leaf
  leaves the root a leaf.

**Input order.** The pairs must come in strictly increasing sort key order:
by key in a unique index; by key, then element, in a non-unique one (Shore's
bulk load did not sort the elements of equal keys, its bug GNATS 116;
minidb requires them sorted). The first pair out of order, or repeating the
previous key (unique index) or key and element (non-unique), stops the
load with an error naming that key, decoded, and its position (counting
from 0); the caller (:meth:`~minidb.pagestore.btree.index.IndexManager.bulk_load`)
then rolls the transaction back to before the index was created, so no
partial index is left.

**Logging.** The index is created as a LOAD store
(:mod:`minidb.pagestore.files.storeprops`) in the caller's transaction, so
it logs as a LOAD file does: the store's creation, its directory entry, each
page's allocation and ``page_format`` are logged; the entries, headers and
links put on its pages are *not*. At commit its pages are marked regular,
written and fsynced before the commit entry, and the store becomes REGULAR
(:mod:`minidb.pagestore.transactions.loadstores`); the first later change to
a loaded page logs its whole image first. A crash before the commit entry is
durable makes the transaction a loser: restart undoes the allocations and
the store's creation, so no index is left, whatever pages reached the disk.
A crash after it finds every page on disk.

Worked example (512-byte pages, unique ``u4`` keys, 40-byte elements, fill
0.9): a keyed page has 442 bytes for entries and slots, 397 of them at fill
0.9; a leaf entry takes 2 + 4 + 40 bytes plus a 4-byte slot, so 7 entries
fill a leaf to 350 bytes (an 8th would make 400); 100 pairs make 15 leaves
(the last with 2 entries), whose 14 separators (child 4 + key 4 + slot 4
bytes each) fit one page, written into the root: a tree of height 2, 16
pages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.btree.btree import TREE, DuplicateKeyError
from minidb.pagestore.btree.keydesc import KeyDescriptor
from minidb.pagestore.btree.keyed import (
    HEADER_SLOT,
    LEAF_LEVEL,
    leaf_entry,
    log_header,
    log_insert_slots,
    log_link,
    node_entry,
)
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE
from minidb.pagestore.wal.logrec import LogContext


class UnsortedInputError(BadRequestError):
    """A bulk load's pairs are not in increasing key order."""


@dataclass(frozen=True)
class LoadReport:
    """What a bulk load built: ``rows`` pairs in ``leaves`` leaves, ``pages`` pages in all, ``height`` levels."""

    rows: int
    leaves: int
    pages: int
    height: int


@dataclass
class _Level:
    """The page being filled at one level (1: the leaves): its entries, and what its parent will get."""

    level: int
    entries: list[bytes] = field(default_factory=list)
    size: int = 0  # bytes the entries take, slots included
    pid0: int = 0  # an interior page's leftmost child
    first: bytes | None = None  # the sort key the page starts with: its separator in the parent
    pages: int = 0  # pages written at this level


def page_room(page_size: int) -> int:
    """The bytes a keyed page has for entries and their slots."""
    return page_size - HEADER_SIZE - FOOTER_SIZE - HEADER_SLOT


def check_fill(fill: Any) -> float:
    if isinstance(fill, bool) or not isinstance(fill, (int, float)) or not 0 < fill <= 1:
        raise BadRequestError(f"fill factor {fill!r} must be a number in (0, 1]")
    return float(fill)


class BulkLoader:
    """Builds the tree rooted at ``root`` (an empty leaf) from sorted pairs (see the module documentation)."""

    def __init__(self, volume: Any, xct: LogContext, root: PageId, unique: bool, desc: KeyDescriptor,
                 fill: float = 0.9):
        self.volume = volume
        self.xct = xct
        self.tree = TREE.call(volume, root, unique)
        self.unique = unique
        self.desc = desc
        self.budget = int(check_fill(fill) * page_room(volume.bp.page_size))
        self.levels = [_Level(LEAF_LEVEL)]
        self.rows = 0
        self._last: bytes | None = None
        self._prev_leaf = 0

    def load(self, pairs: Iterable[tuple[bytes, bytes]]) -> LoadReport:
        """Add every (encoded key, element) of ``pairs``, then finish the tree."""
        for key, el in pairs:
            self.add(key, el)
        return self.finish()

    def add(self, key: bytes, el: bytes) -> None:
        """Add the next pair (its sort key above the previous one's) to the leaf being filled."""
        sk = key if self.unique else key + el
        if self._last is not None and sk <= self._last:
            self._refuse(key, el, sk)
        self.tree._check_size(key, el)
        data = leaf_entry(key, el)
        need = len(data) + SLOT_SIZE
        leaves = self.levels[0]
        if leaves.entries and leaves.size + need > self.budget:
            self._flush(0)
        if not leaves.entries:
            leaves.first = sk
        leaves.entries.append(data)
        leaves.size += need
        self._last = sk
        self.rows += 1

    def _refuse(self, key: bytes, el: bytes, sk: bytes) -> None:
        where = f"{self.tree.root.stid}: bulk load: key {self.desc.decode(key)!r} at position {self.rows}"
        if sk == self._last:
            what = "the key" if self.unique else "the key and element"
            raise DuplicateKeyError(f"{where} repeats {what} before it" + (" (a unique index)" if self.unique else ""))
        order = "key" if self.unique else "key and element"
        raise UnsortedInputError(f"{where} is below the one before it: the input must be sorted by {order}")

    def _add_child(self, i: int, child: int, sk: bytes) -> None:
        """Give the page being filled at level index ``i`` (an interior level) the child ``child`` starting at ``sk``."""
        lv = self.levels[i]
        if lv.first is None:
            lv.pid0, lv.first = child, sk
            return
        data = node_entry(child, sk)
        need = len(data) + SLOT_SIZE
        if lv.entries and lv.size + need > self.budget:
            self._flush(i)
            lv.pid0, lv.first = child, sk
            return
        lv.entries.append(data)
        lv.size += need

    def _flush(self, i: int) -> None:
        """Write the page being filled at level index ``i`` to a new page; its parent level gets it."""
        lv = self.levels[i]
        page = self.tree._new_page(self.xct, lv.level, lv.pid0)
        number = page.pid.page
        try:
            log_insert_slots(self.volume, self.xct, page, 1, lv.entries)
            if lv.level == LEAF_LEVEL:
                log_link(self.volume, self.xct, page, self._prev_leaf, 0)
        finally:
            self.volume.bp.unfix(page, dirty=True)
        if lv.level == LEAF_LEVEL:
            if self._prev_leaf:
                prev = self.tree._fix(self._prev_leaf, EX)
                try:
                    log_link(self.volume, self.xct, prev, prev.prev, number)
                finally:
                    self.volume.bp.unfix(prev, dirty=True)
            self._prev_leaf = number
        first = lv.first
        lv.entries, lv.size, lv.pid0, lv.first = [], 0, 0, None
        lv.pages += 1
        if i + 1 == len(self.levels):
            self.levels.append(_Level(lv.level + 1))
        self._add_child(i + 1, number, first)

    def finish(self) -> LoadReport:
        """Write the pages still being filled, bottom-up; the top level's goes into the root."""
        i = 0
        while i + 1 < len(self.levels):
            self._flush(i)
            i += 1
        top = self.levels[-1]
        root = self.tree._fix(self.tree.root.page, EX)
        try:
            if top.level != LEAF_LEVEL:
                log_header(self.volume, self.xct, root, top.level, top.pid0)
            if top.entries:
                log_insert_slots(self.volume, self.xct, root, 1, top.entries)
        finally:
            self.volume.bp.unfix(root, dirty=True)
        pages = sum(lv.pages for lv in self.levels) + 1
        return LoadReport(self.rows, max(self.levels[0].pages, 1), pages, len(self.levels))
