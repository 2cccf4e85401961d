"""The log entry header: the one place where its bytes are read and written.

Every log entry is a header followed by an *item* (the entry type's fields).
The header follows Berkeley DB JE's ``LogEntryHeader``::

    offset size  field
    ------ ----  -----------------------------------------------------------
       0     4   checksum   CRC-32 of bytes [4, end of entry), with the
                            INVISIBLE flag bit taken as 0
       4     1   type       entry type code (0xff once the entry is erased)
       5     1   flags      bit 0  PROVISIONAL_YES
                            bit 1  PROVISIONAL_BEFORE_CKPT_END
                            bit 2  REPLICATED
                            bit 3  INVISIBLE
                            bit 4  VLSN_PRESENT
       6     4   prev       offset of the previous entry in the same file
                            (0 for the file header, the first entry)
      10     4   item size  bytes of the item that follows the header
     [14     8   VLSN]      only when VLSN_PRESENT
     14/22   n   item

All integers are little-endian (``struct`` format ``<IBBII`` + ``<Q``).

Two bytes may change after an entry is written (and with the second, the
item and the checksum):

- the INVISIBLE bit is set in place by syncup rollback
  (:mod:`minidb.replication.syncup.rollback`, through ``LogManager.set_invisible``;
  every reader of the replication stream skips invisible entries),
  so it is masked out of the checksum;
- the type byte is overwritten with :data:`ERASED_TYPE` by the log store's
  data eraser (:mod:`minidb.logstore.eraser.protocol`), which also rewrites
  the item and the checksum into the *erased form*:

      offset  size  field (an erased entry)
      ------  ----  --------------------------------------------------
         0     4    checksum   the ordinary checksum of the erased bytes
         4     1    type       0xff
         5    ...   flags, prev, item size, [VLSN]: unchanged
       item    1    the entry's original type code
       item+1 n-1   zeros

  So an erased entry is checked like every other (:func:`verify_checksum`):
  a forged 0xff over an intact entry fails its checksum (CRC-32 detects every
  single-byte change), and so does a forged 0xff over a zeroed item. The
  original type stays readable (:func:`erased_type`). Only the log store has
  an eraser, so the original type must be one of its codes
  (``ERASABLE_CODES``, 0x40-0x6f; JE's ``LOG_ERASED`` has no checksum at all).
  While an erasure is in progress the entry passes through states that bytes
  alone cannot tell from a forgery (0xff over the old checksum and item, a
  partly rewritten item); the eraser records its intent durably first, and a
  reader that is given that intent (``erasing``: the entry's original type)
  accepts such an entry, and only then. The erased form of an entry is
  :func:`pack_entry` of ``ERASED_TYPE`` with the same flags, ``prev`` and
  VLSN over :func:`erased_item`. Worked example: an LN_TX (0x41) with a
  20-byte item becomes type 0xff, item ``41`` and 19 zero bytes, and the CRC
  of ``ff``, its flags, ``prev``, ``14000000``, [VLSN] and that item.

Writing: :func:`pack_header` builds every header the log manager appends
(the checksum runs over the packed ``SUMMED`` part, then over the item,
without copying them together). Reading: :func:`check_entry` judges an entry
in the order a reader needs the answers: the header readable, the flags and
type legal (:func:`flag_problem`), the entry inside the file, its ``prev``
naming the entry before it, the checksum right (:func:`verify_checksum`). Its
answer is the header and, for a bad entry, a sentence saying what is wrong,
which the readers put into their errors. Every reader of the log checks each
entry through it (``CHECK_ENTRY``, a hot spot of :mod:`minidb.impl`).

Because INVISIBLE is masked, a flipped INVISIBLE bit is only detectable
through the flag rules: an invisible entry must be replicated, and an entry is
replicated exactly when it carries a VLSN. Type codes 1..0x7e and
0x80..0x8f (the page store's B+trees) are the only valid ones, so no single
flipped bit turns a valid code into 0xff (each has at least two zero bits).
"""

from __future__ import annotations

import enum
import struct
import zlib
from typing import NamedTuple

from minidb import impl

HEADER = struct.Struct("<IBBII")
VLSN = struct.Struct("<Q")
CRC = struct.Struct("<I")
SUMMED = struct.Struct("<BBII")  # the header after its checksum: what the checksum covers first
SUMMED_VLSN = struct.Struct("<BBIIQ")
HEADER_SIZE = HEADER.size  # 14
VLSN_SIZE = VLSN.size  # 8
MAX_HEADER_SIZE = HEADER_SIZE + VLSN_SIZE

