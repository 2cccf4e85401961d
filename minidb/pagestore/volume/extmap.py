"""Extents and extent-map pages: ``extlink`` entries and their redo handlers.

Pages are reserved for stores in *extents* of ``ext_sz`` contiguous pages.
Each extent is described by an ``extlink`` on an extent-map page (store 0,
right after the volume header), found arithmetically from the extent number:
with ``per_page`` extlinks per extent-map page, extent ``e`` lives on page
``first_extmap_page + e // per_page`` at index ``e % per_page``.

An extlink holds:

- ``owner``: the store number the extent belongs to; 0 means *free* (free
  extents are not linked together; they simply have no owner). The first
  extents of the volume hold store 0 itself and are never handed out.
- ``next``/``prev``: the neighbouring extents of the same store; a store's
  extents form a doubly linked list whose head is in its store node. Extent
  0 always belongs to store 0, so 0 doubles as "no extent".
- ``pmap``: the page bitmap; bit ``i`` set means page ``i`` of the extent is
  *allocated*. An extent's unallocated pages are *reserved* for its store.
  Whether a page is allocated can only be learnt here, never from the page.
- ``pbucketmap``: 4 bits per page, the advisory free-space bucket the file
  manager keeps for its pages. It is **not logged**: updating it fixes and
  dirties the extent-map page without a log entry.

Byte layout of one extlink (32 bytes, ``struct`` format ``<IIII16s``)::

    offset size field
       0     4  owner        store number (0: free)
       4     4  next         next extent of the store (0: none)
       8     4  prev         previous extent of the store (0: none)
      12     4  pmap         bit i: page i of the extent is allocated
      16    16  pbucketmap   page i's bucket in the low (even i) or high (odd i)
                             nibble of byte i // 2

    0        4        8        12       16                               32
    +--------+--------+--------+--------+--------------------------------+
    | owner  |  next  |  prev  |  pmap  |  pbucketmap (32 x 4 bits)      |
    +--------+--------+--------+--------+--------------------------------+

so an extent holds at most 32 pages. The extlinks of an extent-map page are
one record in the page's slot 0: the number of its first extent (4 bytes,
``<I``), then the array, so the page describes itself and a redo handler
needs nothing but the page. Worked example: 512-byte pages hold
(512 - 48 - 12 - 4 - 4) // 32 = 13 extlinks; extent 20 is at index 7 of the
second extent-map page (page 2). With 8192-byte pages, 253 extlinks per page
describe 2024 pages (almost 16 MB) with ``ext_sz`` 8.

The redo handlers below are the only code that changes extlinks; the volume
manager calls them through :func:`minidb.pagestore.wal.logrec.apply_and_log`.
Each write goes through :meth:`ExtlinkPage.put`, which counts it
(:class:`ExtlinkWrites`): an answer read from the map stays true while the
count has not moved.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import Any

from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logrec import redo_handler

EXTLINK = struct.Struct("<IIII16s")
EXTLINK_SIZE = EXTLINK.size  # 32
MAX_EXT_SZ = 32
NO_EXT = 0
BUCKETS = 16  # a bucket is 4 bits


FIRST_NUMBER = struct.Struct("<I")  # the slot-0 record starts with the first extent number on the page


def extlinks_per_page(page_size: int) -> int:
    return (page_size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE - FIRST_NUMBER.size) // EXTLINK_SIZE


@dataclass(frozen=True)
class Extlink:
    owner: int = 0
    next: int = NO_EXT
    prev: int = NO_EXT
    pmap: int = 0
    pbucketmap: bytes = bytes(16)

    def is_allocated(self, index: int) -> bool:
        return bool(self.pmap >> index & 1)

    def allocated(self, ext_sz: int) -> list[int]:
        """Indexes (0..ext_sz-1) of the allocated pages."""
        return [i for i in range(ext_sz) if self.pmap >> i & 1]

    def reserved(self, ext_sz: int) -> list[int]:
        """Indexes of the pages not allocated (reserved for the owner)."""
        return [i for i in range(ext_sz) if not self.pmap >> i & 1]

    def bucket(self, index: int) -> int:
        byte = self.pbucketmap[index // 2]
        return (byte >> 4) if index % 2 else (byte & 0x0F)

    def pmap_text(self, ext_sz: int) -> str:
        """``#`` for an allocated page, ``.`` for a reserved one, page 0 first."""
        return "".join("#" if self.pmap >> i & 1 else "." for i in range(ext_sz))

    def pack(self) -> bytes:
        return EXTLINK.pack(self.owner, self.next, self.prev, self.pmap, self.pbucketmap)


FREE_EXTLINK = Extlink()


class ExtlinkWrites:
    """How many extlinks have been written in this process (owner, list links, page bitmap; not the
    advisory buckets).

    :meth:`ExtlinkPage.put` counts each write, and every change of an
    extlink goes through it: the redo handlers below, in forward processing,
    at restart and in rollback. So a fact read from the extent map (page
    ``p`` is allocated to store ``s``) stays true while the count has not
    moved. The reference reads the map at every question and never looks at
    the count; the accelerated file manager (``minidb/fast/``) remembers
    answers on this condition.
    """

    count = 0
    _lock = threading.Lock()

    @classmethod
    def note(cls) -> None:
        with cls._lock:  # += is not atomic across threads
            cls.count += 1


