"""The B+tree, accelerated: the descent, a unique lookup, an insert and a remove read the keyed pages' bytes
in place.

The reference (:class:`minidb.pagestore.btree.btree.Tree`) reads a page
through three views: the tree asks :class:`~minidb.pagestore.btree.keyed.KeyedPage`
for a sort key, which asks :class:`~minidb.pagestore.pages.slotted.SlottedPage`
for the slot's bytes, which reads the page header to check the slot number;
every step is a Python call, a property, a new tuple. This twin does the same
reading with fewer steps, and nothing else differently:

- **the binary search inline** (:func:`search`): the page header's entry count
  and slot 0's level and ``pid0`` read once, then one ``unpack_from`` of the
  slot-table entry per probe and a slice of the record. Each probe makes the
  reference's checks (an entry in use and inside the page, a key inside its
  entry), with its errors. In a unique index's leaf the search stops at a
  probe that finds the key itself: the leaf holds it once, so the entries
  before it are the smaller ones and its index is ``bisect_left``'s answer,
  found about one probe sooner. An interior page's ``bisect_right`` is a
  ``bisect_left`` of ``sk + 00``, the next byte string, so both loops make one
  comparison per probe.
- **the descent without views**: one loop from the root to the leaf, the
  same latches in the same order (SH, the leaf's level in ``mode``, an EX
  root leaf fixed again), each page fixed and checked in the loop itself as
  the reference's ``_fix`` checks it (tag and page id), from the header's
  bytes. Lookups, inserts and removes ask for no fences, so none are decoded.
- **one decode of the entry found**: a lookup, an insert and a remove decode
  the entry at the search's position once and use it for the answer, the
  duplicate check and the next key (the reference decodes it for each).
- **a unique lookup without its retry closure**: the first attempt is made
  directly; one that must wait for a lock waits as the reference does and
  goes on through the reference's ``find``.
- **key-value lock ids built once checked**: the store's numbers are checked
  when the tree is made; each lock id is then built as the tuple
  :meth:`~minidb.pagestore.lock.lockid.LockId.kvl` would return.
- **no request where every request is granted**: a transaction manager whose
  locking policy is :class:`~minidb.pagestore.transactions.locking.NoLocking`
  (no lock manager: a single thread, a bench) grants every key-value lock at
  once and holds nothing, so no lock id is built and nothing is asked. The
  policy is read at each request (by a unique lookup's hit inline, without
  the call), so a manager given another one meanwhile is asked again.

Everything else (splits, scans, waits, the next key on the leaves to the
right, undo) is the reference's code, inherited. The same locks are asked
for in the same order, the same entries are logged, the same errors raised:
the log and the volume get the same bytes. A tree keeps nothing between
operations but its root, its store's numbers and its volume's buffer pool
(which a volume keeps for its life), so nothing can go stale.
``tests/agreement/scn_btree.py`` holds it to the reference.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from minidb.pagestore.btree import btree as reference
from minidb.pagestore.btree.keyed import CHILD, KEYED_HEADER, KLEN, LEAF_LEVEL
from minidb.pagestore.buffer.latch import EX, SH, LatchMode
from minidb.pagestore.ids import PageId
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.pages.page import FOOTER_SIZE, SLOT, SLOT_SIZE, PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.transactions.locking import NoLocking
from minidb.pagestore.wal.logdef import BTREE_INSERT, BTREE_REMOVE
from minidb.pagestore.wal.logrec import APPLY_AND_LOG

_TAG_AT, _BTREE = 28, int(PageTag.BTREE)  # the page header's tag byte (pages.page draws the header)
_PID_AT, _PID = 8, struct.Struct("<III")  # the page id: volume, store, page
_NSLOTS_AT, _U16 = 30, struct.Struct("<H")
_slot_unpack, _klen_unpack, _child_unpack = SLOT.unpack_from, KLEN.unpack_from, CHILD.unpack_from
_header_unpack = KEYED_HEADER.unpack_from
_new_tuple = tuple.__new__  # a PageId or LockId from numbers already checked, without its Python-level __new__


def _reference_search(page: SlottedPage, sk: bytes, unique: bool) -> tuple[int, int, int, int]:
    """:func:`search` by the reference's views: for a page whose bytes :func:`search` finds wrong, so that
    the damage is reported by the reference's reading, with its error."""
    kp = reference.KeyedPage(page)
    level, pid0 = kp.level, kp.pid0
    if level == LEAF_LEVEL:
        return kp.position(sk, unique), kp.count, level, pid0
    return kp.child_for(sk)[0] + 1, kp.count, level, pid0