PROVISIONAL_YES = 0x01
PROVISIONAL_BEFORE_CKPT_END = 0x02
REPLICATED = 0x04
INVISIBLE = 0x08
VLSN_PRESENT = 0x10
KNOWN_FLAGS = PROVISIONAL_YES | PROVISIONAL_BEFORE_CKPT_END | REPLICATED | INVISIBLE | VLSN_PRESENT

ERASED_TYPE = 0xFF
MAX_TYPE_CODE = 0x7E
EXTRA_TYPE_CODES = range(0x80, 0x90)  # above MAX_TYPE_CODE: the page store's B+tree entries
ERASABLE_CODES = range(0x40, 0x70)  # the log store's codes: the one engine with an eraser


def valid_type_code(code: int) -> bool:
    return 0 < code <= MAX_TYPE_CODE or code in EXTRA_TYPE_CODES


class Provisional(enum.Enum):
    """How recovery treats a logged IN (JE's ``Provisional``)."""

    NO = 0
    YES = PROVISIONAL_YES
    BEFORE_CKPT_END = PROVISIONAL_BEFORE_CKPT_END


class EntryHeader(NamedTuple):
    """An entry's parsed header."""

    checksum: int
    type_code: int
    flags: int
    prev_offset: int
    item_size: int
    vlsn: int | None = None

    @property
    def size(self) -> int:
        return HEADER_SIZE + (VLSN_SIZE if self.flags & VLSN_PRESENT else 0)

    @property
    def entry_size(self) -> int:
        return (MAX_HEADER_SIZE if self.flags & VLSN_PRESENT else HEADER_SIZE) + self.item_size  # size + item

    @property
    def provisional(self) -> Provisional:
        if self.flags & PROVISIONAL_YES:
            return Provisional.YES
        if self.flags & PROVISIONAL_BEFORE_CKPT_END:
            return Provisional.BEFORE_CKPT_END
        return Provisional.NO

    @property
    def replicated(self) -> bool:
        return bool(self.flags & REPLICATED)

    @property
    def invisible(self) -> bool:
        return bool(self.flags & INVISIBLE)

    @property
    def erased(self) -> bool:
        return self.type_code == ERASED_TYPE


def make_flags(provisional: Provisional = Provisional.NO, replicated: bool = False, invisible: bool = False) -> int:
    flags = provisional.value
    if replicated:
        flags |= REPLICATED | VLSN_PRESENT
    if invisible:
        flags |= INVISIBLE
    return flags


def checksum(type_code: int, flags: int, rest: bytes | memoryview) -> int:
    """CRC-32 of type, flags (INVISIBLE masked) and everything after them."""
    crc = zlib.crc32(bytes((type_code, flags & ~INVISIBLE & 0xFF)))
    return zlib.crc32(rest, crc)


def pack_entry(type_code: int, flags: int, prev_offset: int, item: bytes, vlsn: int | None = None) -> bytes:
    """The bytes of a whole entry: header (with checksum) and item."""
    crc, summed = pack_header(type_code, flags, prev_offset, item, vlsn)
    return crc + summed + item


def pack_header(type_code: int, flags: int, prev_offset: int, item: bytes, vlsn: int | None = None) -> tuple[bytes, bytes]:
    """An entry's header in two parts, (checksum, the rest), for writing before ``item``.

    The checksum covers the rest of the header, then the item; the INVISIBLE bit is masked as
    :func:`checksum` does."""
    if vlsn is None:
        if flags & VLSN_PRESENT:
            raise ValueError("a VLSN is written exactly when the entry is replicated")
        summed = SUMMED.pack(type_code, flags & ~INVISIBLE & 0xFF, prev_offset, len(item))
    else:
        if not flags & VLSN_PRESENT:
            raise ValueError("a VLSN is written exactly when the entry is replicated")
        summed = SUMMED_VLSN.pack(type_code, flags & ~INVISIBLE & 0xFF, prev_offset, len(item), vlsn)
    crc = CRC.pack(zlib.crc32(item, zlib.crc32(summed)))
    if flags & INVISIBLE:
        summed = bytes((type_code, flags)) + summed[2:]
    return crc, summed


