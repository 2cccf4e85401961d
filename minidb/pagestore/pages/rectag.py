"""Record tags and the four shapes of a record in its slot (Shore's ``rectag_t`` and ``record_t``).

Every record, small or large, starts its slot on the file page with a
*record tag*: the length of the user header, flags saying how the body is
stored, and the body's length::

    struct rectag_t { uint2_t hdr_len; uint2_t flags; smsize_t body_len; };

Byte layout of a slot (all integers little-endian; ``struct`` format
``<HHI`` for the tag, ``<II`` for a chunk, ``<I`` for a page number)::

    offset   size      field
       0       2       hdr_len    bytes of user header
       2       2       flags      RecFlags: SMALL, LARGE_0, LARGE_1 or LARGE_2
       4       4       body_len   bytes of body
       8     hdr_len   header     the user header (opaque to minidb)
     8+h     ...       SMALL:     the body itself (body_len bytes)
                       LARGE_0:   the chunks, 8 bytes each, in body order:
                                  first page (4), number of pages (4)
                       LARGE_1:   the large-index page listing the data pages (4)
                       LARGE_2:   the root index page, listing index pages that
                                  list the data pages (4)

    0     2     4          8             8+h
    +-----+-----+----------+-------------+------------------------------------+
    | hdr | flg | body_len |  header...  | body, or chunks, or an index page  |
    +-----+-----+----------+-------------+------------------------------------+

The shapes (Shore's ``t_small``, ``t_large_0``, ``t_large_1``,
``t_large_2``; Shore never built ``t_large_2``, minidb does):

- ``SMALL``: the record is entirely in its slot;
- ``LARGE_0``: the slot holds a list of *chunks*; a chunk is a run of
  contiguous large-data pages (``lgdata_p``, tag LGDATA) of one extent of
  the file's large-record store;
- ``LARGE_1``: the slot holds one page number: a large-index page
  (``lgindex_p``, tag LGINDEX) whose slot 0 lists the data pages, 4 bytes
  each;
- ``LARGE_2``: the slot holds the root of a two-level index: the root's
  slot 0 lists index pages, each listing up to a page's worth of data pages.

Each data page holds ``chunk_size`` bytes of the body in its slot 0, the
last one the rest: the body's bytes are found by arithmetic, whatever the
shape. The *slot's body area* (what follows the header) holds at most
``max_small_rec`` bytes, the small record's limit, so the shapes have these
limits (:func:`limits`): a record is stored in the first shape it fits.

Worked example, 512-byte pages, ``max_small_rec`` 128, extents of 8 pages:
a data page holds 448 bytes (``chunk_size``), the slot's body area holds
128 // 8 = 16 chunks, an index page 448 // 4 = 112 page numbers. So

=========  ==================================  ===============================
shape      what the slot's body area holds     the biggest body
=========  ==================================  ===============================
SMALL      the body                            128 bytes
LARGE_0    up to 16 chunks                     16 x 8 pages = 57,344 bytes if
                                               every chunk is a whole extent;
                                               16 pages = 7,168 bytes if no two
                                               pages are contiguous
LARGE_1    1 index page: 112 data pages        112 x 448 = 50,176 bytes
LARGE_2    1 root: 112 index pages             112 x 112 x 448 = 5,619,712 bytes
=========  ==================================  ===============================

A record with a 2-byte header ``b"h1"`` and a 5-byte body ``b"hello"`` is
the 15-byte slot ``02 00 01 00 05 00 00 00 68 31 68 65 6c 6c 6f``. A
1000-byte body on pages 16, 17, 18 is LARGE_0 with one chunk, (16, 3):
the slot holds the tag, the header and 8 bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntFlag

from minidb.pagestore.errors import PageStoreError
from minidb.pagestore.ids import RecordId
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE

RECTAG = struct.Struct("<HHI")
TAG_SIZE = RECTAG.size  # 8
CHUNK = struct.Struct("<II")  # first page, number of pages
PAGE_REF = struct.Struct("<I")


class RecFlags(IntFlag):
    SMALL = 0x1
    LARGE_0 = 0x2
    LARGE_1 = 0x4
    LARGE_2 = 0x8


@dataclass(frozen=True)
class RecTag:
    hdr_len: int
    flags: RecFlags
    body_len: int

    def pack(self) -> bytes:
        return RECTAG.pack(self.hdr_len, int(self.flags), self.body_len)

    @classmethod
    def unpack(cls, data: bytes, where: object = "") -> "RecTag":
        if len(data) < TAG_SIZE:
            raise PageStoreError(f"{where}: a record slot of {len(data)} bytes has no record tag")
        hdr_len, flags, body_len = RECTAG.unpack_from(data, 0)
        if flags not in (RecFlags.SMALL, RecFlags.LARGE_0, RecFlags.LARGE_1, RecFlags.LARGE_2):
            raise PageStoreError(f"{where}: record tag has unknown flags 0x{flags:x}")
        return cls(hdr_len, RecFlags(flags), body_len)

    @property
    def is_small(self) -> bool:
        return self.flags == RecFlags.SMALL


@dataclass(frozen=True)
class Record:
    """A record as read: its id, its user header and its body."""

    rid: RecordId
    hdr: bytes
    body: bytes
    flags: RecFlags = RecFlags.SMALL

    @property
    def is_small(self) -> bool:
        return self.flags == RecFlags.SMALL


def chunk_size(page_size: int) -> int:
    """The bytes of body one large-record page holds (its slot 0 takes the whole page)."""
    return page_size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE


def small_slot(hdr: bytes, body: bytes) -> bytes:
    """A small record's slot: its tag (header length, SMALL, body length), the header and the body."""
    return RECTAG.pack(len(hdr), RecFlags.SMALL, len(body)) + bytes(hdr) + bytes(body)


