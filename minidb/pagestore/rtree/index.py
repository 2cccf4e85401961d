"""R*-tree indexes: created in a transaction, found through the store directory, locked whole.

An **R*-tree index** is a store of kind RTREE whose pages form one R*-tree
(:mod:`minidb.pagestore.rtree.rtree`). Its entry in the store directory
records its root page and the lock protocol ``FILE``; the fanout is in
every node's header. The :class:`RTreeManager` reads the entry at each
operation, so an aborted creation leaves nothing stale. Users give boxes as
:class:`~minidb.pagestore.rtree.box.Box` or four integers and elements as
bytes.

- ``create(t, fanout=None)``: a new store, its root (an empty leaf), its
  directory entry, all undone if ``t`` aborts. The fanout ``M`` is 4 to as
  many interior entries as a page holds; by default as many entries with
  elements of up to 16 bytes as fit a page (12 on 512-byte pages, 224 on
  8192-byte ones). An element may have up to
  :func:`~minidb.pagestore.rtree.node.max_element` bytes.
- ``insert``, ``remove``: all-or-nothing (on an error half-way the
  transaction rolls back to where the operation began);
- ``search(t, stid, box, cond)``: ``overlap``, ``cover``, ``inside`` or
  ``exact``, the (box, element) pairs sorted;
- ``destroy``: the store goes at commit; ``check``, ``entries``: the
  invariants and the contents, read without a transaction.

**Locks.** The whole index, one lock on its store (Shore's ``t_cc_file``
for R*-trees): EX for ``insert`` and ``remove``, SH for ``search``, held
to commit. Readers share the index; a writer has it alone until it ends.
``lock_timeout`` bounds a wait (None: no bound; 0: an index another
transaction holds refuses the operation at once with
:class:`~minidb.pagestore.lock.LockTimeout`, changing nothing).
There are no entry locks: the R*-tree restructures too often (forced
reinsertion moves entries between nodes) for key-range locks to name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.files.sinfo import LockProtocol, SInfo, StoreKind
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.pages.page import SLOT_SIZE, StoreFlags
from minidb.pagestore.rtree.box import BOX, Box, as_box
from minidb.pagestore.rtree.node import MIN_FANOUT, max_element, max_fanout, room
from minidb.pagestore.rtree.rtree import CONDITIONS, STAT_NAMES, RTree, create_root
from minidb.pagestore.rtree.verify import check_rtree
from minidb.pagestore.transactions.xctmgr import all_or_nothing
from minidb.stats import Stats, Trace

DEFAULT_ELEMENT = 16  # the element size the default fanout leaves room for

_T = TypeVar("_T")


def default_fanout(page_size: int) -> int:
    """As many leaf entries with :data:`DEFAULT_ELEMENT`-byte elements as fit a page."""
    return min(max_fanout(page_size), room(page_size) // (BOX.size + DEFAULT_ELEMENT + SLOT_SIZE))


class RTreeManager:
    """The R*-tree indexes of one volume (see the module documentation)."""

    def __init__(self, volume: Any, xcts: Any, directory: Any, lock_timeout: float | None = None):
        self.volume = volume
        self.xcts = xcts
        self.directory = directory
        self.lock_timeout = lock_timeout  # of the index lock waited for (None: no limit; 0: refuse at once)
        self.stats = Stats("rtree", STAT_NAMES)  # counted across all the trees: pages read, splits, ...
        self.trace = Trace()  # each restructuring as a sentence (rare: no more than a few lines an insert)

    def create(self, xct: Any, fanout: int | None = None) -> StoreId:
        """A new, empty R*-tree index."""
        page_size = self.volume.bp.page_size
        fanout = default_fanout(page_size) if fanout is None else fanout
        if not isinstance(fanout, int) or not MIN_FANOUT <= fanout <= max_fanout(page_size):
            raise BadRequestError(f"an R*-tree's fanout is {MIN_FANOUT} to {max_fanout(page_size)} on "
                                  f"{page_size}-byte pages, not {fanout!r}")
        self.xcts.check_active(xct)
        with all_or_nothing(self.xcts, xct):
            stid = self.volume.create_store(StoreFlags.REGULAR, xct)
            self.xcts.lock(xct, stid, "EX")
            root = create_root(self.volume, xct, stid, fanout)
            self.directory.add(xct, SInfo(stid.store, StoreKind.RTREE, root=root.page, cc=LockProtocol.FILE))
        return stid

    def destroy(self, xct: Any, stid: StoreId) -> None:
        """Mark the index's store for deletion at commit and drop its directory entry."""
        self.xcts.check_active(xct)
        self.tree(stid)
        self.xcts.lock(xct, stid, "EX")
        with all_or_nothing(self.xcts, xct):
            self.volume.destroy_store(stid, xct)
            self.xcts.note_store_destroyed(xct, stid)
            self.directory.remove(xct, stid.store)

    def tree(self, stid: StoreId) -> RTree:
        """The R*-tree of index ``stid`` (a clear error if it is not one)."""
        if not isinstance(stid, StoreId) or stid.vol != self.volume.vid:
            raise BadRequestError(f"{stid!r} is not a store of volume v({self.volume.vid})")
        info = self.directory.get(stid.store)
        if info is None or info.kind != StoreKind.RTREE:
            raise BadRequestError(f"{stid} is not an R*-tree index")
        return RTree(self.volume, PageId(stid.vol, stid.store, info.root), self.stats, self.trace)

    def rtrees(self) -> list[StoreId]:
        return sorted(StoreId(self.volume.vid, info.snum) for _, info in self.directory.entries()
                      if info.kind == StoreKind.RTREE)

    # -- entries ------------------------------------------------------------------------------------------
    def _locked(self, xct: Any, stid: StoreId, mode: str) -> RTree:
        self.xcts.check_active(xct)
        tree = self.tree(stid)
        self.xcts.lock(xct, stid, mode, timeout=self.lock_timeout)
        return tree

    def _entry(self, tree: RTree, box: Any, el: Any) -> tuple[Box, bytes]:
        if not isinstance(el, (bytes, bytearray)):
            raise BadRequestError(f"an element is bytes, not {type(el).__name__}")
        most = max_element(self.volume.bp.page_size, tree.fanout)
        if len(el) > most:
            raise BadRequestError(f"{tree.root.stid}: an element of {len(el)} bytes; at most {most} with "
                                  f"fanout {tree.fanout} on {self.volume.bp.page_size}-byte pages")
        return as_box(box), bytes(el)

    def _change(self, xct: Any, stid: StoreId, box: Any, el: Any,
                operation: Callable[[RTree, Box, bytes], _T]) -> _T:
        tree = self._locked(xct, stid, "EX")
        box, el = self._entry(tree, box, el)
        with all_or_nothing(self.xcts, xct):
            return operation(tree, box, el)

    def insert(self, xct: Any, stid: StoreId, box: Any, el: bytes) -> None:
        """Insert (``box``, ``el``); a pair already there is a DuplicateEntryError (nothing changed)."""
        self._change(xct, stid, box, el, lambda tree, b, e: tree.insert(xct, b, e))

    def remove(self, xct: Any, stid: StoreId, box: Any, el: bytes) -> None:
        """Remove (``box``, ``el``); an absent pair is an EntryNotFoundError (nothing changed)."""
        self._change(xct, stid, box, el, lambda tree, b, e: tree.remove(xct, b, e))

    def search(self, xct: Any, stid: StoreId, box: Any, cond: str = "overlap") -> list[tuple[Box, bytes]]:
        """The (box, element) pairs whose box meets ``cond`` with ``box``, sorted."""
        if cond not in CONDITIONS:
            raise BadRequestError(f"a search condition is one of {', '.join(CONDITIONS)}, not {cond!r}")
        query = as_box(box)
        return self._locked(xct, stid, "SH").search(query, cond)

    def check(self, stid: StoreId) -> list[str]:
        """The structure problems of index ``stid`` (empty: sound)."""
        return check_rtree(self.volume, self.tree(stid).root)[0]

    def entries(self, stid: StoreId) -> list[tuple[Box, bytes]]:
        """Every (box, element), read without a transaction (for checks and pictures)."""
        return check_rtree(self.volume, self.tree(stid).root)[1]