def search(page: SlottedPage, sk: bytes, unique: bool) -> tuple[int, int, int, int]:
    """(position, entries, level, pid0) of keyed ``page`` for sort key ``sk``. On a leaf, the position is
    ``KeyedPage.position`` (``bisect_left`` of the sort keys); on an interior page, the index of the
    separator ``KeyedPage.child_for`` routes ``sk`` by, plus one (``bisect_right``)."""
    buf = page.buf
    size = len(buf)
    n = _U16.unpack_from(buf, _NSLOTS_AT)[0] - 1
    base = size - FOOTER_SIZE - SLOT_SIZE  # slot 0's entry; slot s's is SLOT_SIZE * s below
    offset, length = _slot_unpack(buf, base)
    if n < 0 or not offset or offset + length > size or length != KEYED_HEADER.size:
        return _reference_search(page, sk, unique)
    level, pid0 = _header_unpack(buf, offset)
    lo, hi = 0, n
    slot1 = base - SLOT_SIZE  # entry 0's slot entry; entry i's is 4 * i below
    if unique and level == LEAF_LEVEL:  # klen | key | el: bisect_left by the key
        while lo < hi:
            mid = (lo + hi) >> 1
            offset, length = _slot_unpack(buf, slot1 - (mid << 2))
            limit = offset + length  # where the entry ends
            if not offset or limit > size:
                return _reference_search(page, sk, unique)
            start = offset + 2
            end = start + _klen_unpack(buf, offset)[0]
            if end > limit:
                return _reference_search(page, sk, unique)
            key = buf[start:end]
            if key < sk:
                lo = mid + 1
            elif key == sk:  # a unique leaf holds a key once: the entries before it are the smaller ones
                return mid, n, level, pid0
            else:
                hi = mid
    else:  # the sort key is the rest of the entry: bisect_right past an interior page's child (4 bytes),
        # bisect_left past a leaf's klen (2 bytes; key + el in an index that is not unique). bisect_right is
        # bisect_left of the next byte string, sk + 00 (x <= sk is x < sk + 00): one comparison for both.
        skip, bound = (4, sk + b"\x00") if level != LEAF_LEVEL else (2, sk)
        while lo < hi:
            mid = (lo + hi) >> 1
            offset, length = _slot_unpack(buf, slot1 - (mid << 2))
            end = offset + length
            if not offset or end > size:
                return _reference_search(page, sk, unique)
            if buf[offset + skip:end] < bound:
                lo = mid + 1
            else:
                hi = mid
    return lo, n, level, pid0


def leaf_at(page: SlottedPage, i: int) -> tuple[bytes, bytes]:
    """(key, el) of entry ``i`` (below the count) of leaf ``page``, as ``KeyedPage.leaf`` reads it."""
    buf = page.buf
    offset, length = _slot_unpack(buf, len(buf) - FOOTER_SIZE - SLOT_SIZE * (i + 2))
    if not offset:  # the reference's read refuses a free slot
        return reference.KeyedPage(page).leaf(i)
    data = bytes(buf[offset:offset + length])  # parse_leaf's reading, inline: klen | key | el
    end = 2 + _klen_unpack(data)[0]
    return data[2:end], data[end:]


