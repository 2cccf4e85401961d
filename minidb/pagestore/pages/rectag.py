"""Record tags and the two shapes of a record in its slot (Shore's ``rectag_t`` and ``record_t``).

Every record, small or large, starts its slot on the file page with a
*record tag*: the length of the user header, flags saying how the body is
stored, and the body's length::

    struct rectag_t { uint2_t hdr_len; uint2_t flags; smsize_t body_len; };

Byte layout of a slot (all integers little-endian; ``struct`` format
``<HHI`` for the tag)::

    offset   size      field
       0       2       hdr_len    bytes of user header
       2       2       flags      RecFlags: SMALL or LARGE_0
       4       4       body_len   bytes of body
       8     hdr_len   header     the user header (opaque to minidb)
     8+h     ...       SMALL:     the body itself (body_len bytes)
                       LARGE_0:   the body's chunks: one 4-byte page number
                                  per large-record page, in body order

    0     2     4          8             8+h
    +-----+-----+----------+-------------+---------------------------+
    | hdr | flg | body_len |  header...  | body... or page, page, ... |
    +-----+-----+----------+-------------+---------------------------+

Flags (Shore's):

- ``SMALL`` (t_small): the record is entirely in its slot;
- ``LARGE_0`` (t_large_0): the slot holds the header and a list of chunks,
  each a page of the file's large-record store (``lgdata_p``, tag LGDATA)
  holding up to ``chunk_size`` bytes of the body in its slot 0;
- ``LARGE_1`` (t_large_1, a one-level index of chunk pages) and ``LARGE_2``
  are Shore's further shapes, not implemented here: a ``LARGE_0`` list of
  4-byte page numbers already reaches 110 chunks (48 KB) on 512-byte pages
  and 2000 chunks (16 MB) on 8 KB pages.

Worked example: a record with a 2-byte header ``b"h1"`` and a 5-byte body
``b"hello"`` is the 15-byte slot ``02 00 01 00 05 00 00 00 68 31 68 65 6c 6c
6f``. A 1000-byte body on 512-byte pages (chunks of 448 bytes) is LARGE_0
with three chunks: the slot holds the tag, the header and three page
numbers (22 bytes with the header).
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
CHUNK_REF = struct.Struct("<I")


class RecFlags(IntFlag):
    SMALL = 0x1
    LARGE_0 = 0x2
    LARGE_1 = 0x4  # not implemented (see the module documentation)
    LARGE_2 = 0x8  # not implemented in Shore either


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
        if flags not in (RecFlags.SMALL, RecFlags.LARGE_0):
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
    return RecTag(len(hdr), RecFlags.SMALL, len(body)).pack() + bytes(hdr) + bytes(body)


def large_slot(hdr: bytes, body_len: int, pages: list[int]) -> bytes:
    return (RecTag(len(hdr), RecFlags.LARGE_0, body_len).pack() + bytes(hdr)
            + b"".join(CHUNK_REF.pack(p) for p in pages))


def split_slot(data: bytes, where: object = "") -> tuple[RecTag, bytes, bytes]:
    """(tag, header, rest): rest is the body (SMALL) or the packed chunk list (LARGE_0)."""
    tag = RecTag.unpack(data, where)
    end = TAG_SIZE + tag.hdr_len
    if len(data) < end:
        raise PageStoreError(f"{where}: record tag says {tag.hdr_len} header bytes, the slot is {len(data)} long")
    rest = data[end:]
    if tag.is_small and len(rest) != tag.body_len:
        raise PageStoreError(f"{where}: record tag says {tag.body_len} body bytes, the slot holds {len(rest)}")
    if not tag.is_small and len(rest) % CHUNK_REF.size:
        raise PageStoreError(f"{where}: a large record's chunk list of {len(rest)} bytes")
    return tag, data[TAG_SIZE:end], rest


def chunk_pages(rest: bytes) -> list[int]:
    return [CHUNK_REF.unpack_from(rest, i)[0] for i in range(0, len(rest), CHUNK_REF.size)]


def chunks_needed(body_len: int, page_size: int) -> int:
    size = chunk_size(page_size)
    return (body_len + size - 1) // size
