"""The store directory: what each store is for (store 1 of every volume).

Shore keeps, for each store, metadata the volume's maps do not hold: what
kind of structure uses it and, for a file, which store holds its large
records. This is the *store directory*, store 1 of the volume. Here its
pages are file pages holding one ``sinfo`` record per store (a B+tree in
Shore; a heap of small records is enough to find a handful of entries)::

    offset size field
       0     4  snum    the store described
       4     2  kind    StoreKind: FILE (small-record store of a file),
                        LGFILE (large-record store of a file), INDEX
       6     4  large   for a FILE, the store number of its large records
      10     4  root    for an INDEX, its root page (0 otherwise)

    0        4     6        10       14
    +--------+-----+--------+--------+
    |  snum  |kind | large  |  root  |
    +--------+-----+--------+--------+

and, for an INDEX only (:mod:`minidb.pagestore.btree`), after those 14 bytes::

      14     1  unique  1: a unique index, 0: duplicate keys allowed
      15     2  dlen    length of the key descriptor
      17  dlen  kdesc   the key descriptor, ASCII (e.g. ``i4,str``)

and, for a *named* index only, after the key descriptor (absent: no name)::

       0     1  nlen    length of the name
       1  nlen  name    the index's name, UTF-8 (unique on the volume)

Entries are added and removed inside the creating or destroying
transaction, with the same logged record operations as any file
(``rec_insert``, ``rec_remove``, undone by CLRs), so a file whose creation
rolls back leaves no entry behind. Lookups go through a small transient
cache (store number -> record id), checked against the page before use.

Worked example: creating the first file of a fresh volume (64 pages of 512
bytes, ``ext_sz`` 4) makes stores ``s(1.3)`` (small records) and ``s(1.4)``
(large records), allocates page 4 of store 1's extent, formats it and inserts
the entry ``snum=3 kind=FILE large=4`` as ``r(1.1.4.0)``.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from minidb.pagestore.files import recops
from minidb.pagestore.errors import RecordWontFitError
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.pages.page import PageTag, lost_page
from minidb.pagestore.volume.stores import STORE_DIRECTORY
from minidb.pagestore.volume.volpages import AllocMode

SINFO = struct.Struct("<IHII")
SINFO_INDEX = struct.Struct("<BH")


class StoreKind(IntEnum):
    FILE = 1
    LGFILE = 2
    INDEX = 3


@dataclass(frozen=True)
class SInfo:
    snum: int
    kind: StoreKind
    large: int = 0
    root: int = 0
    unique: bool = False  # an INDEX's
    kdesc: bytes = b""  # an INDEX's key descriptor
    name: str = ""  # a named INDEX's name (empty: none)

    def pack(self) -> bytes:
        fixed = SINFO.pack(self.snum, int(self.kind), self.large, self.root)
        if self.kind != StoreKind.INDEX:
            return fixed
        named = bytes([len(self.name.encode())]) + self.name.encode() if self.name else b""
        return fixed + SINFO_INDEX.pack(int(self.unique), len(self.kdesc)) + self.kdesc + named

    @classmethod
    def unpack(cls, data: bytes) -> "SInfo":
        snum, kind, large, root = SINFO.unpack_from(data)
        if StoreKind(kind) != StoreKind.INDEX or len(data) == SINFO.size:
            return cls(snum, StoreKind(kind), large, root)
        unique, dlen = SINFO_INDEX.unpack_from(data, SINFO.size)
        start = SINFO.size + SINFO_INDEX.size
        end = start + dlen
        name = bytes(data[end + 1:end + 1 + data[end]]).decode() if len(data) > end else ""
        return cls(snum, StoreKind(kind), large, root, bool(unique), bytes(data[start:end]), name)


class Directory:
    """The sinfo entries on store 1's pages (see the module documentation)."""

    def __init__(self, volume: Any, xcts: Any):
        self.volume = volume
        self.xcts = xcts
        self.stid = StoreId(volume.vid, STORE_DIRECTORY)
        self._cache: dict[int, RecordId] = {}
        self._mutex = threading.Lock()

    def add(self, xct: Any, info: SInfo) -> RecordId:
        data = info.pack()
        user = xct.space_user()
        for pid in self.volume.store_pages(self.stid):
            page = self.volume.bp.fix(pid, EX)
            try:
                try:
                    slot = page.find_slot(len(data), user)
                except RecordWontFitError:
                    continue
                rid = pid.record(slot)
                if not self.xcts.try_lock(xct, rid, "EX"):
                    continue
                recops.insert(self.volume, xct, page, slot, data, user)
                self.volume.bp.unfix(page, dirty=True)
                page = None
                with self._mutex:
                    self._cache[info.snum] = rid
                return rid
            finally:
                if page is not None:
                    self.volume.bp.unfix(page)
        anchor = self.xcts.anchor(xct)  # a compensated action, as for any file page (see FileManager._new_page)
        pid = self.volume.alloc_page(self.stid, AllocMode.APPEND, xct)
        page = recops.format_page(self.volume, xct, pid, PageTag.FILE)
        try:
            self.xcts.compensate(xct, anchor)
            slot = page.find_slot(len(data), user)
            rid = pid.record(slot)
            self.xcts.lock(xct, rid, "EX")
            recops.insert(self.volume, xct, page, slot, data, user)
        finally:
            self.volume.bp.unfix(page, dirty=True)
        with self._mutex:
            self._cache[info.snum] = rid
        return rid

    def remove(self, xct: Any, snum: int) -> bool:
        """Remove the entry of store ``snum``; False if it has none."""
        found = self.lookup(snum)
        if found is None:
            return False
        rid, _ = found
        self.xcts.lock(xct, rid, "EX")
        page = self.volume.bp.fix(rid.pid, EX)
        try:
            recops.remove(self.volume, xct, page, rid.slot, xct.space_user())
        finally:
            self.volume.bp.unfix(page, dirty=True)
        with self._mutex:
            self._cache.pop(snum, None)
        return True

    def get(self, snum: int) -> SInfo | None:
        found = self.lookup(snum)
        return found[1] if found is not None else None

    def lookup(self, snum: int) -> tuple[RecordId, SInfo] | None:
        with self._mutex:
            rid = self._cache.get(snum)
        if rid is not None:
            info = self._read(rid)
            if info is not None and info.snum == snum:
                return rid, info
        for rid, info in self.entries():
            if info.snum == snum:
                with self._mutex:
                    self._cache[snum] = rid
                return rid, info
        return None

    def entries(self) -> list[tuple[RecordId, SInfo]]:
        """Every entry, in the directory's physical order."""
        found = []
        for pid in self.volume.store_pages(self.stid):
            page = self.volume.bp.fix(pid, SH)
            try:
                if page.never_written():  # allocated pages are formatted when allocated: damage
                    raise lost_page(page, pid, "a page of the store directory")
                if page.tag != PageTag.FILE:
                    continue
                found += [(pid.record(slot), SInfo.unpack(data)) for slot, data in page.records()]
            finally:
                self.volume.bp.unfix(page)
        return found

    def _read(self, rid: RecordId) -> SInfo | None:
        if not self.volume.is_allocated(rid.pid):
            return None
        page = self.volume.bp.fix(rid.pid, SH)
        try:
            if page.tag != PageTag.FILE or not page.is_in_use(rid.slot):
                return None
            return SInfo.unpack(page.read(rid.slot))
        finally:
            self.volume.bp.unfix(page)

    def forget(self) -> None:
        with self._mutex:
            self._cache.clear()
