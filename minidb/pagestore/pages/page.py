"""The page: a header, slots, a slot table and a footer, all in ``page_size`` bytes.

Every page of a volume, whatever its type, has the same frame (Shore's
``page_s``): a 48-byte *header*, the *records* (slots' bytes) growing from
the header towards the end of the page, the *slot table* growing from the
footer towards the start, and a 12-byte *footer* holding the page's
*checksum* and a copy of the page LSN. The page LSN is the LSN of the last
log entry that changed the page. A page is written to disk in one write; if
that write is torn (only a prefix reaches the disk) the header carries the
new LSN and the footer the old one, so a torn page is detected when it is
read back (:meth:`Page.check`).

**The checksum** is the CRC-32 of the whole page with the checksum field
taken as 0. The buffer pool computes it into the image it writes
(:func:`stamp_checksum`) and checks it when it reads a page back
(:meth:`Page.check`), so a torn write that leaves the LSN pair equal (an
unlogged change) and any damage (a flipped bit, a zeroed record) are caught
as well. In a buffer-pool frame the field is kept at 0: a page in memory
changes without being rewritten. The invariants, for a page read from disk:

- all zeros: a page never written (a sparse hole or a formatted, unused
  page); it has no checksum and is valid (tag FREE);
- otherwise: header LSN = footer LSN and the checksum matches, or the page
  is bad (:class:`~minidb.pagestore.errors.TornPageError`,
  :class:`~minidb.pagestore.errors.PageChecksumError`, naming the page).

A written page is never all zeros (its header names it), so a page zeroed
by damage reads as never written: the extent map, not the page, tells that
it should hold something (``minidb verify`` checks every allocated page).

Byte layout (all integers little-endian; ``struct`` format ``HEADER``)::

    offset size field        meaning
    ------ ---- -----------  -------------------------------------------------
       0     8  lsn          page LSN, packed (file << 32 | offset); 0: never logged
       8     4  vol          the page id: volume,
      12     4  store                     store,
      16     4  page                      page number
      20     4  next         next page of a chain (used by some structures; 0: none)
      24     4  prev         previous page of a chain (0: none)
      28     1  tag          page type (PageTag)
      29     1  store_flags  the store's logging property (StoreFlags)
      30     2  nslots       entries in the slot table
      32     2  nfree        free bytes (the gap, holes and reserved bytes)
      34     2  nrsvd        bytes reserved for transactions (part of nfree)
      36     2  xct_rsvd     of those, bytes reserved by the youngest reserving transaction
      38     2  record_end   offset just past the record area (where the gap begins)
      40     8  rsvd_tid     the youngest reserving transaction (0: none)
      48   ...  records ->          <- gap ->          <- slot table
    size-12  4  checksum     the footer: CRC-32 of the page with this field as 0
    size-8   8  lsn copy                 and the page LSN again

    0        8    12   16   20   24   28 29 30  32  34  36  38  40        48
    +--------+----+----+----+----+----+--+--+---+---+---+---+---+---------+
    |  lsn   |vol |stor|page|next|prev|tg|sf|nsl|nfr|nrs|xrs|end|rsvd_tid | records ...
    +--------+----+----+----+----+----+--+--+---+---+---+---+---+---------+

                                          slot n-1         slot 0      footer (FOOTER, <IQ)
    ... records | gap ................. | off | len | .. | off | len | crc  |   lsn    |
                                        ^                            ^      ^
                                        size-12-4n               size-12     size-8

Slot table entries are 4 bytes, ``<HH`` (offset, length), slot 0 nearest the
footer. A slot in use has an offset inside the record area; a free slot has
offset 0 and length 0; a slot freed by a transaction whose space is still
reserved (see :mod:`minidb.pagestore.pages.slotted`) has offset 0 and the freed
record's length.

Worked example: a 512-byte page holds at most 512 - 48 - 12 = 452 bytes of
records and slot entries. After formatting, ``nfree`` is 452 and
``record_end`` 48; one 20-byte record takes 24 of them (20 + its 4-byte slot
entry), leaving ``nfree`` 428, ``record_end`` 68, and the slot table at
offset 512 - 12 - 4 = 496.

A page that was never written reads as zeros: LSN 0 (header and footer
agree), tag FREE, store 0, no checksum.
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum, IntFlag

from minidb.log.lsn import LSN
from minidb.pagestore.errors import BadRequestError, PageChecksumError, PageStoreCorruptionError, TornPageError
from minidb.pagestore.ids import PageId

HEADER = struct.Struct("<QIIIIIBBHHHHHQ")
HEADER_SIZE = HEADER.size  # 48
FOOTER = struct.Struct("<IQ")  # checksum, lsn copy
FOOTER_SIZE = FOOTER.size  # 12
CHECKSUM_FROM_END = FOOTER_SIZE  # the checksum field starts 12 bytes before the end
LSN_COPY_SIZE = 8
SLOT = struct.Struct("<HH")
SLOT_SIZE = SLOT.size  # 4
MIN_PAGE_SIZE = 256
MAX_PAGE_SIZE = 32768  # offsets and counts are 16-bit
DEFAULT_PAGE_SIZE = 8192

# Offsets of single header fields, for the accessors below.
_LSN, _VOL, _STORE, _PAGE, _NEXT, _PREV, _TAG, _SFLAGS = 0, 8, 12, 16, 20, 24, 28, 29
_NSLOTS, _NFREE, _NRSVD, _XCT_RSVD, _RECORD_END, _RSVD_TID = 30, 32, 34, 36, 38, 40
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")

NO_PAGE_LSN = LSN(0, 0)  # the LSN of a page no log entry has changed yet


class PageTag(IntEnum):
    """Page types (Shore's page tags)."""

    FREE = 0  # never formatted: all zeros
    HEADER = 1  # page 0: the volume header
    EXTLINK = 2  # extent-map page (extlink_p), store 0
    STNODE = 3  # store-map page (stnode_p), store 0
    FILE = 4  # slotted page of a file of records (file_p)
    BTREE = 5  # B+tree page (keyed_p), for later
    LGDATA = 6  # a page of a large record's body (lgdata_p), one chunk in slot 0
    LGINDEX = 7  # a large record's index page (lgindex_p): page numbers in slot 0
    RTREE = 8  # R*-tree page (rtree_p): boxes and children or elements


class StoreFlags(IntFlag):
    """A store's logging property (Shore's sm_store_property_t); 0: no store."""

    REGULAR = 0x01  # fully logged
    TMP = 0x02  # not logged, gone after a restart
    LOAD_FILE = 0x04  # not logged until the loading transaction commits
    INSERT_FILE = 0x08  # inserts not logged, other updates logged




def check_page_size(page_size: int) -> int:
    if not isinstance(page_size, int) or not MIN_PAGE_SIZE <= page_size <= MAX_PAGE_SIZE:
        raise BadRequestError(f"page size {page_size!r} is outside {MIN_PAGE_SIZE}..{MAX_PAGE_SIZE}")
    return page_size


class Page:
    """A view of one page's bytes (a buffer-pool frame or a copy)."""

    __slots__ = ("buf", "size", "frame")

    def __init__(self, buf: bytearray, frame: object = None):
        self.buf = buf
        self.size = len(buf)
        self.frame = frame  # the buffer-pool control block holding this page, if any

    # -- the LSN, in header and footer -------------------------------------
    @property
    def lsn(self) -> LSN:
        return LSN.unpack(_U64.unpack_from(self.buf, _LSN)[0])

    @lsn.setter
    def lsn(self, value: LSN) -> None:
        packed = value.packed
        _U64.pack_into(self.buf, _LSN, packed)
        _U64.pack_into(self.buf, self.size - LSN_COPY_SIZE, packed)

    @property
    def footer_lsn(self) -> LSN:
        return LSN.unpack(_U64.unpack_from(self.buf, self.size - LSN_COPY_SIZE)[0])

    @property
    def checksum(self) -> int:
        return _U32.unpack_from(self.buf, self.size - CHECKSUM_FROM_END)[0]

    def is_torn(self) -> bool:
        return self.buf[0:8] != self.buf[self.size - LSN_COPY_SIZE:]

    def never_written(self) -> bool:
        return not any(self.buf)

    def check(self, where: str) -> None:
        """Check a page read from disk (see the module documentation); clear its checksum field.

        Raises :class:`TornPageError` if header and footer LSNs differ,
        :class:`PageChecksumError` if the checksum does not match; a page of
        zeros (never written) passes.
        """
        if self.is_torn():
            raise TornPageError(
                f"{where}: torn page: header LSN {self.lsn} but footer LSN {self.footer_lsn} "
                f"(its last write reached the disk only in part)"
            )
        stored = self.checksum
        _U32.pack_into(self.buf, self.size - CHECKSUM_FROM_END, 0)
        computed = zlib.crc32(self.buf)
        if stored != computed and not (stored == 0 and self.never_written()):
            _U32.pack_into(self.buf, self.size - CHECKSUM_FROM_END, stored)
            raise PageChecksumError(f"{where}: checksum mismatch (stored 0x{stored:08x}, computed 0x{computed:08x}): "
                                    f"the page is damaged or its last write was torn")

    # -- the page id and chain links ----------------------------------------
    @property
    def pid(self) -> PageId:
        vol, store, page = struct.unpack_from("<III", self.buf, _VOL)
        return PageId(vol, store, page)

    @property
    def store(self) -> int:
        """The store number of :attr:`pid`, read alone (no PageId built)."""
        return _U32.unpack_from(self.buf, _STORE)[0]

    @property
    def next(self) -> int:
        return _U32.unpack_from(self.buf, _NEXT)[0]

    @next.setter
    def next(self, value: int) -> None:
        _U32.pack_into(self.buf, _NEXT, value)

    @property
    def prev(self) -> int:
        return _U32.unpack_from(self.buf, _PREV)[0]

    @prev.setter
    def prev(self, value: int) -> None:
        _U32.pack_into(self.buf, _PREV, value)

    @property
    def tag(self) -> PageTag:
        return PageTag(self.buf[_TAG])  # raises ValueError for an unknown tag

    @property
    def store_flags(self) -> StoreFlags:
        return StoreFlags(self.buf[_SFLAGS])

    @store_flags.setter
    def store_flags(self, value: StoreFlags) -> None:
        self.buf[_SFLAGS] = int(value)

    # -- space accounting fields (used by slotted.py) ----------------------------
    def _get16(self, offset: int) -> int:
        return _U16.unpack_from(self.buf, offset)[0]

    def _set16(self, offset: int, value: int) -> None:
        _U16.pack_into(self.buf, offset, value)

    # The header's counters, each read and written in place in the page's bytes.
    nslots = property(lambda self: _U16.unpack_from(self.buf, _NSLOTS)[0],
                      lambda self, v: _U16.pack_into(self.buf, _NSLOTS, v))
    nfree = property(lambda self: _U16.unpack_from(self.buf, _NFREE)[0],
                     lambda self, v: _U16.pack_into(self.buf, _NFREE, v))
    nrsvd = property(lambda self: _U16.unpack_from(self.buf, _NRSVD)[0],
                     lambda self, v: _U16.pack_into(self.buf, _NRSVD, v))
    xct_rsvd = property(lambda self: _U16.unpack_from(self.buf, _XCT_RSVD)[0],
                        lambda self, v: _U16.pack_into(self.buf, _XCT_RSVD, v))
    record_end = property(lambda self: _U16.unpack_from(self.buf, _RECORD_END)[0],
                          lambda self, v: _U16.pack_into(self.buf, _RECORD_END, v))

    @property
    def rsvd_tid(self) -> int:
        return _U64.unpack_from(self.buf, _RSVD_TID)[0]

    @rsvd_tid.setter
    def rsvd_tid(self, value: int) -> None:
        _U64.pack_into(self.buf, _RSVD_TID, value)

    # -- formatting ---------------------------------------------------------------
    def format(self, pid: PageId, tag: PageTag, store_flags: StoreFlags = StoreFlags.REGULAR,
               lsn: LSN = NO_PAGE_LSN) -> None:
        """Make this an empty page of type ``tag`` (keeps nothing of what was there)."""
        self.buf[:] = bytes(self.size)
        HEADER.pack_into(self.buf, 0, lsn.packed, pid.vol, pid.store, pid.page, 0, 0, int(tag),
                         int(store_flags), 0, self.size - HEADER_SIZE - FOOTER_SIZE, 0, 0, HEADER_SIZE, 0)
        _U64.pack_into(self.buf, self.size - LSN_COPY_SIZE, lsn.packed)

    def header_fields(self) -> dict[str, object]:
        """The header as a dict (for dumps and pictures)."""
        (lsn, vol, store, page, nxt, prev, tag, sflags, nslots, nfree, nrsvd, xct_rsvd, record_end,
         rsvd_tid) = HEADER.unpack_from(self.buf, 0)
        return {
            "lsn": LSN.unpack(lsn), "pid": PageId(vol, store, page), "next": nxt, "prev": prev,
            "tag": PageTag(tag), "store_flags": StoreFlags(sflags), "nslots": nslots, "nfree": nfree,
            "nrsvd": nrsvd, "xct_rsvd": xct_rsvd, "record_end": record_end, "rsvd_tid": rsvd_tid,
        }

    def copy(self) -> "Page":
        return type(self)(bytearray(self.buf))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.pid} {self.tag.name} lsn={self.lsn})"


def lost_page(page: Page, pid: PageId, what: str) -> PageStoreCorruptionError:
    """The error for an allocated page ``pid`` that does not hold what the maps say it holds."""
    found = "zeros" if page.never_written() else f"{page.tag.name} page {page.pid}"
    return PageStoreCorruptionError(f"{pid}: {what} holds {found}: the page was lost or overwritten")


def stamp_checksum(image: bytes | bytearray) -> bytes:
    """A page image with its checksum computed, ready to be written (the frame keeps 0 there)."""
    buf = bytearray(image)
    at = len(buf) - CHECKSUM_FROM_END
    _U32.pack_into(buf, at, 0)
    _U32.pack_into(buf, at, zlib.crc32(buf))
    return bytes(buf)
