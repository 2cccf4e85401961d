"""Finding the end of the log when it is opened.

After a crash, the last log file may end in a *torn tail*: entries that were
being written when the power went out, cut short or only partly on disk.
Opening the log reads the last file entry by entry (see
:mod:`minidb.log.scan`) and stops at the first bad entry:

- a torn tail or unwritten space is *cut off*: the log's end is set before
  it, and a writer truncates the file there (a reader leaves it alone); the
  cut is reported in :class:`TailCut` (file, offset, bytes, why);
- a bad entry with an intact entry after it is *corruption*:
  :class:`~minidb.errors.LogCorruptionError` names the file and offset, and
  nothing is changed.

Only the last file needs this: a new file is started only after the previous
one was flushed and fsynced, so earlier files are complete. Readers check
them as they go, and ``minidb verify`` checks everything.

Opening also learns the log's environment id (:mod:`minidb.log.logdef`): the
one its first and last file carry, unless the opener knows it (a page store's
volume header); when those two differ, the id most of its files carry
(:func:`log_env_id`), so that the file copied in is the one named. It refuses
a first or last file that carries another
(:class:`~minidb.errors.ForeignLogFileError`); readers check the files in
between as they open them (:mod:`minidb.log.reader`).

A last file that was created but whose ``FileHeader`` never reached the disk
ends up empty: its header is written again by the next writer, which needs
the LSN of the previous file's last entry (``last_entry_in_prev_file``).

:func:`scan_end` also returns the last file's good entries as the scan
checked them (:class:`CheckedFile`: each entry's offset and header, and the
file's bytes). A log opened with ``keep_opening_scan`` keeps them for one
reader that reads the last file right after opening (the log store's
recovery), which then neither reads nor checks those bytes again (see
``LogManager.take_opening_scan``).

The scan of the last file goes through ``LAST_FILE_SCAN``, an exercise hook
(:mod:`minidb.impl`): under ``MINIDB_IMPL=student`` a
student's ``valid_end`` (exercise 01a) decides where the good entries end.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from minidb import impl
from minidb.errors import ForeignLogFileError, LogCorruptionError, LogError
from minidb.io import Disk
from minidb.log.check import first_file_problem_on, foreign_file_problem
from minidb.log.deleted import read_deleted_files
from minidb.log.envid import env_id_text
from minidb.log.files import file_name, first_gap, log_file_numbers
from minidb.log.header import MAX_HEADER_SIZE, EntryHeader, check_entry, read_header
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.scan import FILE_SCANNER, FileScanner, Verdict, judge_bad_entry


@dataclass(frozen=True)
class TailCut:
    file_number: int
    offset: int
    length: int
    kind: str  # torn | unwritten
    problem: str

    def __str__(self) -> str:
        what = "torn tail" if self.kind == "torn" else "unwritten space (a lost unsynced write)"
        return (
            f"{file_name(self.file_number)}: cut {self.length} bytes at offset 0x{self.offset:x}: "
            f"{what}; {self.problem}"
        )


@dataclass(frozen=True)
class LogEnd:
    """Where the log ends; where the next entry goes."""

    files: tuple[int, ...]
    last_file: int | None  # None: there is no log file yet
    end_offset: int  # next entry's offset in last_file (0: a FileHeader is needed first)
    last_offset: int | None  # offset of the last entry of last_file
    last_entry: LSN  # LSN of the last entry of the log (NULL_LSN if none)
    last_entry_in_prev_file: LSN
    cut: TailCut | None
    env_id: int | None = None  # the log's environment id (None: no file holds one yet)

    @property
    def end_lsn(self) -> LSN:
        return LSN(self.last_file or 0, self.end_offset)


def read_file(disk: Disk, number: int) -> bytes:
    with disk.open(file_name(number)) as handle:
        return handle.read_all()


def last_entry_of(disk: Disk, number: int, erasing: Mapping[int, int] | None = None) -> LSN:
    """The LSN of the last entry of a complete (non-last) log file (``erasing``: as for FileScanner)."""
    scanner = FileScanner(read_file(disk, number), number, erasing=erasing).run()
    if scanner.problem is not None:
        raise LogCorruptionError(file_name(number), scanner.bad_offset or 0, scanner.problem)
    if scanner.last_offset is None:
        raise LogCorruptionError(file_name(number), 0, "log file is empty but is not the last file")
    return LSN(number, scanner.last_offset)


def file_header_of(disk: Disk, number: int) -> dict | None:
    """The values of file ``number``'s FileHeader, or None if it does not start with an intact one."""
    with disk.open(file_name(number)) as handle:
        head = handle.read(0, MAX_HEADER_SIZE + 64)  # a FileHeader item is 32 bytes
    scanner = FileScanner(head, number)
    next(iter(scanner), None)
    return scanner.file_header


