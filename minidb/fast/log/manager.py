"""The twin of :class:`minidb.log.manager.LogManager`: an ordinary entry appended in fewer steps.

Every engine appends for every change, so the CPU time of one append sets
the pace of both engines (``make bench``'s log section gives it per append).
The reference encodes the item, then packs the header around it
(``pack_header``), computes the checksum over the two, and copies three
pieces into the buffer. This twin takes a shorter road for the *plain* entry,
a dict of values, not provisional, no VLSN (nearly every entry the engines
write):

- the plain entry is told apart in one test; anything else (provisional,
  replicated, arguments to be checked one by one) goes the reference's way;
- header and item come in one piece from the entry type's generated codec
  (``encode_summed``, :mod:`minidb.fast.log.codec`): the bytes the checksum covers,
  header fields packed by the same ``struct`` call as the item's first fields.
  One CRC over that piece and two writes into the buffer. The header names
  the entry before it in the file, so the piece is packed under the latch,
  and once more if a file switch moved the entry to a new file;
- no INVISIBLE mask: an appended entry is never invisible;
- whether the log refuses work tested inline (``_check_usable`` only says
  which reason), the latch taken by ``acquire``/``release`` (no ``with``), the LSN built by
  ``tuple.__new__`` (its offset is in range: ``file_max <= MAX_OFFSET``; so is ``end_lsn``'s,
  which the log store asks after each append for the entry's size), the
  counters changed under the latch only incremented in the stats' dict in place
  (:func:`minidb.fast.held_counts`: no stats lock), the listener loop skipped when there is none;
- an entry listener, if there is one, hears the entry as the reference's do: its header read back
  from the buffer under the latch, its item the piece's bytes after the header;
- its reader, when it is the fast one, given ``_end_position`` (the end as a
  (file, offset) pair, without the rest of :meth:`end`) for its reads by LSN.

Safe because the bytes are the reference's: ``encode_summed`` packs exactly
``SUMMED`` and the reference's item (the codec's own tests), the checksum of an
entry without the INVISIBLE bit is the CRC of those bytes, and the order of
steps under the latch (usable, admit, room, place, count, admitted) is the
reference's. The agreement scenario ``scn_log.appends_crash_reopen`` compares
every byte, write and fsync, and the counters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zlib import crc32

from minidb import fast
from minidb.fast.log.codec import codec_of
from minidb.fast.log.reader import LogReader as FastLogReader
from minidb.log import manager as reference
from minidb.log.entry import LogEntry
from minidb.log.header import CRC, HEADER_SIZE, Provisional, read_header
from minidb.log.lsn import LSN
from minidb.log.types import EntryType

_NOT_PROVISIONAL = Provisional.NO
_new_lsn = tuple.__new__
_pack_crc = CRC.pack
CRC_SIZE = CRC.size


class LogManager(reference.LogManager):
    """:class:`minidb.log.manager.LogManager` with the plain entry's append in one piece."""

    def __init__(self, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self._counts = fast.held_counts(self.stats)  # nEntries, nBytes: changed under the latch only
        if isinstance(self.reader, FastLogReader):
            self.reader.end_position = self._end_position

    @property
    def end_lsn(self) -> LSN:
        return _new_lsn(LSN, (self._file_number, self._next_offset))

    def _end_position(self) -> tuple[int, int] | None:
        """Where the next entry goes, as a (file, offset) pair (None while there is no log file): what
        the fast reader asks before each read by LSN, the rest of :meth:`end` being of no use to it."""
        with self._latch:
            if not (self._files or self._handle):
                return None
            return self._file_number, self._next_offset

    def append(self, entry_type: EntryType, values: dict[str, Any] | None = None, *,
               provisional: Provisional = Provisional.NO, replicated: bool = False, vlsn: int | None = None,
               noted: Callable[[LSN], None] | None = None) -> LSN:
        if not (type(values) is dict and provisional is _NOT_PROVISIONAL and not replicated and vlsn is None
                and type(entry_type) is EntryType):
            return super().append(entry_type, values, provisional=provisional, replicated=replicated, vlsn=vlsn,
                                  noted=noted)
        code = entry_type.code
        latch = self._latch
        latch.acquire()
        try:
            encode_summed = codec_of(entry_type).encode_summed
            summed = encode_summed(values, code, 0, self._last_offset or 0)
            size = CRC_SIZE + len(summed)
            if self._closed or self._failed is not None or self.readonly:
                self._check_usable()  # says which
            admitted = self.admit(entry_type, values, size, self._room) if self.admit is not None else None
            offset = self._next_offset
            buffer = self._buffer
            if offset + size > self._allocated or len(buffer) + size > self.buffer_size:
                if self._make_room(size):  # a new file: the entry now follows its FileHeader
                    summed = encode_summed(values, code, 0, self._last_offset)
                offset = self._next_offset
            buffer += _pack_crc(crc32(summed))
            buffer += summed
            lsn = _new_lsn(LSN, (self._file_number, offset))
            self._last_offset = offset
            self._next_offset = offset + size
            self._last_lsn = lsn
            counts = self._counts
            counts["nEntries"] += 1
            counts["nBytes"] += size
            if admitted is not None:
                admitted(lsn)
            if noted is not None:
                noted(lsn)
            header = read_header(buffer, len(buffer) - size)[0] if self._entry_listeners else None
        finally:
            latch.release()
        if self._listeners:
            for listener in self._listeners:
                listener(lsn, entry_type, None)
        if header is not None:
            logged = LogEntry(lsn, header, bytes(summed[HEADER_SIZE - CRC_SIZE:]))
            for entry_listener in self._entry_listeners:
                entry_listener(logged)
        return lsn