@dataclass
class Tree(reference.Tree):
    def __post_init__(self) -> None:
        self._kvl_numbers = LockId.kvl(self.root.stid, b"").numbers  # checked once, as LockId.kvl checks them
        self._bp = self.volume.bp  # the volume's buffer pool, which a volume never changes
        self._vol, self._store = self.root.vol, self.root.store  # the root's, read once (a tree's root never moves)

    def _lock(self, xct: Any, sk: bytes | None, mode: str, duration: str = "long") -> None:
        locks = self.locks
        if locks is None or xct is None or type(getattr(locks, "locks", None)) is NoLocking:
            return  # NoLocking grants every request: nothing to ask
        super()._lock(xct, sk, mode, duration)

    def _fix(self, number: int, mode: LatchMode) -> SlottedPage:
        vol, store = self._vol, self._store
        page = self._bp.fix(_new_tuple(PageId, (vol, store, number)), mode)
        buf = page.buf
        if buf[_TAG_AT] != _BTREE or _PID.unpack_from(buf, _PID_AT) != (vol, store, number):
            self._bp.unfix(page)
            return super()._fix(number, mode)  # fixes it again and raises the reference's error
        return page

    def _kvl(self, sk: bytes | None) -> LockId:
        if type(sk) is not bytes:
            return super()._kvl(sk)
        return _new_tuple(LockId, ("k", self._kvl_numbers, sk))

    def _next_sk(self, page: SlottedPage, i: int) -> bytes | None:
        if 0 <= i < _U16.unpack_from(page.buf, _NSLOTS_AT)[0] - 1:
            key, el = leaf_at(page, i)
            return key if self.unique else key + el
        return super()._next_sk(page, i)

    # -- the descent ---------------------------------------------------------------------------------
    def _leaf(self, sk: bytes, mode: LatchMode) -> tuple[SlottedPage, int, int]:
        """The leaf for ``sk`` fixed in ``mode`` (latched as ``descend`` latches), with its position and
        entry count from :func:`search`."""
        unique, bp = self.unique, self._bp
        fix, vol, store = bp.fix, self._vol, self._store  # each page fixed and checked inline, as _fix does
        number, latch = self.root[2], SH  # the root's page number, fixed SH first
        page = None
        try:
            while True:
                below = fix(_new_tuple(PageId, (vol, store, number)), latch)
                buf = below.buf
                if buf[_TAG_AT] != _BTREE or _PID.unpack_from(buf, _PID_AT) != (vol, store, number):
                    bp.unfix(below)
                    below = super()._fix(number, latch)  # fixes it again and raises the reference's error
                if page is not None:
                    bp.unfix(page)  # the parent, once its child is latched
                page = below
                i, n, level, pid0 = search(page, sk, unique)
                if level == LEAF_LEVEL:
                    if latch is mode:
                        return page, i, n
                    bp.unfix(page)  # a root leaf fixed SH for an EX descent: fixed again, EX
                    page, latch = None, EX
                    continue
                if latch is not SH:  # the root, fixed EX, grew meanwhile: start again
                    bp.unfix(page)
                    page, latch = None, SH
                    continue
                slot = len(buf) - FOOTER_SIZE - SLOT_SIZE - (i << 2)  # the slot entry of entry i - 1
                if i:
                    offset = _slot_unpack(buf, slot)[0]
                    number = _child_unpack(buf, offset)[0] if offset else _separator(page, i - 1)
                else:
                    number = pid0
                if i < n and not _slot_unpack(buf, slot - SLOT_SIZE)[0]:
                    _separator(page, i)  # the high fence's entry, which the reference's descent reads
                latch = mode if level == LEAF_LEVEL + 1 else SH
        except BaseException:
            if page is not None:
                bp.unfix(page)
            raise

    # -- a lookup, an insert, a remove -----------------------------------------------------------------
    def find(self, key: bytes, xct: Any = None) -> list[bytes]:
        if not self.unique:
            return super().find(key, xct)
        try:  # the reference's _until_granted, its first attempt (its _find_unique) inline, without the closure
            page, i, n = self._leaf(key, SH)
            try:
                if i < n:
                    found, el = leaf_at(page, i)  # a unique index: the sort key is the key
                    locks = self.locks  # _lock's test inline: NoLocking grants every request, nothing to ask
                    if locks is not None and xct is not None and type(getattr(locks, "locks", None)) is not NoLocking:
                        self._lock(xct, found, "SH")
                    return [el] if found == key else []
                found = self._next_sk(page, i)
                self._lock(xct, found, "SH")
                return [reference.KeyedPage(page).leaf(i)[1]] if found == key else []
            finally:
                self._bp.unfix(page)
        except reference._MustWait as wait:
            self._wait(xct, wait)
        return super().find(key, xct)

    def _insert_once(self, xct: Any, key: bytes, el: bytes, sk: bytes, need: int) -> None:
        page, i, n = self._leaf(sk, EX)
        try:
            if page.nfree >= need:
                self._insert_at(xct, page, i, n, key, el, sk)
                return
        finally:
            self._bp.unfix(page, dirty=True)
        self._insert_splitting(xct, key, el, sk, need)

    def _insert_on_leaf(self, xct: Any, page: SlottedPage, key: bytes, el: bytes, sk: bytes) -> None:
        i, n, _, _ = search(page, sk, self.unique)
        self._insert_at(xct, page, i, n, key, el, sk)

    def _insert_at(self, xct: Any, page: SlottedPage, i: int, n: int, key: bytes, el: bytes, sk: bytes) -> None:
        """The reference's ``_insert_on_leaf`` at position ``i`` of the ``n`` entries, entry ``i`` decoded once."""
        if i < n:
            k, e = leaf_at(page, i)
            after = k if self.unique else k + e
            if after == sk:  # a duplicate: the reference's lock and error
                super()._insert_on_leaf(xct, page, key, el, sk)
        else:
            after = self._next_sk(page, i)
        self._lock(xct, after, "IX", "instant")  # no scan holds the gap
        self._lock(xct, sk, "EX")
        APPLY_AND_LOG.call(self.volume.log, page, BTREE_INSERT, self._entry_values(i, key, el), xct)

    def _remove_once(self, xct: Any, key: bytes, el: bytes | None, sk: bytes) -> bytes:
        page, i, n = self._leaf(sk, EX)
        try:
            found = leaf_at(page, i) if i < n else None
            if found is None or found[0] != key or (el is not None and found[1] != el):
                return self._remove_on_leaf(xct, page, key, el, sk)  # the reference's lock and error
            self._lock(xct, self._next_sk(page, i + 1), "EX")
            self._lock(xct, found[0] if self.unique else found[0] + found[1], "EX")
            APPLY_AND_LOG.call(self.volume.log, page, BTREE_REMOVE, self._entry_values(i, key, found[1]), xct)
            return found[1]
        finally:
            self._bp.unfix(page, dirty=True)


def _separator(page: SlottedPage, i: int) -> int:
    """The child of entry ``i`` of interior ``page``, read by the reference: for a free slot, which its
    read refuses, with its error."""
    return reference.KeyedPage(page).node(i)[0]