def flag_problem(type_code: int, flags: int) -> str | None:
    """Why a (type, flags) pair cannot occur, or None."""
    if not valid_type_code(type_code) and type_code != ERASED_TYPE:
        return f"invalid entry type code 0x{type_code:02x}"
    if flags & ~KNOWN_FLAGS:
        return f"unknown flag bits 0x{flags & ~KNOWN_FLAGS:02x}"
    if flags & PROVISIONAL_YES and flags & PROVISIONAL_BEFORE_CKPT_END:
        return "both provisional flags are set"
    if bool(flags & REPLICATED) != bool(flags & VLSN_PRESENT):
        return "the replicated flag and the VLSN-present flag disagree"
    if flags & INVISIBLE and not flags & REPLICATED:
        return "invisible flag on a non-replicated entry"
    return None


def read_header(buf: bytes | memoryview, pos: int) -> tuple[EntryHeader | None, str | None]:
    """Decode the header at ``pos`` of ``buf`` (one file's bytes).

    Returns ``(header, None)`` or ``(header_or_None, problem)``: the header is
    returned whenever its fixed part could be read, even if the entry is bad,
    so callers can report its fields.
    """
    available = len(buf) - pos
    if available < HEADER_SIZE:
        return None, f"only {available} bytes left, a header needs {HEADER_SIZE}"
    crc, type_code, flags, prev, item_size = HEADER.unpack_from(buf, pos)
    vlsn = None
    if flags & VLSN_PRESENT:
        if available < HEADER_SIZE + VLSN_SIZE:
            return None, f"only {available} bytes left, a replicated header needs {MAX_HEADER_SIZE}"
        (vlsn,) = VLSN.unpack_from(buf, pos + HEADER_SIZE)
    header = EntryHeader(crc, type_code, flags, prev, item_size, vlsn)
    problem = flag_problem(type_code, flags)
    if problem:
        return header, problem
    if header.entry_size > available:
        return header, f"entry of {header.entry_size} bytes runs past the end of the file ({available} bytes left)"
    return header, None


def erased_item(original_type: int, item_size: int) -> bytes:
    """The item of an erased entry: its original type code, then zeros (``item_size`` bytes in all)."""
    return bytes((original_type,)) + bytes(item_size - 1)


def erased_type(buf: bytes | memoryview, pos: int, header: EntryHeader) -> int | None:
    """The original type code an erased entry names (its item's first byte), or None if it has no item."""
    if not header.erased or header.item_size == 0:
        return None
    return buf[pos + header.size]


def verify_checksum(buf: bytes | memoryview, pos: int, header: EntryHeader, erasing: int | None = None) -> str | None:
    """None if the stored checksum matches (an erased entry: and it is in its erased form).

    ``erasing``: an erasure of this entry to be finished is recorded, and the entry's original type
    is ``erasing``; an entry with type 0xff is then accepted in any of the states the erasure goes
    through (see the module documentation)."""
    view = memoryview(buf)[pos + 6 : pos + header.entry_size]
    computed = checksum(header.type_code, header.flags, view)
    if header.erased:
        if erasing is not None:
            return None if erasing in ERASABLE_CODES else f"an erasure of a 0x{erasing:02x} entry is recorded"
        if computed != header.checksum:
            return (f"erased entry's checksum mismatch (stored 0x{header.checksum:08x}, computed "
                    f"0x{computed:08x}), and no erasure of it is in progress")
        original = erased_type(buf, pos, header)
        if original is None or original not in ERASABLE_CODES:
            what = "no item" if original is None else f"original type 0x{original:02x}"
            return f"erased entry with {what}: only the log store's entries are erased"
        if any(view[header.size - 6 + 1 :]):
            return "erased entry whose item is not zeros after its original type"
        return None
    if computed != header.checksum:
        return f"checksum mismatch (stored 0x{header.checksum:08x}, computed 0x{computed:08x})"
    return None


def check_entry(buf: bytes | memoryview, pos: int, expected_prev: int | None, verify: bool = True,
                erasing: int | None = None) -> tuple[EntryHeader | None, str | None]:
    """Header and problem of the entry at ``pos``; checks chain and checksum too.

    ``erasing``: the original type an unfinished erasure of this entry records (:func:`verify_checksum`)."""
    header, problem = read_header(buf, pos)
    if problem or header is None:
        return header, problem
    if expected_prev is not None and header.prev_offset != expected_prev:
        return header, f"prev offset 0x{header.prev_offset:x} does not point to the previous entry at 0x{expected_prev:x}"
    if verify:
        problem = verify_checksum(buf, pos, header, erasing)
    return header, problem


CHECK_ENTRY = impl.hot_spot(check_entry)
