"""The twin of :func:`minidb.log.header.check_entry`: an intact, ordinary entry judged in one pass.

Every reader checks every entry it reads (scans, recovery, fetches by LSN,
the Spark data source), so this is the log's hottest read path. Nearly every
entry is intact and ordinary, and for those the reference's steps
(``read_header`` with its flag rules one by one, then the chain, then the
checksum over a memoryview with INVISIBLE masked) can be collapsed:

- one ``unpack`` of the header and two set look-ups: the flags among the
  legal values with INVISIBLE clear (``_PLAIN_FLAGS``), the type among the
  valid codes (``_PLAIN_CODES``, erased entries excluded);
- the chain compared, the entry's end compared with the bytes there are;
- one CRC over the stored bytes from offset 4 to the entry's end: with
  INVISIBLE clear nothing is masked, so this is the reference's checksum;
- the header built by ``tuple.__new__`` with every field given (no
  ``NamedTuple.__new__`` call).

Safe because it answers only when each of these tests passes, and each is
one of the reference's rules for exactly that kind of entry. Anything else
(too few bytes, an erased or invisible entry, bad flags or type, a broken
chain or checksum) goes to the reference, which says what is wrong, word for
word; the agreement scenarios ``scn_log`` feed both damaged and intact files.
"""

from __future__ import annotations

import zlib

from minidb.log import header as reference
from minidb.log.header import (
    HEADER,
    HEADER_SIZE,
    INVISIBLE,
    KNOWN_FLAGS,
    MAX_HEADER_SIZE,
    VLSN,
    VLSN_PRESENT,
    VLSN_SIZE,
    EntryHeader,
    flag_problem,
    valid_type_code,
)

_PLAIN_FLAGS = frozenset(f for f in range(KNOWN_FLAGS + 1) if not f & INVISIBLE and flag_problem(1, f) is None)
_PLAIN_CODES = frozenset(c for c in range(256) if valid_type_code(c))  # not 0xff: erased entries go the long way
_new_header = tuple.__new__


def intact_header(buf: bytes | memoryview, pos: int, expected_prev: int | None, verify: bool = True) -> EntryHeader | None:
    """The header of an intact, ordinary entry at ``pos``, else None (then the reference must judge it)."""
    if len(buf) - pos < HEADER_SIZE:
        return None
    crc, type_code, flags, prev, item_size = HEADER.unpack_from(buf, pos)
    if flags not in _PLAIN_FLAGS or type_code not in _PLAIN_CODES:
        return None
    if expected_prev is not None and prev != expected_prev:
        return None
    vlsn = None
    end = pos + HEADER_SIZE + item_size
    if flags & VLSN_PRESENT:
        if len(buf) - pos < MAX_HEADER_SIZE:
            return None
        (vlsn,) = VLSN.unpack_from(buf, pos + HEADER_SIZE)
        end += VLSN_SIZE
    if end > len(buf) or (verify and zlib.crc32(buf[pos + 4 : end]) != crc):
        return None
    return _new_header(EntryHeader, (crc, type_code, flags, prev, item_size, vlsn))


def check_entry(buf: bytes | memoryview, pos: int, expected_prev: int | None, verify: bool = True,
                erasing: int | None = None) -> tuple[EntryHeader | None, str | None]:
    """:func:`minidb.log.header.check_entry`: :func:`intact_header` first, the reference for the rest."""
    header = intact_header(buf, pos, expected_prev, verify)
    if header is not None:
        return header, None
    return reference.check_entry(buf, pos, expected_prev, verify, erasing)
