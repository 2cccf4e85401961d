"""The store directory (Shore's directory manager): store 1, a B+tree from store number to descriptor.

Every store a file or an index uses has an entry here: its store number
(key, ``u4``, :mod:`minidb.pagestore.btree.keydesc`) and its descriptor
(element, :class:`~minidb.pagestore.files.sinfo.SInfo`: kind, lock
protocol, unique flag, large-record store, root page, key descriptor).
A file has one entry, for its small-record store (the descriptor names the
large-record store); an index one. Stores 1 and 2 have none: their roots
are in the volume header (:mod:`minidb.pagestore.volume.volheader`), the
one place that can be read before the directory.

Invariants:

- the directory is a unique B+tree whose root never moves
  (:mod:`minidb.pagestore.btree.btree`), so every invariant of
  :func:`~minidb.pagestore.btree.verify.check_tree` holds for it;
- each entry's store is in use on the volume (its store node is), and each
  descriptor decodes;
- every read is a lookup in the tree (no cache here to go stale): what a
  rolled-back creation or destruction changed is gone as soon as the
  rollback returns. ``changes`` counts the entries added and removed
  (moved once each is done, or has failed): a reader above that remembers
  a descriptor (the index manager, for one transaction) trusts it only
  while this count, and the transaction manager's count of rollbacks
  (which undo entries without coming here), have not moved since before
  it read it.

Creating a store adds its entry, destroying it removes it, both with the
tree's logged operations (``btree_insert``, ``btree_remove``) inside the
caller's transaction, so they are undone (logically, by a fresh search)
when it rolls back and redone or undone by restart exactly like an
index's keys. A split of the directory is a nested top action and stays.
The caller holds the store's EX lock, so no two transactions change the
same entry.

Worked example (512-byte pages, ``ext_sz`` 4): the directory's root is page
4, a leaf. ``create_file(t)`` makes ``s(1.3)`` and ``s(1.4)`` and inserts
the key ``00000003`` with the descriptor of a FILE whose large records are
in store 4; ``get(3)`` descends from page 4 and returns it; aborting ``t``
removes the key again.
"""

from __future__ import annotations

import threading
from typing import Any

from minidb.pagestore.btree.btree import TREE, KeyNotFoundError
from minidb.pagestore.btree.keydesc import KeyDescriptor
from minidb.pagestore.files.sinfo import SInfo
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.volume.stores import STORE_DIRECTORY

KEY = KeyDescriptor("u4")


class StoreDirectory:
    """The entries of store 1 (see the module documentation)."""

    def __init__(self, volume: Any):
        self.volume = volume
        self.stid = StoreId(volume.vid, STORE_DIRECTORY)
        self.tree = TREE.call(volume, PageId(volume.vid, STORE_DIRECTORY, volume.header.directory_root), unique=True)
        self.changes = 0  # entries added or removed so far (see the module documentation)
        self._changes_mutex = threading.Lock()

    def add(self, xct: Any, info: SInfo) -> None:
        """The entry of a new store (a :class:`~minidb.pagestore.btree.btree.DuplicateKeyError` if it has one)."""
        try:
            self.tree.insert(xct, KEY.encode(info.snum), info.pack())
        finally:
            self._changed()

    def remove(self, xct: Any, snum: int) -> bool:
        """Remove the entry of store ``snum``; False if it has none."""
        try:
            self.tree.remove(xct, KEY.encode(snum))
        except KeyNotFoundError:
            return False
        finally:
            self._changed()
        return True

    def _changed(self) -> None:
        """Count a change, after the tree has it: a descriptor read before it is no longer trusted."""
        with self._changes_mutex:
            self.changes += 1

    def get(self, snum: int) -> SInfo | None:
        """The descriptor of store ``snum`` (None: no entry)."""
        found = self.tree.find(KEY.encode(snum))
        return SInfo.unpack(snum, found[0], f"{self.stid}") if found else None

    def entries(self) -> list[tuple[int, SInfo]]:
        """Every (store number, descriptor), by store number."""
        return [(snum, SInfo.unpack(snum, el, f"{self.stid}"))
                for snum, el in ((KEY.decode(k), el) for k, el in self.tree.scan(None, None))]
