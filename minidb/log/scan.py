"""Reading the entries of one log file, and judging a bad entry.

:class:`FileScanner` walks a file's bytes entry by entry, checking each one:
the header is readable, flags are legal, the entry fits in the file, its
``prev`` field points to the entry before it, and (unless told not to) the
checksum matches. The first entry must be a ``FileHeader`` naming this file,
written in this log format version (:data:`~minidb.log.logdef.LOG_VERSION`):
an intact FileHeader of another version is refused at once
(:class:`~minidb.errors.LogVersionError`, naming the file), not judged as damage.
It stops at the first entry that fails, and records where and why.
Opening the log scans its last file this way and forward readers every file
they read, so the scanner is a hot spot (``FILE_SCANNER``, :mod:`minidb.impl`):
its twin checks the same rules with fewer steps per entry.

A bad entry is not always corruption. :func:`judge_bad_entry` decides, from
the bytes after it, which of four situations this is:

``torn``      nothing intact follows: the tail of a write that a crash cut
              short (or never finished); the log ends before it.
``unwritten`` zeros from the bad entry up to the next intact entry (or to
              the end): space that a lost write never filled, while a later
              unsynced write survived; the log ends before it too, and
              whatever follows was never synced.
``foreign``   the file does not even start like a log file (its first type
              byte is not a FileHeader's, and the checksum does not match a
              FileHeader with one changed type byte): it is not a minidb log
              file. Among other log files it is corruption all the same.
``corrupt``   the header holds data and an intact entry follows that names
              the bad one as its predecessor (or starts where the bad entry's
              size says it ends): a synced entry changed on disk. This is an
              error; nothing is cut. So is a bad entry whose type byte is
              0xff, followed by anything: the log appends no erased entry,
              so no torn append holds 0xff there (only the eraser writes it,
              in place, and never in the last file).

A lost write takes whole entries with it: the simulated disk, like a real
one, keeps or drops each write as a whole (or tears the last one), and the
log writes whole entries. So zeros count as unwritten space only when they
run from the bad entry's first byte right up to an intact entry or to the
end of the file. A zeroed *header* over item bytes that are still there,
with intact entries after it, is no lost write: it is ``corrupt``. Worked
example: entries at 0x0, 0x2e, 0x50, 0x70; zeroing bytes 0x50..0x63 (the
header) leaves the item's bytes at 0x64, and the entry at 0x70 names 0x50
as its ``prev``: corrupt at 0x50. Zeroing all of 0x50..0x6f instead is
exactly what losing that one write looks like: unwritten, cut at 0x50. (A
whole entry zeroed on purpose in the last file is therefore read as a lost
write; telling the two apart would take a record of where the last fsync
ended, written with every fsync.)

The successor search looks for the bad entry's offset in the ``prev`` field
of later entries (a fast byte search) and at the end the bad entry's own size
claims; two bad entries in a row would hide a corruption behind a torn
verdict, which is why ``minidb verify`` reads every file in full.

Readers of the engine stop at the first bad entry. Tools that survey many
logs at once (the Spark data source) want every entry they can still trust
instead: :func:`scan_tolerant` reports a bad entry as one
:class:`ScannedEntry` with its verdict and, when the verdict is ``corrupt``,
*resynchronises* at the intact successor and goes on. Worked example: a file
with entries at 0x0, 0x2e, 0x50, 0x70 whose entry at 0x50 has a flipped bit
scans as 0x0 ok, 0x2e ok, 0x50 corrupt, 0x70 ok (its ``prev`` names 0x50).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from minidb import impl
from minidb.errors import LogVersionError
from minidb.log.fields import ItemFormatError
from minidb.log.files import file_name
from minidb.log.header import CHECK_ENTRY, ERASED_TYPE, HEADER_SIZE, EntryHeader, check_entry, checksum, read_header
from minidb.log.logdef import FILE_HEADER, LOG_VERSION, VERSION_OFFSET


class FileScanner:
    """Iterate ``(offset, header)`` over the good entries of one file's bytes.

    After iteration: ``end`` is the offset just past the last good entry,
    ``last_offset`` that entry's offset (None if there is none), and
    ``problem``/``bad_offset``/``bad_header`` describe the entry that stopped
    the scan (``problem`` is None when the scan reached the end of the bytes).
    """

    def __init__(self, buf: bytes | memoryview, file_number: int, verify: bool = True, start: int = 0, prev: int | None = None,
                 erasing: Mapping[int, int] | None = None):
        self.buf = buf
        self.erasing = erasing  # offset -> original type of each entry an unfinished erasure of this file names
        self.file_number = file_number
        self.verify = verify
        self.start = start
        self.end = start
        self.last_offset: int | None = prev
        self.problem: str | None = None
        self.bad_offset: int | None = None
        self.bad_header: EntryHeader | None = None
        self.file_header: dict | None = None
        self.count = 0
        self.entries: list[tuple[int, EntryHeader]] | None = None  # kept by run_keeping

    def __iter__(self) -> Iterator[tuple[int, EntryHeader]]:
        return self._entries_from(self.start)

    def _entries_from(self, pos: int) -> Iterator[tuple[int, EntryHeader]]:
        """The good entries from offset ``pos`` on (the entry before it, if any, at ``last_offset``)."""
        while pos < len(self.buf):
            expected_prev = 0 if pos == 0 else self.last_offset
            erasing = self.erasing.get(pos) if self.erasing else None
            header, problem = CHECK_ENTRY.call(self.buf, pos, expected_prev, self.verify, erasing)
            if problem is None and pos == 0:
                problem = self._check_file_header(header)
            if problem is not None or header is None:
                self.problem, self.bad_offset, self.bad_header = problem, pos, header
                return
            self.count += 1
            self.last_offset = pos
            self.end = pos + header.entry_size
            yield pos, header
            pos = self.end

    def _check_file_header(self, header: EntryHeader) -> str | None:
        if header.type_code != FILE_HEADER.code:
            return f"the first entry is type 0x{header.type_code:02x}, not a FileHeader"
        item = bytes(self.buf[header.size : header.entry_size])
        check_version(item, self.file_number)
        try:
            values = FILE_HEADER.decode(item)
        except ItemFormatError as e:
            return f"unreadable FileHeader: {e}"
        if values["file_number"] != self.file_number:
            return f"FileHeader says file 0x{values['file_number']:x}, but this is file 0x{self.file_number:x}"
        self.file_header = values
        return None

    def run(self) -> "FileScanner":
        for _ in self:
            pass
        return self

    def run_keeping(self) -> "FileScanner":
        """:meth:`run`, keeping the ``(offset, header)`` of every good entry, in order, in ``entries``."""
        self.entries = list(self)
        return self


FILE_SCANNER = impl.hot_spot(FileScanner)


def check_version(item: bytes, number: int) -> None:
    """Refuse the intact FileHeader item ``item`` of file ``number`` if it was written in another
    log format version: :class:`~minidb.errors.LogVersionError` naming the file. (``log_version`` is
    at the same offset in every version; an item too short to hold it is left to the decoder.)"""
    if len(item) >= VERSION_OFFSET + 4:
        version = int.from_bytes(item[VERSION_OFFSET : VERSION_OFFSET + 4], "little")
        if version != LOG_VERSION:
            raise LogVersionError(f"{file_name(number)}: log format version {version}; this minidb reads version "
                                  f"{LOG_VERSION} only (its FileHeader names the environment the file belongs to)")


@dataclass(frozen=True)
class Verdict:
    kind: str  # torn | unwritten | foreign | corrupt
    successor: int | None  # offset of an intact entry after the bad one (after the zeros, if unwritten)


def intact_successor(buf: bytes | memoryview, bad_offset: int, header: EntryHeader | None) -> int | None:
    """The offset of an intact entry that follows the bad one, or None."""
    if header is not None:
        claimed = bad_offset + header.entry_size
        if bad_offset < claimed < len(buf) and check_entry(buf, claimed, bad_offset)[1] is None:
            return claimed
    pattern = struct.pack("<I", bad_offset)
    data = bytes(buf)
    hit = data.find(pattern, bad_offset + 1 + 6)
    while hit != -1:
        candidate = hit - 6
        if check_entry(data, candidate, bad_offset)[1] is None:
            return candidate
        hit = data.find(pattern, hit + 1)
    return None


def judge_bad_entry(buf: bytes | memoryview, bad_offset: int, header: EntryHeader | None) -> Verdict:
    """Is the bad entry at ``bad_offset`` a torn tail, unwritten space, or corruption?"""
    head = bytes(buf[bad_offset : bad_offset + HEADER_SIZE])
    if len(head) > 4 and head[4] == ERASED_TYPE:  # the log appends no erased entry: no torn append holds 0xff there
        return Verdict("corrupt", intact_successor(buf, bad_offset, header))
    # Zeros from byte 4 on: a first write torn after at most 4 bytes over a preallocated file, as in
    # a file of at most 4 bytes: torn, not foreign.
    if bad_offset == 0 and len(head) > 4 and any(head) and head[4] != FILE_HEADER.code and any(buf[4:]):
        if is_damaged_file_header(buf):
            return Verdict("corrupt", None)
        return Verdict("foreign", None)
    successor = intact_successor(buf, bad_offset, header)
    if not any(head):
        after_zeros = end_of_zeros(buf, bad_offset)
        if after_zeros == len(buf):
            return Verdict("unwritten", None)
        # An entry's first non-zero byte is at most its type byte (offset 4):
        # the checksum before it may start with zero bytes.
        for start in range(max(bad_offset + 1, after_zeros - 4), after_zeros + 1):
            if check_entry(buf, start, None)[1] is None:
                return Verdict("unwritten", start)
    if successor is None:
        return Verdict("torn", None)
    return Verdict("corrupt", successor)


def is_damaged_file_header(buf: bytes | memoryview) -> bool:
    """Is the first entry a FileHeader whose type byte alone was changed?

    Its checksum, computed as if the type byte said FileHeader, still
    matches: a damaged log file, not a file of some other program.
    """
    header, _ = read_header(buf, 0)
    if header is None or header.entry_size > len(buf):
        return False
    rest = memoryview(buf)[6 : header.entry_size]
    return checksum(FILE_HEADER.code, header.flags, rest) == header.checksum


def end_of_zeros(buf: bytes | memoryview, start: int) -> int:
    """The offset of the first non-zero byte at or after ``start`` (``len(buf)`` if none)."""
    data = bytes(buf[start:])
    stripped = data.lstrip(b"\0")
    return start + len(data) - len(stripped)


@dataclass(frozen=True)
class FileInspection:
    """What one log file holds: its good entries and, if any, the bad part."""

    number: int
    size: int
    entries: tuple[tuple[int, EntryHeader], ...]
    problem: str | None
    bad_offset: int | None
    verdict: Verdict | None


def inspect_file(buf: bytes | memoryview, number: int) -> FileInspection:
    """Read one file's bytes without changing anything (for pictures and tools)."""
    scanner = FileScanner(buf, number)
    entries = tuple(scanner)
    verdict = None
    if scanner.problem is not None:
        verdict = judge_bad_entry(buf, scanner.bad_offset or 0, scanner.bad_header)
    return FileInspection(number, len(buf), entries, scanner.problem, scanner.bad_offset, verdict)