def split_slot(data: bytes, where: object = "") -> tuple[RecTag, bytes, bytes]:
    """(tag, header, rest): rest is the body (SMALL), the chunks (LARGE_0) or an index page number."""
    tag = RecTag.unpack(data, where)
    end = TAG_SIZE + tag.hdr_len
    if len(data) < end:
        raise PageStoreError(f"{where}: record tag says {tag.hdr_len} header bytes, the slot is {len(data)} long")
    rest = data[end:]
    if tag.is_small and len(rest) != tag.body_len:
        raise PageStoreError(f"{where}: record tag says {tag.body_len} body bytes, the slot holds {len(rest)}")
    if tag.flags == RecFlags.LARGE_0 and (not rest or len(rest) % CHUNK.size):
        raise PageStoreError(f"{where}: a LARGE_0 record's chunk list of {len(rest)} bytes")
    if tag.flags in (RecFlags.LARGE_1, RecFlags.LARGE_2) and len(rest) != PAGE_REF.size:
        raise PageStoreError(f"{where}: a {tag.flags.name} record's slot holds {len(rest)} bytes after its header, "
                             f"not one page number")
    return tag, data[TAG_SIZE:end], rest


def pack_chunks(chunks: list[tuple[int, int]]) -> bytes:
    return b"".join(CHUNK.pack(first, count) for first, count in chunks)


def unpack_chunks(rest: bytes) -> list[tuple[int, int]]:
    return [CHUNK.unpack_from(rest, i) for i in range(0, len(rest), CHUNK.size)]


def pack_pages(pages: list[int]) -> bytes:
    return b"".join(PAGE_REF.pack(p) for p in pages)


def unpack_pages(data: bytes) -> list[int]:
    return [PAGE_REF.unpack_from(data, i)[0] for i in range(0, len(data), PAGE_REF.size)]


def page_runs(pages: list[int], ext_sz: int) -> list[tuple[int, int]]:
    """The chunks of ``pages`` (in body order): maximal runs of consecutive pages within one extent."""
    runs: list[tuple[int, int]] = []
    for page in pages:
        if runs and page == runs[-1][0] + runs[-1][1] and page % ext_sz:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((page, 1))
    return runs


def chunk_pages(chunks: list[tuple[int, int]]) -> list[int]:
    """The data pages of a chunk list, in body order."""
    return [first + i for first, count in chunks for i in range(count)]


def pages_needed(body_len: int, page_size: int) -> int:
    size = chunk_size(page_size)
    return (body_len + size - 1) // size


def limits(page_size: int, max_small_rec: int, ext_sz: int, fanout: int | None = None) -> dict[str, int]:
    """The thresholds of the shapes (see the worked example): counts and biggest bodies in bytes."""
    size = chunk_size(page_size)
    fanout = size // PAGE_REF.size if fanout is None else fanout
    chunks = max_small_rec // CHUNK.size
    return {"small": max_small_rec, "chunks": chunks, "fanout": fanout,
            "large_0": chunks * ext_sz * size, "large_0_scattered": chunks * size,
            "large_1": fanout * size, "large_2": fanout * fanout * size}
