"""The twin of :class:`minidb.log.scan.FileScanner`: a file's intact, ordinary entries checked in one loop.

Opening the log scans its whole last file (:mod:`minidb.log.end`), and every
forward read scans each file it reads, so at recovery this loop runs once per
entry of the log since the last checkpoint. The reference goes through the
``CHECK_ENTRY`` hot spot for each entry (a call, a ``(header, problem)``
pair, a look-up of the erasure map, the FileHeader test at offset 0). This
twin keeps those steps for the first entry (the FileHeader, read by the
reference's own loop) and for any entry that is not plainly intact, and does
the rest in one loop with everything in locals:

- one ``unpack`` of the header, two set look-ups (the flags among the legal
  values with INVISIBLE clear, the type among the valid codes, erased
  entries excluded: :mod:`minidb.fast.log.header`), the chain compared with
  the entry before, the entry's end compared with the bytes there are;
- one CRC over a memoryview of the stored bytes from offset 4 to the entry's
  end (nothing masked, INVISIBLE being clear: the reference's checksum,
  no copy of the bytes);
- the header built by ``tuple.__new__`` with every field given;
- the pairs made in batches of :data:`BATCH` by a plain loop appending to a
  list (all of them at once for ``run_keeping``, opening's scan of the last
  file), not one generator step each; ``end``, ``last_offset`` and ``count``
  are set once per batch. They are what the reference's are after iteration,
  which is when a scanner's readers look at them (the FileHeader, which a
  forward read looks at while it iterates, is found first, the reference's way).

What it skips: nothing is left unchecked. An entry that fails any test, or
any entry of a scan told not to verify checksums or given an unfinished
erasure, goes the reference's way from that entry on (the reference loop
resumed where this one stopped), which checks it again and records the
problem, offset and header word for word. Safe because each test is one of
the reference's rules for exactly that kind of entry; the agreement scenario
``scn_log.damaged_scans`` runs both over damaged and intact files.
"""

from __future__ import annotations

from collections.abc import Iterator
from zlib import crc32

from minidb.fast.log.header import _PLAIN_CODES, _PLAIN_FLAGS
from minidb.log import scan as reference
from minidb.log.header import HEADER, HEADER_SIZE, MAX_HEADER_SIZE, VLSN, VLSN_PRESENT, EntryHeader

_new_header = tuple.__new__
_unpack_header = HEADER.unpack_from
_unpack_vlsn = VLSN.unpack_from
BATCH = 4096  # entries checked between two hand-overs to a forward reader


class FileScanner(reference.FileScanner):
    """:class:`minidb.log.scan.FileScanner` with the intact, ordinary entries checked inline, in batches."""

    def __iter__(self) -> Iterator[tuple[int, EntryHeader]]:
        if self.erasing or not self.verify:
            return super().__iter__()
        return self._plain_from(self.start)

    def run_keeping(self) -> "FileScanner":
        if self.erasing or not self.verify:
            return super().run_keeping()
        self.entries = entries = []
        pos = self._file_header_from(self.start, entries)
        if pos is not None:
            pos = self._plain_batch(pos, entries, None)
            if pos < len(self.buf):
                entries += self._entries_from(pos)
        return self

    def _plain_from(self, pos: int) -> Iterator[tuple[int, EntryHeader]]:
        batch: list[tuple[int, EntryHeader]] = []
        start = self._file_header_from(pos, batch)
        yield from batch
        if start is None:
            return
        pos, size = start, len(self.buf)
        while True:
            batch = []
            pos = self._plain_batch(pos, batch, BATCH)
            yield from batch
            if len(batch) < BATCH:
                break
        if pos < size:
            yield from self._entries_from(pos)

    def _file_header_from(self, pos: int, found: list[tuple[int, EntryHeader]]) -> int | None:
        """At offset 0, the FileHeader read the reference's way (it checks the file number and version)
        into ``found``; where the plain entries start, or None when the scan stops at the FileHeader."""
        if pos != 0:
            return pos
        for entry in self._entries_from(0):
            found.append(entry)
            return self.end
        return None

    def _plain_batch(self, pos: int, found: list[tuple[int, EntryHeader]], most: int | None) -> int:
        """The intact, ordinary entries from ``pos`` on (at most ``most``) appended to ``found``, the
        scanner's ``last_offset``, ``end`` and ``count`` moved past them; where the next entry starts."""
        buf = self.buf
        size = len(buf)
        last, count = self.last_offset, self.count
        stop = count + most if most is not None else -1
        append = found.append
        plain_flags, plain_codes = _PLAIN_FLAGS, _PLAIN_CODES
        with memoryview(buf) as view:
            while size - pos >= HEADER_SIZE and count != stop:
                crc, code, flags, prev, item_size = _unpack_header(buf, pos)
                if flags not in plain_flags or code not in plain_codes or (prev != last and last is not None):
                    break
                if flags & VLSN_PRESENT:
                    if size - pos < MAX_HEADER_SIZE:
                        break
                    vlsn = _unpack_vlsn(buf, pos + HEADER_SIZE)[0]
                    end = pos + MAX_HEADER_SIZE + item_size
                else:
                    vlsn, end = None, pos + HEADER_SIZE + item_size
                if end > size or crc32(view[pos + 4 : end]) != crc:
                    break
                append((pos, _new_header(EntryHeader, (crc, code, flags, prev, item_size, vlsn))))
                count += 1
                last, pos = pos, end
        if count != self.count:
            self.last_offset, self.end, self.count = last, pos, count
        return pos
