"""The twin of :class:`minidb.log.reader.LogReader`: a forward scan's entries made with fewer steps.

A forward scan (recovery's redo pass, ``printlog``, the cleaner's and the
verifier's walks) makes one :class:`~minidb.log.entry.LogEntry` per entry
read, so the few steps of making one are paid tens of thousands of times.
The reference makes each with ``LSN(number, pos)``, whose range checks run
for every entry, and slices the item by the header's ``size`` and
``entry_size`` properties. This twin skips the checks (``tuple.__new__``)
and computes the item's start from the flags inline.

Safe because the position is one a :class:`~minidb.log.scan.FileScanner`
found in a log file: the file number came from the log's own file list and
the offset is inside a file no bigger than ``file_max <= MAX_OFFSET``, so
the range checks cannot fail; and the item's bounds are what ``size`` and
``entry_size`` compute. ``scn_log.appends_crash_reopen`` compares the scans.
"""

from __future__ import annotations

from minidb.log import reader as reference
from minidb.log.entry import LOG_ENTRY, LogEntry
from minidb.log.header import HEADER_SIZE, MAX_HEADER_SIZE, VLSN_PRESENT, EntryHeader
from minidb.log.lsn import LSN

_new_lsn = tuple.__new__


class LogReader(reference.LogReader):
    """:class:`minidb.log.reader.LogReader` making a forward scan's entries without LSN's range checks."""

    @staticmethod
    def _entry(number: int, pos: int, header: EntryHeader, data: bytes) -> LogEntry:
        item = pos + (MAX_HEADER_SIZE if header.flags & VLSN_PRESENT else HEADER_SIZE)
        return LOG_ENTRY.call(_new_lsn(LSN, (number, pos)), header, data[item : item + header.item_size])