@dataclass(frozen=True)
class ScannedEntry:
    """One entry as :func:`scan_tolerant` saw it.

    ``problem`` is None for an intact entry; for a bad one it says what is
    wrong and ``verdict`` says which kind of bad (``torn``, ``unwritten``,
    ``foreign`` or ``corrupt``; see :func:`judge_bad_entry`). ``header`` is
    None when not even the fixed part of the header could be read.
    """

    offset: int
    header: EntryHeader | None
    problem: str | None = None
    verdict: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None


def scan_tolerant(buf: bytes | memoryview, number: int, verify: bool = True,
                  erasing: Mapping[int, int] | None = None) -> Iterator[ScannedEntry]:
    """Every entry of one file's bytes, bad ones reported rather than raised.

    Intact entries come as in :class:`FileScanner`. At a bad entry, one
    ScannedEntry carries the problem and verdict; then a ``corrupt`` entry
    is stepped over to its intact successor (whose ``prev`` names it) and
    the scan goes on, while ``torn``, ``unwritten`` and ``foreign`` end it:
    nothing after them can be trusted. Whether a torn end is an error is the
    caller's call (it is not in the last file of a log, and is elsewhere).
    """
    start, prev = 0, None
    while True:
        scanner = FileScanner(buf, number, verify=verify, start=start, prev=prev, erasing=erasing)
        for offset, header in scanner:
            yield ScannedEntry(offset, header)
        if scanner.problem is None:
            return
        bad = scanner.bad_offset or 0
        verdict = judge_bad_entry(buf, bad, scanner.bad_header)
        yield ScannedEntry(bad, scanner.bad_header, scanner.problem, verdict.kind)
        if verdict.kind != "corrupt" or verdict.successor is None:
            return
        start, prev = verdict.successor, bad