def why_not_a_tail(verdict: Verdict) -> str:
    """Why a bad entry that a crash cannot explain is corruption (for error messages)."""
    if verdict.kind == "foreign":
        return "the last log file does not start with a FileHeader, though other log files precede it"
    if verdict.successor is None:
        return "the FileHeader's type byte was changed (its checksum matches a FileHeader)"
    return f"an intact entry follows at 0x{verdict.successor:x}, so this is not a torn tail"


def valid_end(data: bytes, file_number: int) -> int:
    """The offset just past the last good entry of log file ``file_number`` (exercise 01a's function)."""
    return FileScanner(data, file_number).run().end


def _scan_last(buf: bytes, number: int) -> FileScanner:
    return FILE_SCANNER.call(buf, number).run_keeping()


@dataclass
class StudentScan:
    """What :func:`find_end` reads of a :class:`FileScanner`, from a student's ``valid_end``."""

    end: int
    last_offset: int | None
    file_header: dict | None
    problem: str | None
    bad_offset: int | None
    bad_header: EntryHeader | None


def _scan_from_exercise(hook: impl.Hook, student: Callable) -> Callable[[bytes, int], StudentScan]:
    """A student's ``valid_end`` (exercise 01a) as the scan of the last file: the entries before its
    answer are the good ones (stepped over by their sizes), the entry at it the bad one."""
    def scan(buf: bytes, number: int) -> StudentScan:
        end = student(bytes(buf), number)
        if not (isinstance(end, int) and 0 <= end <= len(buf)):
            raise hook.wrong(f"returned {end!r}, not an offset 0..0x{len(buf):x} in {file_name(number)}")
        pos, last = 0, None
        while pos < end:
            header, _ = read_header(buf, pos)
            if header is None or pos + header.entry_size > end:
                raise hook.wrong(f"returned 0x{end:x}, which is not where an entry of {file_name(number)} ends")
            last, pos = pos, pos + header.entry_size
        file_header = FileScanner(buf[: read_header(buf, 0)[0].entry_size], number).run().file_header if end else None
        problem, bad_offset, bad_header = None, None, None
        if end < len(buf):
            bad_header, problem = check_entry(buf, end, 0 if end == 0 else last)
            bad_offset, problem = end, problem or "valid_end (exercise 01a) stopped at this entry"
        return StudentScan(end, last, file_header, problem, bad_offset, bad_header)
    return scan


LAST_FILE_SCAN = impl.register("01a_log_end", "valid_end", _scan_last, _scan_from_exercise)


@dataclass(frozen=True)
class CheckedFile:
    """The last log file as :func:`scan_end` read and checked it, for one later reader (recovery).

    ``entries`` holds the ``(offset, header)`` of every good entry below ``end``, in order, each
    checked as a forward scan checks it (chain, checksum, the FileHeader); ``data`` is the file's
    bytes as read. Only valid while nothing changed those bytes (see :meth:`LogManager.take_opening_scan
    <minidb.log.manager.LogManager.take_opening_scan>`) and nothing was appended after ``end``.
    """

    number: int
    data: bytes
    entries: list[tuple[int, EntryHeader]]
    end: int
    file_header: dict | None

    def last_of_type(self, type_code: int) -> tuple[int, EntryHeader] | None:
        """The ``(offset, header)`` of the last entry of type ``type_code`` in the file, or None."""
        for found in reversed(self.entries):
            if found[1].type_code == type_code:
                return found
        return None


