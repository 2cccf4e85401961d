"""The twin of :class:`minidb.log.reader.LogReader`: entries made, and reads checked, with fewer steps.

A forward scan (recovery's redo pass, ``printlog``, the cleaner's and the
verifier's walks) makes one :class:`~minidb.log.entry.LogEntry` per entry
read, so the few steps of making one are paid tens of thousands of times.
The reference makes each with ``LSN(number, pos)``, whose range checks run
for every entry, and slices the item by the header's ``size`` and
``entry_size`` properties. This twin skips the checks (``tuple.__new__``)
and computes the item's start from the flags inline. Recovery's read from a
position in the last file, whose entries opening checked (``checked``), makes
them all in one list comprehension: the reference's loop would test each one
for a file link and a stop that cannot apply there (the read starts in that
file and goes to its end) and hand each over through a generator step.

Safe because the position is one a :class:`~minidb.log.scan.FileScanner`
found in a log file: the file number came from the log's own file list and
the offset is inside a file no bigger than ``file_max <= MAX_OFFSET``, so
the range checks cannot fail; and the item's bounds are what ``size`` and
``entry_size`` compute. ``scn_log.appends_crash_reopen`` compares the scans.

A read by LSN (every fetch of a record or node) first checks that the LSN
lies below the log's end. The reference asks the log manager for its whole
:class:`~minidb.log.end.LogEnd` (a tuple of the file list among its eight
fields) and compares LSN objects. When the fast log manager hands this
reader its ``end_position`` (the next entry's (file, offset) under the
latch, None while there is no file), the check is one tuple comparison
(``tuple.__ge__``, without LSN's own comparison, which refuses the NULL LSN:
the NULL LSN, the largest pair, lies past every end and is refused too). An
LSN found past the end goes to the reference's check, which words the error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from minidb.log import reader as reference
from minidb.log.end import CheckedFile
from minidb.log.entry import LOG_ENTRY, LogEntry
from minidb.log.header import HEADER_SIZE, MAX_HEADER_SIZE, VLSN_PRESENT, EntryHeader
from minidb.log.lsn import LSN

_new_lsn = tuple.__new__


class LogReader(reference.LogReader):
    """:class:`minidb.log.reader.LogReader` making a forward scan's entries without LSN's range checks."""

    end_position: Callable[[], tuple[int, int] | None] | None = None  # set by the fast log manager

    def _check_below_end(self, lsn: LSN) -> None:
        position = self.end_position
        end = position() if position is not None else None
        if end is None or tuple.__ge__(lsn, end):
            super()._check_below_end(lsn)  # raises, in the reference's words (or finds the log grown since)

    def forward(self, start: LSN | None = None, stop: LSN | None = None,
                checked: CheckedFile | None = None) -> Iterator[LogEntry]:
        # Recovery's read when it starts in the last file: the entries opening checked there, made in one
        # comprehension (see the module documentation); any other read is the reference's.
        if checked is None or stop is not None or start is None or start.file != checked.number:
            return super().forward(start, stop, checked)
        end = self._end()
        scanner = self._checked_scan(checked, end, checked.number, start.offset)
        if scanner is None:
            return super().forward(start, stop, checked)
        number, data, make = checked.number, checked.data, LOG_ENTRY.call
        if type(data) is not bytes:
            data = bytes(data)
        return iter([make(_new_lsn(LSN, (number, pos)), header,
                          data[(item := pos + (MAX_HEADER_SIZE if header.flags & VLSN_PRESENT else HEADER_SIZE)):
                               item + header.item_size])
                     for pos, header in scanner])

    @staticmethod
    def _entry(number: int, pos: int, header: EntryHeader, data: bytes) -> LogEntry:
        item = pos + (MAX_HEADER_SIZE if header.flags & VLSN_PRESENT else HEADER_SIZE)
        return LOG_ENTRY.call(_new_lsn(LSN, (number, pos)), header, data[item : item + header.item_size])
