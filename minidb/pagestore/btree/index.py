"""Indexes: B+trees with typed keys, created in a transaction and found through the store directory.

An **index** is a store of kind INDEX whose pages form one B+tree
(:mod:`minidb.pagestore.btree.btree`). Its entry in the store directory
(:mod:`minidb.pagestore.directory`) records its root page, whether it
is unique and its key descriptor (:mod:`minidb.pagestore.btree.keydesc`).
The :class:`IndexManager` reads it with a lookup in the directory's
B+tree (which the storage manager hands it) at the first operation on the
index, and remembers it for the next ones, whichever transaction makes
them, so that an operation searches one tree, the index's, not two.
**The descriptor remembered** is used only while nothing could have
changed the directory since before it was read: no entry added or removed
(the directory's ``changes``: an index created or destroyed, by any
transaction, committed or not) and no rollback ended (the transaction
manager's ``rollbacks``: an abort, a rollback to a save point, an
operation undoing its own half, restart's losers). So an aborted creation
or destruction leaves nothing stale, and another transaction's uncommitted
change is seen exactly as a lookup in the directory would see it. The
manager lives as long as its mounted volume: it never outlives a crash,
and never sees restart's redo (which changes the directory's pages
without either count), because only transactions fill it, and they run
after restart. The tree it remembers with the descriptor holds no
transaction's state (each operation passes its transaction), so
transactions share it.
Users give keys as Python values (an int for ``"i4"``, a tuple for
``"u2,str"``) and elements as bytes; the manager encodes the keys and hands
bytes to the tree.

Each operation is all-or-nothing: on an error half-way (a duplicate key
after a split, a full volume), the transaction rolls back to where the
operation began (splits already done stay: they are compensated).

- ``create_index(t, key_desc, unique=True)``: a new store, its root (an
  empty leaf), its directory entry, all undone if ``t`` aborts;
- ``insert``, ``remove``, ``update`` (the element of a key: a remove and an
  insert), ``lookup`` (the elements of a key), ``scan`` (a range, forward or
  backward, each bound inclusive, exclusive or open);
- ``bulk_load(t, key_desc, pairs, fill=0.9)``: a new index built bottom-up
  from sorted pairs (:mod:`minidb.pagestore.btree.bulkload`), all of it
  undone on an error;
- ``destroy_index``: the store goes at commit, as a file's do;
- ``check(stid)``: the structure invariants (:mod:`minidb.pagestore.btree.verify`).

**Locks.** Each operation first locks the index's store IX (to change) or
IS (to read), then takes its key-value locks in the tree
(:mod:`minidb.pagestore.btree.btree`, ARIES/KVL) through the transaction
manager's locking policy: with a lock manager, transactions in several
threads wait for each other's keys; without one (the default), every
request is granted. ``lock_timeout`` bounds a wait (None: no bound; 0: a
lock held by another transaction refuses the operation at once with
:class:`~minidb.pagestore.lock.LockTimeout`, changing nothing).
:meth:`IndexManager.lock_name` prints a key-value lock with its key decoded
(``k(1.5.7)`` rather than ``k(1.5.0x80000007)``).

Worked example::

    ix = sm.create_index(t, "i4")                     # s(1.5), root p(1.5.20)
    sm.index_insert(t, ix, 7, b"seven")
    sm.index_lookup(t, ix, 7)                         # [b'seven']
    list(sm.index_scan(t, ix, lo=0, hi=10, hi_incl=False))   # [(7, b'seven')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ContextManager

from minidb import impl
from minidb.errors import SimulatedCrash
from minidb.pagestore.btree.btree import TREE, Tree, create_tree
from minidb.pagestore.btree.bulkload import BulkLoader, LoadReport, check_fill
from minidb.pagestore.btree.keydesc import KeyDescriptor, successor
from minidb.pagestore.btree.verify import check_tree
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.files.sinfo import LockProtocol, SInfo, StoreKind
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.transactions.xct import SavePoint
from minidb.pagestore.transactions.xctmgr import all_or_nothing


@dataclass(frozen=True)
class Index:
    """What the directory says of one index."""

    stid: StoreId
    root: PageId
    unique: bool
    desc: KeyDescriptor

    def tree(self, volume: Any, locks: Any = None, lock_timeout: float | None = None) -> Tree:
        return TREE.call(volume, self.root, self.unique, locks, lock_timeout)


class IndexManager:
    """The B+tree indexes of one volume (see the module documentation)."""

    def __init__(self, volume: Any, xcts: Any, directory: Any, lock_timeout: float | None = None):
        self.volume = volume
        self.xcts = xcts
        self.directory = directory
        self.lock_timeout = lock_timeout  # of the key-value locks waited for (None: no limit)
        # index -> (the epoch before the read, its descriptor, its tree): see the module documentation
        self._known: dict[StoreId, tuple[tuple[int, int], Index, Tree]] = {}

    def _atomic(self, xct: Any) -> ContextManager[None]:
        return all_or_nothing(self.xcts, xct)

    # -- indexes ---------------------------------------------------------------------------------
    def create_index(self, xct: Any, key_desc: str | KeyDescriptor, unique: bool = True,
                     load: bool = False) -> StoreId:
        """A new, empty index; ``load``: a LOAD store (its pages' changes unlogged, forced at ``xct``'s
        commit, where it becomes regular: what a bulk load fills). Names are the storage manager's
        (the root index, store 2)."""
        desc = key_desc if isinstance(key_desc, KeyDescriptor) else KeyDescriptor(key_desc)
        self.xcts.check_active(xct)
        flags = StoreFlags.LOAD_FILE if load else StoreFlags.REGULAR
        with self._atomic(xct):
            stid = self.volume.create_store(flags, xct)
            self.xcts.lock(xct, stid, "EX")
            if load:
                self.xcts.note_loading(xct, stid)
            root = create_tree(self.volume, xct, stid, flags)
            self.directory.add(xct, SInfo(stid.store, StoreKind.INDEX, root=root.page, unique=bool(unique),
                                          kdesc=desc.pack(), cc=LockProtocol.KVL))
        return stid

    def bulk_load(self, xct: Any, key_desc: str | KeyDescriptor, pairs: Iterable[tuple[Any, bytes]],
                  unique: bool = True, fill: float = 0.9) -> tuple[StoreId, LoadReport]:
        """A new index built from ``pairs`` (key, element) sorted by key (:mod:`~minidb.pagestore.btree.bulkload`).

        On any error (input out of order, a duplicate, a bad key, the
        iterator's own), ``xct`` is rolled back to before the index existed,
        and the error raised; the index is created as a LOAD store, regular
        at ``xct``'s commit.
        """
        desc = key_desc if isinstance(key_desc, KeyDescriptor) else KeyDescriptor(key_desc)
        check_fill(fill)
        self.xcts.check_active(xct)
        point = SavePoint(xct.txn_id, xct.last_lsn)
        try:
            stid = self.create_index(xct, desc, unique, load=True)
            ix = self.index(stid)
            loader = BulkLoader(self.volume, xct, ix.root, ix.unique, desc, fill)
            report = loader.load((desc.encode(k), self._element(e)) for k, e in pairs)
        except Exception as error:
            if not isinstance(error, SimulatedCrash) and xct.last_lsn != point.lsn:
                self.xcts.rollback_to(xct, point, unlogged_ok=True)
            raise
        return stid, report

    def destroy_index(self, xct: Any, stid: StoreId) -> None:
        """Mark the index's store for deletion at commit and drop its directory entry."""
        self.xcts.check_active(xct)
        self.index(stid)
        self.xcts.lock(xct, stid, "EX")
        with self._atomic(xct):
            self.volume.destroy_store(stid, xct)
            self.xcts.note_store_destroyed(xct, stid)
            self.directory.remove(xct, stid.store)

    def index(self, stid: StoreId) -> Index:
        """The index ``stid`` (a clear error if it is not one)."""
        if not isinstance(stid, StoreId) or stid.vol != self.volume.vid:
            raise BadRequestError(f"{stid!r} is not a store of volume v({self.volume.vid})")
        info = self.directory.get(stid.store)
        if info is None or info.kind != StoreKind.INDEX:
            raise BadRequestError(f"{stid} is not an index")
        return Index(stid, PageId(stid.vol, stid.store, info.root), info.unique, KeyDescriptor.unpack(info.kdesc))

    def _epoch(self) -> tuple[int, int]:
        """What moves whenever a remembered descriptor may have gone stale (see the module documentation)."""
        return self.directory.changes, self.xcts.rollbacks

    def index_for(self, stid: StoreId) -> tuple[Index, Tree]:
        """The index ``stid`` and its tree (which takes the key-value locks of the transaction each operation
        passes it): as read before, if nothing could have changed it since, else read from the directory (and
        remembered with the epoch taken before the read). A tree made before ``lock_timeout`` changed is made
        again, with the new timeout."""
        known = self._known.get(stid) if isinstance(stid, StoreId) else None
        epoch = self._epoch()
        if known is not None and known[0] == epoch and known[2].lock_timeout == self.lock_timeout:
            return known[1], known[2]
        ix = self.index(stid)
        tree = ix.tree(self.volume, self.xcts, self.lock_timeout)
        self._known[stid] = (epoch, ix, tree)
        return ix, tree

    def indexes(self) -> list[StoreId]:
        return sorted(StoreId(self.volume.vid, info.snum) for _, info in self.directory.entries()
                      if info.kind == StoreKind.INDEX)

    # -- entries ------------------------------------------------------------------------------
    def _begin(self, xct: Any, stid: StoreId, intent: str) -> tuple[Index, Tree]:
        """The index and its tree, taking key-value locks for ``xct``, once its store is locked ``intent``."""
        self.xcts.check_active(xct)
        ix, tree = self.index_for(stid)
        self.xcts.lock(xct, stid, intent, timeout=self.lock_timeout)
        return ix, tree

    @staticmethod
    def _element(el: Any) -> bytes:
        if not isinstance(el, (bytes, bytearray)):
            raise BadRequestError(f"an element is bytes, not {type(el).__name__}")
        return bytes(el)

    def insert(self, xct: Any, stid: StoreId, key: Any, el: bytes) -> None:
        ix, tree = self._begin(xct, stid, "IX")
        enc, el = ix.desc.encode(key), self._element(el)
        with self._atomic(xct):
            tree.insert(xct, enc, el)

    def remove(self, xct: Any, stid: StoreId, key: Any, el: bytes | None = None) -> bytes:
        """Remove ``key`` (and element ``el``, needed in a non-unique index); return the element removed."""
        ix, tree = self._begin(xct, stid, "IX")
        enc = ix.desc.encode(key)
        return tree.remove(xct, enc, None if el is None else self._element(el))

    def update(self, xct: Any, stid: StoreId, key: Any, el: bytes, old_el: bytes | None = None) -> bytes:
        """Give ``key`` the element ``el`` (in a non-unique index, in place of ``old_el``); return the old one."""
        ix, tree = self._begin(xct, stid, "IX")
        enc, el = ix.desc.encode(key), self._element(el)
        with self._atomic(xct):
            old = tree.remove(xct, enc, None if old_el is None else self._element(old_el))
            tree.insert(xct, enc, el)
        return old

    def lookup(self, xct: Any, stid: StoreId, key: Any) -> list[bytes]:
        """The elements of ``key``, in element order (at most one in a unique index)."""
        ix, tree = self._begin(xct, stid, "IS")
        return tree.find(ix.desc.encode(key), xct)

    def scan(self, xct: Any, stid: StoreId, lo: Any = None, hi: Any = None, lo_incl: bool = True,
             hi_incl: bool = True, backward: bool = False) -> Iterator[tuple[Any, bytes]]:
        """(key, element) for the keys between ``lo`` and ``hi`` (None: open), in key order or backward."""
        ix, tree = self._begin(xct, stid, "IS")
        low = None if lo is None else ix.desc.encode(lo)
        high = None if hi is None else ix.desc.encode(hi)
        if low is not None and not lo_incl:
            low = successor(low)
            if low is None:
                return iter(())
        if high is not None and hi_incl:
            high = successor(high)
        return ((ix.desc.decode(k), e) for k, e in tree.scan(low, high, backward, xct))

    def lock_name(self, lock_id: LockId) -> str:
        """``lock_id`` as the lock table prints it, a key-value lock of an index with its key decoded:
        ``k(1.5.7)``, ``k(1.5.EOF)``; in a non-unique index key and element, ``k(1.5.7,b'el')``."""
        if lock_id.code != "k" or not lock_id.key:
            return str(lock_id)
        try:
            ix = self.index(StoreId(*lock_id.numbers))
            key, end = ix.desc.decode_prefix(lock_id.key)
        except BadRequestError:  # not an index (any more), or not one of its keys
            return str(lock_id)
        rest = "" if ix.unique else f",{lock_id.key[end:]!r}"
        return f"k({lock_id.numbers[0]}.{lock_id.numbers[1]}.{key!r}{rest})"

    def check(self, stid: StoreId) -> list[str]:
        """The structure problems of index ``stid`` (empty: sound)."""
        ix = self.index(stid)
        return check_tree(self.volume.bp, ix.root, ix.unique)[0]

    def entries(self, stid: StoreId) -> list[tuple[Any, bytes]]:
        """Every (key, element), read leaf by leaf without a transaction (for checks and pictures)."""
        ix = self.index(stid)
        return [(ix.desc.decode(k), e) for k, e in check_tree(self.volume.bp, ix.root, ix.unique)[1]]


INDEX_MANAGER = impl.hot_spot(IndexManager)  # built as INDEX_MANAGER.call(...) for each mounted volume