def find_end(disk: Disk, env_id: int | None = None) -> LogEnd:
    """Where the log on ``disk`` ends (a torn tail cut; corruption raised), see the module documentation."""
    return scan_end(disk, env_id=env_id)[0]


def scan_end(disk: Disk, erasing: Mapping[int, Mapping[int, int]] | None = None,
             env_id: int | None = None) -> tuple[LogEnd, CheckedFile | None]:
    """:func:`find_end`, and the last file's entries as the scan checked them (None when a student's
    ``valid_end`` scanned it, or when there is no log file). ``erasing``: the unfinished erasure
    recorded by the log store's eraser, per file (never the last one: the eraser does not erase it).
    ``env_id``: the environment id the log's files must carry (None: as the files say, see
    :func:`log_env_id`)."""
    files = tuple(log_file_numbers(disk))
    if not files:
        return LogEnd(files, None, 0, None, NULL_LSN, NULL_LSN, None), None
    gap = first_gap(files, read_deleted_files(disk))
    if gap is not None:
        raise LogCorruptionError(file_name(gap[0]), 0, f"{gap[1]} in {disk.where()}")
    last = files[-1]
    buf = read_file(disk, last)
    scanner = LAST_FILE_SCAN.call(buf, last)  # FileScanner, or exercise 01a's valid_end (minidb.impl)
    first_header = scanner.file_header if len(files) == 1 else file_header_of(disk, files[0])
    problem = first_file_problem_on(disk, files[0], first_header)
    if problem is not None:
        raise problem.error()
    env_id = log_env_id(disk, files, first_header, scanner.file_header) if env_id is None else env_id
    for number, header in ((files[0], first_header), (last, scanner.file_header)):
        problem = foreign_file_problem(number, header, env_id)
        if problem is not None:
            raise problem.error()
    cut = None
    if scanner.problem is not None:
        bad = scanner.bad_offset or 0
        verdict = judge_bad_entry(buf, bad, scanner.bad_header)
        if verdict.kind == "foreign" and len(files) == 1:
            raise LogError(f"{disk.where(file_name(last))}: not a minidb log file (it does not start with a FileHeader)")
        if verdict.kind in ("foreign", "corrupt"):
            raise LogCorruptionError(file_name(last), bad, f"{scanner.problem}; {why_not_a_tail(verdict)}")
        cut = TailCut(last, bad, len(buf) - bad, verdict.kind, scanner.problem)
    if scanner.file_header is not None:
        prev_last = scanner.file_header["last_entry_lsn"]
    elif len(files) > 1:  # (never across a deletion: the file being written is never deleted, nor the one before)
        prev_last = last_entry_of(disk, files[-2], (erasing or {}).get(files[-2]))
    else:
        prev_last = NULL_LSN
    if scanner.last_offset is None:
        last_entry = prev_last
    else:
        last_entry = LSN(last, scanner.last_offset)
    checked = None
    if isinstance(scanner, FileScanner) and scanner.entries is not None:
        checked = CheckedFile(last, buf, scanner.entries, scanner.end, scanner.file_header)
    return LogEnd(files, last, scanner.end, scanner.last_offset, last_entry, prev_last, cut, env_id), checked


def log_env_id(disk: Disk, numbers, first: dict | None, last: dict | None) -> int | None:
    """The log's environment id as its files say (``first``/``last``: the FileHeader values of its first
    and last file; None: no intact one): the id they carry. When they differ, one of them was copied
    in from another environment, and the id most of the log's files carry is the log's, so that the
    error names the odd file, whichever end it is at; a tie is a :class:`ForeignLogFileError` naming
    both. None when no file carries an id yet."""
    ids = [h["env_id"] for h in (first, last) if h is not None]
    if len(set(ids)) < 2:
        return ids[0] if ids else None
    counts = Counter(h["env_id"] for n in numbers if (h := file_header_of(disk, n)) is not None)
    (best, most), (other, second) = counts.most_common(2)
    if most == second:
        a, b = file_name(numbers[0]), file_name(numbers[-1])
        raise ForeignLogFileError(a, 0, f"{a} and {b} belong to different environments (env ids "
                                        f"{env_id_text(best)} and {env_id_text(other)}, {most} files each): one "
                                        "was copied from another environment")
    return best
