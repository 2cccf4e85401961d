"""The eraser's write protocol: how entries of one log file are erased in place.

Erasing an entry overwrites its *type byte* (offset 4 of the entry header) with
``LOG_ERASED`` (:data:`~minidb.log.header.ERASED_TYPE`, 0xff) and then its
*item* (the bytes after the header) with zeros. The header's other fields
(checksum, flags, ``prev`` offset, item size, VLSN) stay, so a scan still steps
over the entry and the ``prev`` chain of the file is unbroken. The protocol, for
one file, is the JE documentation's steps 3 to 6 (`docs/sources.md#data-eraser`):

====  ===================================================================
step  what is written
====  ===================================================================
3     *touch* the file and fsync (JE updates the file's last-modified time
      persistently before any overwriting; the disks here keep no times,
      so the touch is the fsync itself, which also makes any write still
      pending on the file durable first)
--    overwrite the type byte of every entry to erase with 0xff, one
      1-byte write per entry
4     fsync: every chosen entry is now ``LOG_ERASED`` on disk
5     overwrite the item of every erased entry with zeros, one write per
      entry
6     fsync: the erasure is durable
====  ===================================================================

Invariants, whatever write or fsync a crash follows (torn writes included):

- a type byte is one byte, so it is either the entry's own type or 0xff;
- an item is zeroed only after the fsync of step 4, so an entry whose item
  bytes changed is always ``LOG_ERASED`` on disk, and the checksum of an erased
  entry is never checked (:func:`~minidb.log.header.verify_checksum`);
- nothing else changes: the log opens and verifies after any crash, and an
  entry that kept its type byte also kept its item (checksum intact).
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.io import Disk
from minidb.log.files import file_name
from minidb.log.header import ERASED_TYPE, read_header
from minidb.logstore.eraser.throttle import STEP_SHARES
from minidb.stats import Stats



@dataclass(frozen=True)
class ErasedEntry:
    offset: int  # of the entry in its file
    header_size: int
    item_size: int


def locate(buf: bytes, offsets: list[int]) -> list[ErasedEntry]:
    """The header and item extent of each entry at ``offsets`` in a file's bytes."""
    found = []
    for offset in offsets:
        header, problem = read_header(buf, offset)
        if header is None or problem is not None:
            raise ValueError(f"no entry to erase at offset 0x{offset:x}: {problem}")
        found.append(ErasedEntry(offset, header.size, header.item_size))
    return found


def erase_entries(disk: Disk, file_number: int, entries: list[ErasedEntry], stats: Stats,
                  between=None) -> None:
    """Steps 3 to 6 on log file ``file_number``; ``between(step)`` is called after each step.

    The caller throttles in ``between`` (see :mod:`.throttle`) and may raise
    there to stop (a late cycle): the file is then left in one of the states
    the invariants above allow, and erasing it again finishes the job.
    """
    def done(step: int) -> None:
        if between is not None:
            between(step)

    with disk.open(file_name(file_number)) as handle:
        handle.fsync()  # step 3: the touch
        stats.add("eraserFSyncs")
        done(3)
        for entry in entries:
            handle.write(entry.offset + 4, bytes([ERASED_TYPE]))
            stats.add("eraserWrites")
            stats.add("eraserWriteBytes", 1)
        handle.fsync()  # step 4
        stats.add("eraserFSyncs")
        done(4)
        for entry in entries:
            if entry.item_size:
                handle.write(entry.offset + entry.header_size, bytes(entry.item_size))
                stats.add("eraserWrites")
                stats.add("eraserWriteBytes", entry.item_size)
        done(5)
        handle.fsync()  # step 6
        stats.add("eraserFSyncs")
        done(6)


__all__ = ["ErasedEntry", "STEP_SHARES", "erase_entries", "locate"]
