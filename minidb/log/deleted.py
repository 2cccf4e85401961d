"""The deleted-files record: log files deleted on purpose from the middle of the log.

The log head (:mod:`minidb.log.head`) says that every file below it was
deleted on purpose. A log store's cleaner may also delete a cleaned file that
lies *above* a file still kept (file 1 copied by a backup, files 2 to 9
cleaned: JE deletes 2 to 9 at once). Such a hole would look exactly like a
lost file, so whoever deletes a middle file first records its number here,
durably, then deletes it (:meth:`minidb.log.manager.LogManager.remove_files`).

Invariants:

- every file named here was deleted on purpose, or is about to be: a crash
  between recording and deleting leaves it on disk; every reader ignores it
  (:func:`minidb.log.files.log_file_numbers` leaves it out, so it is never
  read as data), and opening the log for writing finishes the deletion;
- a file above the head that is missing and not named here is lost, as
  before: a gap in the file numbers is corruption
  (:func:`minidb.log.files.first_gap`);
- the record only grows, apart from numbers below the log head, which the
  head covers already and a later write leaves out. The head is always
  recorded before a record that leaves numbers out, so no file is ever
  covered by neither;
- a file named here is never the file being written.

The record is the small file ``logdeleted`` beside the log files. It is
rewritten whole: written to ``logdeleted.tmp``, fsynced, and renamed over
``logdeleted`` (a rename is durable on return), so a crash leaves the old
record or the new one, never a mix, and a torn ``logdeleted.tmp`` is
ignored (rewritten by the next write). No file means no middle file was ever
deleted. A ``logdeleted`` that does not parse (magic, version, size,
checksum, numbers not ascending) is damage: :func:`read_deleted_files`
raises :class:`~minidb.errors.LogCorruptionError` naming the file and the
offset, because which files were deleted on purpose is then unknown.

Byte layout (all integers little-endian; ``struct`` formats ``<4sHHI``, then
``<I`` per file, then the CRC)::

    offset  size  field
       0     4    magic       b"MDBX"
       4     2    version     1
       6     2    reserved    0
       8     4    n           how many file numbers follow
      12    4*n   numbers     the files deleted on purpose, ascending
    12+4n    4    checksum    CRC-32 of bytes 0 .. 12+4n

Worked example: files 1 to 17, file 1 protected by a backup, files 2, 3 and
5 cleaned. Checkpoint step 9 writes ``logdeleted``: n = 3, then ``02000000``
``03000000`` ``05000000``, then the CRC: 28 bytes. Only then are
``00000002.jdb``, ``00000003.jdb`` and ``00000005.jdb`` deleted. A reader
lists files 1, 4, 6, 7, ...: the jump from 1 to 4 and from 4 to 6 is
recorded, so it is no gap; ``00000004.jdb``'s FileHeader names the last entry
of file 3, which cannot be checked any more and is not. Had ``00000004.jdb``
been lost as well, the jump from 1 to 6 would pass file 4, which is not
recorded: a lost file.
"""

from __future__ import annotations

import struct
import zlib

from minidb.errors import LogCorruptionError
from minidb.io import Disk

DELETED_FILE = "logdeleted"
MAGIC = b"MDBX"
VERSION = 1
HEAD = struct.Struct("<4sHHI")
NUMBER = struct.Struct("<I")


def pack_deleted(numbers: set[int] | frozenset[int] | list[int]) -> bytes:
    ordered = sorted(set(numbers))
    body = HEAD.pack(MAGIC, VERSION, 0, len(ordered)) + b"".join(NUMBER.pack(n) for n in ordered)
    return body + NUMBER.pack(zlib.crc32(body))


def unpack_deleted(data: bytes) -> frozenset[int]:
    """The numbers a record holds; a LogCorruptionError (offset: where it goes wrong) if it does not parse."""
    def bad(offset: int, what: str) -> LogCorruptionError:
        return LogCorruptionError(DELETED_FILE, offset, f"{what}: which log files were deleted on purpose "
                                                        "is unknown")
    if len(data) < HEAD.size + NUMBER.size:
        raise bad(0, f"the deleted-files record is {len(data)} bytes, shorter than an empty one")
    magic, version, _, count = HEAD.unpack_from(data, 0)
    if magic != MAGIC:
        raise bad(0, f"the deleted-files record has magic {magic!r}, not {MAGIC!r}")
    if version != VERSION:
        raise bad(4, f"the deleted-files record has version {version}, this engine reads {VERSION}")
    size = HEAD.size + (count + 1) * NUMBER.size
    if len(data) != size:
        raise bad(8, f"the deleted-files record is {len(data)} bytes, but {count} numbers make {size}")
    (stored,) = NUMBER.unpack_from(data, size - NUMBER.size)
    if stored != zlib.crc32(data[: size - NUMBER.size]):
        raise bad(size - NUMBER.size, "the deleted-files record's checksum does not match")
    numbers = [NUMBER.unpack_from(data, HEAD.size + i * NUMBER.size)[0] for i in range(count)]
    for i, (before, after) in enumerate(zip(numbers, numbers[1:], strict=False)):
        if not 0 < before < after:
            raise bad(HEAD.size + (i + 1) * NUMBER.size, "the deleted-files record's numbers are not ascending")
    return frozenset(numbers)


def read_deleted_files(disk: Disk) -> frozenset[int]:
    """The middle files deleted on purpose (none if no record was ever written)."""
    if not disk.exists(DELETED_FILE):
        return frozenset()
    with disk.open(DELETED_FILE) as f:
        return unpack_deleted(f.read_all())


def write_deleted_files(disk: Disk, numbers: set[int] | frozenset[int]) -> None:
    """Record durably that ``numbers`` were deleted on purpose (replacing the record whole)."""
    disk.replace(DELETED_FILE, pack_deleted(numbers))