class ExtlinkPage:
    """The extlinks on one extent-map page (extents ``first_ext`` .. ``first_ext + per_page - 1``)."""

    def __init__(self, page: SlottedPage):
        self.page = page
        offset, length = page.slot_entry(0)
        self.first_ext = FIRST_NUMBER.unpack_from(page.buf, offset)[0]
        self.per_page = (length - FIRST_NUMBER.size) // EXTLINK_SIZE
        self._base = offset + FIRST_NUMBER.size

    def holds(self, ext: int) -> bool:
        return self.first_ext <= ext < self.first_ext + self.per_page

    def _pos(self, ext: int) -> int:
        if not self.holds(ext):
            raise ValueError(f"extent {ext} is not on extent-map page {self.page.pid}")
        return self._base + (ext - self.first_ext) * EXTLINK_SIZE

    def get(self, ext: int) -> Extlink:
        return Extlink(*self.fields(ext))

    def fields(self, ext: int) -> tuple[int, int, int, int, bytes]:
        """Extent ``ext``'s (owner, next, prev, pmap, pbucketmap), unpacked without building an Extlink."""
        return EXTLINK.unpack_from(self.page.buf, self._pos(ext))

    def put(self, ext: int, link: Extlink) -> None:
        self._write(ext, link)
        ExtlinkWrites.note()

    def _write(self, ext: int, link: Extlink) -> None:
        EXTLINK.pack_into(self.page.buf, self._pos(ext), link.owner, link.next, link.prev, link.pmap,
                          link.pbucketmap)

    def update(self, ext: int, **changes: Any) -> None:
        old = self.get(ext)
        self.put(ext, Extlink(**{**old.__dict__, **changes}))

    def set_bucket(self, ext: int, index: int, bucket: int) -> None:
        """Set a page's advisory free-space bucket (never logged)."""
        if not 0 <= bucket < BUCKETS:
            raise ValueError(f"bucket {bucket} is outside 0..{BUCKETS - 1}")
        link = self.get(ext)
        old = bytearray(link.pbucketmap)
        byte = old[index // 2]
        old[index // 2] = (byte & 0x0F) | (bucket << 4) if index % 2 else (byte & 0xF0) | bucket
        self._write(ext, Extlink(link.owner, link.next, link.prev, link.pmap, bytes(old)))  # not counted


def format_extlink_page(page: SlottedPage, first_ext: int, per_page: int) -> None:
    """Give a freshly formatted extent-map page its (all free) extlink array in slot 0."""
    page.insert(FIRST_NUMBER.pack(first_ext) + bytes(per_page * EXTLINK_SIZE))



# -- redo handlers (also the forward code path) ---------------------------------------
@redo_handler("create_ext_list")
def _redo_create_ext_list(page: SlottedPage, v: dict[str, Any]) -> None:
    view = ExtlinkPage(page)
    exts = [item["ext"] for item in v["exts"]]
    for i, ext in enumerate(exts):
        prev = exts[i - 1] if i else v["prev"]
        nxt = exts[i + 1] if i + 1 < len(exts) else v["next"]
        view.put(ext, Extlink(owner=v["snum"], next=nxt, prev=prev))
    if v["prev"] and view.holds(v["prev"]):
        view.update(v["prev"], next=exts[0])
    if v["next"] and view.holds(v["next"]):
        view.update(v["next"], prev=exts[-1])


@redo_handler("free_ext_list")
def _redo_free_ext_list(page: SlottedPage, v: dict[str, Any]) -> None:
    view = ExtlinkPage(page)
    for item in v["exts"]:
        view.put(item["ext"], FREE_EXTLINK)
    if v["prev"] and view.holds(v["prev"]):
        view.update(v["prev"], next=v["next"])
    if v["next"] and view.holds(v["next"]):
        view.update(v["next"], prev=v["prev"])


@redo_handler("set_ext_next")
def _redo_set_ext_next(page: SlottedPage, v: dict[str, Any]) -> None:
    ExtlinkPage(page).update(v["ext"], next=v["next"])


@redo_handler("set_ext_prev")
def _redo_set_ext_prev(page: SlottedPage, v: dict[str, Any]) -> None:
    ExtlinkPage(page).update(v["ext"], prev=v["prev"])


@redo_handler("alloc_pages_in_ext")
def _redo_alloc_pages(page: SlottedPage, v: dict[str, Any]) -> None:
    view = ExtlinkPage(page)
    view.update(v["ext"], pmap=view.get(v["ext"]).pmap | v["pmap"])


@redo_handler("free_pages_in_ext")
def _redo_free_pages(page: SlottedPage, v: dict[str, Any]) -> None:
    view = ExtlinkPage(page)
    view.update(v["ext"], pmap=view.get(v["ext"]).pmap & ~v["pmap"])
