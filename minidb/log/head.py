"""The log head: the first log file kept, recorded before older files are deleted on purpose.

A log only grows at its high end, and files go only from its low end: the
page store *scavenges* files that restart no longer needs, and a log cleaner
may do the same. Without a record, a reader could not tell a file deleted on
purpose from a file lost: both leave a first file whose ``FileHeader`` names
a previous file. So whoever deletes log files first records, durably, the
number of the first file it keeps (the *log head*), then deletes the files
below it (:meth:`minidb.log.manager.LogManager.remove_head_files`).

Invariants:

- every file below the head was deleted on purpose, or is about to be (a
  crash between recording the head and deleting leaves such files behind;
  every reader ignores them, and opening the log for writing deletes them);
- a file at or above the head that is missing is lost, as before: the log's
  first file must be the head itself (:func:`minidb.log.check.first_file_problem`);
- the head only grows; no record at all means the head is file 1.

The record lives in a small file, ``loghead``, beside the log files, in two
slots written in turn (like the page store's ``master`` file): a write goes to
the slot not holding the newest record and is fsynced, so a torn write
leaves the previous record intact, and nothing was deleted yet. The first record
goes to slot 0 and writes the file's whole 40 bytes (so the file never grows
again: on a full disk, recording a head needs no space), and a torn first
write leaves either a whole slot 0 or a file shorter than a slot: no record
(nothing was deleted). A file of at least one slot without a
valid slot is damage, reported as corruption.

Byte layout of one slot (``struct`` format ``<4sHHII``, then the CRC; the
file is two slots, 40 bytes)::

    offset size field
       0     4  magic       b"MDBH"
       4     2  version     1
       6     2  reserved    0
       8     4  sequence    1, 2, 3, ... (the newest valid slot wins)
      12     4  first_file  the number of the first log file kept
      16     4  checksum    CRC-32 of bytes 0..15

Worked example: the page store scavenges files 1 and 2 after a checkpoint.
``loghead`` gets slot 0: sequence 1, first_file 3 (fsynced); then
``00000001.jdb`` and ``00000002.jdb`` are deleted. ``00000003.jdb``'s
FileHeader names the previous file's last entry, 0x2/0x1700, and the
first-file check accepts it because 3 is the head. Had ``00000003.jdb`` been
lost too, the log would start at file 4 above the head 3: a lost file.
"""

from __future__ import annotations

import struct
import zlib

from minidb.errors import LogCorruptionError
from minidb.io import Disk

HEAD_FILE = "loghead"
HEAD_VERSION = 1
MAGIC = b"MDBH"
SLOT = struct.Struct("<4sHHIII")


def _pack(sequence: int, first_file: int) -> bytes:
    body = struct.pack("<4sHHII", MAGIC, HEAD_VERSION, 0, sequence, first_file)
    return body + struct.pack("<I", zlib.crc32(body))


def _unpack(data: bytes) -> tuple[int, int] | None:
    """(sequence, first_file) of a valid slot, else None."""
    if len(data) < SLOT.size:
        return None
    magic, version, _, sequence, first, crc = SLOT.unpack_from(data, 0)
    if magic != MAGIC or crc != zlib.crc32(data[:16]) or not sequence or version != HEAD_VERSION:
        return None
    return sequence, first


def _read_slots(disk: Disk) -> tuple[tuple[int, int] | None, bool]:
    """The newest valid slot, and whether the file exists at all."""
    if not disk.exists(HEAD_FILE):
        return None, False
    with disk.open(HEAD_FILE) as f:
        data = f.read(0, 2 * SLOT.size)
    slots = [s for s in (_unpack(data[i * SLOT.size:(i + 1) * SLOT.size]) for i in range(2)) if s is not None]
    return (max(slots) if slots else None), True


def read_log_head(disk: Disk) -> int:
    """The first log file kept (1 when nothing was ever deleted on purpose)."""
    newest, exists = _read_slots(disk)
    if newest is None:
        if exists and disk.size(HEAD_FILE) >= SLOT.size:
            raise LogCorruptionError(HEAD_FILE, 0, "the log head record has no valid slot (bad magic, version "
                                                   "or checksum): which log files were deleted on purpose is unknown")
        return 1  # no file, or one whose first write was torn before anything was deleted
    return newest[1]


def write_log_head(disk: Disk, first_file: int) -> int:
    """Record durably that the log starts at file ``first_file``; return the sequence written."""
    newest, _ = _read_slots(disk)
    if newest is not None and first_file < newest[1]:
        raise ValueError(f"the log head only grows: it is file {newest[1]}, not {first_file}")
    sequence = newest[0] + 1 if newest is not None else 1
    data = _pack(sequence, first_file) + (bytes(SLOT.size) if sequence == 1 else b"")  # both slots at once
    with disk.open(HEAD_FILE, create=True) as f:
        f.write(((sequence - 1) % 2) * SLOT.size, data)
        f.fsync()
    return sequence
