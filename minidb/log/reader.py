"""Readers: one entry by LSN, and forward and backward scans.

Forward scans read file after file, each entry checked as in
:mod:`minidb.log.scan`; a bad entry anywhere before the end of the log is
reported as :class:`~minidb.errors.LogCorruptionError` (file and offset) —
readers skip nothing silently, except the files deleted on purpose, which the
log head and the deleted-files record name (:mod:`minidb.log.deleted`).
The files are the ones the log keeps (``LogEnd.files``: ascending, from the
head, without the middle files deleted on purpose), and a scan takes only the
run of them from its start's file to its stop's, without listing the
directory: a scan of one file (the cleaner reads one at a time) costs that
file, however many files the log holds.
Between files, a scan checks that the file it
leaves ends where the next file's ``FileHeader`` says (see
:func:`minidb.log.check.next_file_problem`): a file that is empty or was cut
at an entry boundary holds only intact entries, and only that shows it. The
end of the log is the one found when the log was opened
(:mod:`minidb.log.end`), so a torn tail that a read-only opener left in place
is never read as data.

A forward scan and :meth:`LogReader.last_of_type` may be given the last
file as opening the log checked it (:class:`~minidb.log.end.CheckedFile`,
from ``LogManager.take_opening_scan``): while the log still ends where it
did, that file's entries come from it, every one of them already checked
once (a start that is not one of its entries reads the file as before).
The files before it are read and checked as always.

Every file is checked once, when the reader first opens it (unless opening
the log checked it, or the log wrote it), for its environment id (:func:`minidb.log.check.foreign_file_problem`): a file
swapped in from another environment is refused whether a scan or a single
``read_entry`` (an LN fetched by its LSN) reaches it first, so another
environment's data is never returned.

Backward scans follow the ``prev`` offsets of the entry headers inside a file
and, at a file's ``FileHeader``, its ``last_entry_lsn`` into the previous
file, as JE's backward readers do. They read the ``READ_BACK`` bytes before
the entry they are at in one pread and walk inside them; an entry not whole
and intact there is read as :meth:`LogReader.read_entry` reads it, so damage
fails with the same error either way. Reading one entry is one pread of
``READ_AHEAD`` bytes (a second one for a longer entry).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from itertools import islice
from operator import itemgetter

from minidb import impl
from minidb.errors import LogCorruptionError, LogError
from minidb.io import Disk, File
from minidb.log.check import foreign_file_problem, next_file_problem
from minidb.log.end import CheckedFile, LogEnd, last_entry_of
from minidb.log.entry import LOG_ENTRY, LogEntry
from minidb.log.files import file_name
from minidb.log.header import CHECK_ENTRY, HEADER, HEADER_SIZE, MAX_HEADER_SIZE, VLSN_PRESENT, VLSN_SIZE, EntryHeader
from minidb.log.logdef import FILE_HEADER, FILE_HEADER_ENTRY_SIZE
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.scan import FILE_SCANNER, FileScanner

# Bytes read at once by read_entry (an entry's header and, mostly, its item) and, walking backward,
# by backward (the entries before the one it is at: a few hundred of them). READ_AHEAD holds an LN
# of a small record whole; a bigger entry (a BIN, a large record) takes a second pread of its exact
# size. Measured on Linux, a pread of 1 KiB costs about an eighth of one of 8 KiB (the bytes object
# grows past the small-object allocator and the copy spans more of the page cache), and gets fetch
# far more LNs than BINs.
READ_AHEAD = 1024
READ_BACK = 64 * 1024

# For the file being written: the bytes of the log buffer (possibly none) and the
# file offset where they start; None for any other file. Called with a second
# argument, an offset, it gives only the buffered bytes from there on (none if the
# offset lies below the buffer).
BufferView = Callable[..., tuple[bytes, int] | None]

_offset_of = itemgetter(0)


class _CheckedScan:
    """A :class:`FileScanner`'s answers for a file that opening the log checked already (see
    :meth:`LogReader.forward`): the checked entries from ``entries[index]`` on, nothing checked again."""

    problem = None
    bad_offset = None

    def __init__(self, checked: CheckedFile, index: int, start: int):
        self.checked, self.index = checked, index
        self.file_header = checked.file_header if index == 0 else None
        # As a FileScanner's after the last entry (the only time forward reads them).
        whole = index < len(checked.entries)
        self.last_offset: int | None = checked.entries[-1][0] if whole else None
        self.end = checked.end if whole else start

    def __iter__(self) -> Iterator[tuple[int, EntryHeader]]:
        return islice(self.checked.entries, self.index, None)


class LogReader:
    """Reads entries of a log whose end is known."""

    def __init__(self, disk: Disk, end: Callable[[], LogEnd], buffered: BufferView | None = None,
                 env_id: int | None = None):
        self.disk = disk
        self.env_id = env_id  # the log's environment id: every file read must carry it
        self.belonging: set[int] = set()  # files known to carry it (checked at opening, or written here)
        self._end = end
        self._buffered = buffered
        self._handles: dict[int, File] = {}
        # An unfinished erasure the log store's eraser recorded: file -> offset -> the entry's original type.
        # Such an entry is accepted in any state the erasure passes through (minidb.log.header); the eraser
        # fills this in before it touches a file and empties it when the file is done.
        self.erasing: dict[int, dict[int, int]] = {}

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()

    def forget_below(self, number: int) -> None:
        """Close the handles of files below ``number`` (they are about to be deleted)."""
        for n in [n for n in self._handles if n < number]:
            self._handles.pop(n).close()

    def forget_file(self, number: int) -> None:
        """Close the handle of file ``number`` (it is about to be deleted)."""
        handle = self._handles.pop(number, None)
        if handle is not None:
            handle.close()

    def _handle(self, number: int) -> File:
        handle = self._handles.get(number)
        if handle is None:
            name = file_name(number)
            if not self.disk.exists(name):
                raise LogError(f"{self.disk.where(name)}: log file does not exist")
            handle = self.disk.open(name)
            if number not in self.belonging:
                try:
                    self._check_belongs(handle, number)
                except BaseException:
                    handle.close()
                    raise
                self.belonging.add(number)
            self._handles[number] = handle
        return handle

    def _check_belongs(self, handle: File, number: int) -> None:
        """Refuse file ``number`` if its FileHeader names another environment (or log format version).
        A file whose FileHeader is not on disk yet (the one being written) has nothing to compare; a
        damaged one is reported by the reads that follow."""
        scanner = FileScanner(handle.read(0, FILE_HEADER_ENTRY_SIZE), number)
        next(iter(scanner), None)
        problem = foreign_file_problem(number, scanner.file_header, self.env_id)
        if problem is not None:
            raise problem.error()

    def file_bytes(self, number: int) -> bytes:
        """The bytes of log file ``number`` up to the end of the log, buffer included."""
        pending = self._buffered(number) if self._buffered is not None else None
        if pending is not None:
            # Taken atomically first: the bytes before ``base`` are on disk and never change.
            chunk, base = pending
            return self._handle(number).read(0, base) + chunk
        end = self._end()
        data = self._handle(number).read_all()
        return data[: end.end_offset] if number == end.last_file else data

    def read_entry(self, lsn: LSN) -> LogEntry:
        """The entry at ``lsn``; a bad or missing entry is an error naming the LSN."""
        self._check_below_end(lsn)
        data, base = self._bytes_around(lsn)
        pos = lsn.offset - base
        erasing = self.erasing.get(lsn.file, {}).get(lsn.offset) if self.erasing else None
        header, problem = CHECK_ENTRY.call(data, pos, None, True, erasing)
        if problem is not None or header is None:
            raise LogCorruptionError(file_name(lsn.file), lsn.offset, problem or "unreadable header")
        return LOG_ENTRY.call(lsn, header, bytes(data[pos + header.size : pos + header.entry_size]))

    def _check_below_end(self, lsn: LSN) -> None:
        """A LogError unless ``lsn`` lies below the log's end (the NULL LSN lies nowhere in the log)."""
        end = self._end()
        if end.last_file is None or lsn.is_null or lsn >= end.end_lsn:
            raise LogError(f"no log entry at {lsn}: the log ends at {end.end_lsn}")

    def _bytes_around(self, lsn: LSN) -> tuple[bytes, int]:
        if self._buffered is not None:
            pending = self._buffered(lsn.file, lsn.offset)
            if pending is not None and pending[0] and lsn.offset >= pending[1]:
                return pending
        # One pread with read-ahead: most entries (LNs, and BINs of JE's default size) fit in
        # READ_AHEAD bytes; a longer one takes a second pread of its exact size. A short read means
        # the file ends there, and check_entry reports an entry running past it as before.
        handle = self._handle(lsn.file)
        data = handle.read(lsn.offset, READ_AHEAD)
        if len(data) == READ_AHEAD:
            _, _, flags, _, item_size = HEADER.unpack_from(data)
            size = HEADER_SIZE + item_size + (VLSN_SIZE if flags & VLSN_PRESENT else 0)
            if size > READ_AHEAD:
                data = handle.read(lsn.offset, size)
        return data, lsn.offset

    def forward(self, start: LSN | None = None, stop: LSN | None = None,
                checked: CheckedFile | None = None) -> Iterator[LogEntry]:
        """Entries from ``start`` (default: the first) up to, not including, ``stop``.

        ``checked``: the last file as opening the log checked it (:meth:`LogManager.take_opening_scan
        <minidb.log.manager.LogManager.take_opening_scan>`); while the log still ends where it did, that
        file's entries come from it, neither read nor checked again (:meth:`_checked_scan`)."""
        end = self._end()
        if end.last_file is None:
            return
        if stop is not None and stop.is_null:
            raise ValueError("NULL_LSN has no position in the log and cannot be compared")
        files = end.files  # ascending; only the run from start's file to stop's is read
        first = 0 if start is None else bisect.bisect_left(files, start.file)
        last = bisect.bisect_right(files, end.last_file if stop is None else min(stop.file, end.last_file))
        previous = None  # (number, last entry's offset, end) of the file read to its end before this one
        for number in files[first:last]:
            offset = start.offset if start is not None and number == start.file else 0
            limit = stop.offset if stop is not None and number == stop.file else None  # no entry from there on
            scanner = self._checked_scan(checked, end, number, offset)
            if scanner is None:
                data = self.file_bytes(number)
                scanner = FILE_SCANNER.call(data, number, start=offset, erasing=self.erasing.get(number))
            else:
                data = checked.data  # type: ignore[union-attr]
            if type(data) is not bytes:
                data = bytes(data)  # so that each entry's item is a slice of it, already bytes
            for pos, header in scanner:
                if pos == 0 and previous is not None:
                    self._check_link(previous, number, scanner.file_header)
                    previous = None
                if limit is not None and pos >= limit:
                    return
                yield self._entry(number, pos, header, data)
            if previous is not None:  # no FileHeader here to check the file before against
                self._check_link(previous, number, None)
            if scanner.problem is not None:
                raise LogCorruptionError(file_name(number), scanner.bad_offset or 0, scanner.problem)
            if offset == 0 or scanner.last_offset is not None:  # else where it started was its end
                previous = (number, scanner.last_offset, scanner.end)

    @staticmethod
    def _entry(number: int, pos: int, header: EntryHeader, data: bytes) -> LogEntry:
        """The entry a forward scan found at ``pos`` of file ``number``, whose bytes are ``data``."""
        return LOG_ENTRY.call(LSN(number, pos), header, data[pos + header.size : pos + header.entry_size])

    @staticmethod
    def _checked_scan(checked: CheckedFile | None, end: LogEnd, number: int, offset: int) -> "_CheckedScan | None":
        """What a FileScanner from ``offset`` would give for file ``number``, from the entries opening
        checked; None (read and check the file) unless they are this file's, the log still ends where
        they end, and ``offset`` is one of their entries (or the end)."""
        if checked is None or checked.number != number or end.last_file != number or end.end_offset != checked.end:
            return None
        entries = checked.entries
        index = bisect.bisect_left(entries, offset, key=_offset_of)
        if offset != checked.end and (index == len(entries) or entries[index][0] != offset):
            return None
        return _CheckedScan(checked, index, offset)

    @staticmethod
    def _check_link(previous: tuple[int, int | None, int], number: int, file_header: dict | None) -> None:
        problem = next_file_problem(*previous, number, file_header)
        if problem is not None:
            raise problem.error()

    def backward(self, start: LSN | None = None) -> Iterator[LogEntry]:
        """Entries from ``start`` (default: the last) back to the first (of the files still there)."""
        lsn = self._end().last_entry if start is None else start
        window = None  # (file, base, bytes): the bytes just before the entry last read, read at once
        while not lsn.is_null:
            inside = window is not None and window[0] == lsn.file and lsn.offset >= window[1]
            entry = self._from_window(window, lsn) if inside else None
            if entry is None:  # read it as read_entry does (it says what is wrong, if anything is)
                entry = self.read_entry(lsn)
            if not inside:  # and read the entries before it at once
                base = max(0, lsn.offset - READ_BACK)
                window = (lsn.file, base, self._read_range(lsn.file, base, lsn.offset))
            yield entry
            if lsn.offset == 0:
                lsn = self._before_file(entry)
            else:
                if entry.header.prev_offset >= lsn.offset:
                    raise LogCorruptionError(file_name(lsn.file), lsn.offset, "prev offset does not point backwards")
                lsn = LSN(lsn.file, entry.header.prev_offset)

    def last_of_type(self, type_code: int, checked: CheckedFile | None = None) -> LogEntry | None:
        """The last entry of type ``type_code`` (None if there is none): what :meth:`backward` would find.

        It walks the same ``prev`` chain in the same windows but reads only each header's type, size
        and ``prev``: no checksum, no entry built. For a caller that reads the log forward from before
        the entry found anyway (recovery, looking for the last CkptEnd), which checks every entry it
        walked past. The entry found is read as :meth:`read_entry` reads it (damage is an error), and
        so is a file's first entry (its FileHeader names the last entry of the file before). Each
        header must end where the entry after it starts and point backward; anything else goes on
        with :meth:`backward` from there, which says what is wrong.

        ``checked``: the last file as opening the log checked it (as for :meth:`forward`); while the log
        still ends where it did, the last file's headers are looked at there, and the walk goes on
        from its FileHeader into the file before.
        """
        end = self._end()
        lsn = end.last_entry
        stop = end.end_offset if lsn.file == end.last_file else None  # where the entry at lsn must end
        if checked is not None and checked.entries and self._checked_scan(checked, end, checked.number, 0):
            found = checked.last_of_type(type_code)
            if found is not None:
                return self._checked_entry(checked, found)
            lsn, stop = self._before_file(self._checked_entry(checked, checked.entries[0])), None
        while not lsn.is_null:
            if lsn.offset == 0:  # a FileHeader, read in full: it names the last entry of the file before
                entry = self.read_entry(lsn)
                if entry.header.type_code == type_code:
                    return entry
                lsn, stop = self._before_file(entry), None
                continue
            offset, found = self._headers_back(lsn.file, lsn.offset, stop, type_code)
            lsn = LSN(lsn.file, offset)
            if found:
                return self.read_entry(lsn)
            if offset != 0:  # a header not as it should be: backward says what is wrong
                return next((e for e in self.backward(lsn) if e.header.type_code == type_code), None)
        return None

    def _headers_back(self, number: int, offset: int, stop: int | None, type_code: int) -> tuple[int, bool]:
        """Walk the ``prev`` chain of file ``number`` back from the entry at ``offset`` (which must end at
        ``stop``, if given), reading headers only, READ_BACK bytes at a time: (the offset of the first
        entry of type ``type_code`` met, True), else (0, False) at the file's FileHeader, or (the offset
        of a header that is cut short, does not end where the entry after it starts or does not point
        backward, False)."""
        data, base = b"", offset + 1  # the window: bytes [base, base + len(data)) of the file
        while offset != 0:
            if offset < base:
                base = max(0, offset - READ_BACK)
                data = self._read_range(number, base, stop if stop is not None else offset + MAX_HEADER_SIZE)
            pos = offset - base
            if len(data) - pos < HEADER_SIZE:
                return offset, False
            _, code, flags, prev, item_size = HEADER.unpack_from(data, pos)
            size = HEADER_SIZE + item_size + (VLSN_SIZE if flags & VLSN_PRESENT else 0)
            if (stop is not None and offset + size != stop) or prev >= offset:
                return offset, False
            if code == type_code:
                return offset, True
            stop, offset = offset, prev
        return 0, False

    def _before_file(self, entry: LogEntry) -> LSN:
        """Where a backward walk goes from a file's first entry ``entry``: the last entry of the file
        before, as its FileHeader names it; NULL_LSN if there is none, or if the files before the first
        were deleted on purpose (:mod:`minidb.log.head`). When the file it names was deleted from the
        middle (:mod:`minidb.log.deleted`), the last entry of the nearest file kept below it."""
        if entry.header.type_code != FILE_HEADER.code:
            raise LogCorruptionError(file_name(entry.lsn.file), 0, "the first entry is not a FileHeader")
        lsn = entry.values["last_entry_lsn"]
        files = self._end().files
        if lsn.is_null or not files or lsn.file in files:
            return lsn
        before = [n for n in files if n < lsn.file]  # the file named was deleted on purpose: go on below it
        return last_entry_of(self.disk, before[-1], self.erasing.get(before[-1])) if before else NULL_LSN

    @staticmethod
    def _checked_entry(checked: CheckedFile, found: tuple[int, EntryHeader]) -> LogEntry:
        pos, header = found
        return LOG_ENTRY.call(LSN(checked.number, pos), header, bytes(checked.data[pos + header.size : pos + header.entry_size]))

    @staticmethod
    def _from_window(window: tuple[int, int, bytes], lsn: LSN) -> LogEntry | None:
        """The entry at ``lsn`` if it lies whole and intact in ``window``; None sends it to read_entry.

        The window holds the bytes below an entry already read, which appends never change; it lives
        for one scan, as the bytes of a file do in a forward scan (a caller marking entries invisible
        collects them first, as syncup does)."""
        data, pos = window[2], lsn.offset - window[1]
        header, problem = CHECK_ENTRY.call(data, pos, None)
        if problem is not None or header is None:
            return None
        return LOG_ENTRY.call(lsn, header, data[pos + header.size : pos + header.entry_size])

    def _read_range(self, number: int, start: int, stop: int) -> bytes:
        """Bytes [start, stop) of log file ``number``, the log buffer's included."""
        pending = self._buffered(number) if self._buffered is not None else None
        if pending is not None and stop > pending[1]:
            chunk, base = pending
            head = self._handle(number).read(start, base - start) if start < base else b""
            return head + chunk[max(0, start - base) : stop - base]
        return self._handle(number).read(start, stop - start)


LOG_READER = impl.hot_spot(LogReader)
