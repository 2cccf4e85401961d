"""What is wrong with a set of log files: the judgements every reader shares.

Each reader walks entries its own way (``minidb verify`` every byte of every
file, the engine's forward scan behind ``minidb printlog`` entry by entry, the
Spark data source one file per task), but they judge the *files* with these
functions, so they find the same problems and name them in the same words:

- :func:`missing_file`: a gap in the file numbers. A hole in the middle is a
  lost file, unless the deleted-files record (:mod:`minidb.log.deleted`)
  names every file in it: those were deleted on purpose.
- :func:`first_file_problem`: the log's first file must be its beginning: its
  ``FileHeader`` names no previous file (``last_entry_lsn`` is NULL), unless
  the files before it were deleted on purpose, which the *log head*
  (:mod:`minidb.log.head`) records: then the first file must be the head
  itself, or the first file above it that the deleted-files record does not
  name. A first file that names a previous one without such a record, or
  that lies above the recorded head, means files were lost.
- :func:`bad_entry_problem`: a file whose good entries stop before its bytes
  do, given the verdict of :func:`minidb.log.scan.judge_bad_entry`. In the
  last file a torn tail or unwritten space is what a crash leaves, not a
  problem; anywhere else it is one, and so is corruption, anywhere.
- :func:`next_file_problem`: a file that is not the last must end exactly at
  the entry that the next file's ``FileHeader`` names as the previous file's
  last (``last_entry_lsn``): the old file is fsynced before a new one starts,
  so it is complete. A file that is empty, or was cut at an entry boundary,
  ends too early although every entry in it reads as intact; only this
  comparison shows it. Across a jump over files deleted on purpose the
  previous file's last entry is gone; the ``FileHeader`` must then name an
  entry of the file just before it (deleted), and nothing more can be checked.
- :func:`foreign_file_problem`: a file whose ``FileHeader`` carries another
  environment's id (:mod:`minidb.log.logdef`). Two environments that ran the
  same operations with values of the same sizes have files whose numbers and
  ``last_entry_lsn`` chains match, so only the id tells a sibling's file
  from the log's own. The log's id is its first kept file's (the log head's:
  every reader has read that one), unless the caller knows better (a page
  store's volume header holds the id its log must carry); so a middle or
  last file swapped in from a sibling directory is the one named.

Worked example: files 1, 2, 3, where file 2 held entries up to 0x2/0x7c0 and
lost everything after its entry at 0x2/0x3f0, which ends at 0x410. Every
entry left in file 2 is intact, but ``00000003.jdb`` starts with a
FileHeader whose ``last_entry_lsn`` is 0x2/0x7c0, so the problem is::

    00000002.jdb at offset 0x410: the file's last entry is 0x2/0x3f0, but 00000003.jdb's
    FileHeader says it is 0x2/0x7c0 (the file was cut short)
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.errors import ForeignLogFileError, LogCorruptionError
from minidb.log.deleted import read_deleted_files
from minidb.log.envid import env_id_text
from minidb.log.files import effective_head, file_name, first_gap
from minidb.log.head import read_log_head
from minidb.log.lsn import LSN

NOT_A_LOG_FILE = "not a minidb log file (it does not start with a FileHeader)"


@dataclass(frozen=True)
class Problem:
    """What is wrong, and where: a log file and a byte offset in it."""

    file_name: str
    offset: int
    what: str
    foreign: bool = False  # the file belongs to another environment

    def __str__(self) -> str:
        return f"{self.file_name} at offset 0x{self.offset:x}: {self.what}"

    def error(self) -> LogCorruptionError:
        kind = ForeignLogFileError if self.foreign else LogCorruptionError
        return kind(self.file_name, self.offset, self.what)


def missing_file(numbers: list[int] | tuple[int, ...], deleted: frozenset[int] = frozenset()) -> Problem | None:
    """The first file missing between the first and the last of ``numbers`` (sorted) and not recorded in
    ``deleted`` (the deleted-files record's numbers)."""
    gap = first_gap(numbers, deleted)
    return None if gap is None else Problem(file_name(gap[0]), 0, gap[1])


def first_file_problem(number: int, header: dict | None, head: int = 1) -> Problem | None:
    """File ``number`` is the first of the log and starts with the FileHeader ``header`` (None:
    it has none; its own check reports why); ``head`` is the recorded log head (1: no file was
    ever deleted on purpose)."""
    if number > head > 1:
        return Problem(file_name(head), 0, f"log file is missing: the files before {file_name(number)} were lost "
                                           f"(only those before {file_name(head)} were deleted on purpose)")
    if header is None or header["last_entry_lsn"].is_null or number == head > 1:
        return None
    return Problem(file_name(number), 0, f"the log's first file names a previous file (its FileHeader says the "
                                         f"previous file ended at {header['last_entry_lsn']}): the files "
                                         f"before {file_name(number)} are lost")


def first_file_problem_on(disk, number: int, header: dict | None) -> Problem | None:
    """:func:`first_file_problem` with the log head recorded on ``disk`` (past the middle files recorded
    deleted right above it)."""
    return first_file_problem(number, header, effective_head(read_log_head(disk), read_deleted_files(disk)))


def bad_entry_problem(number: int, offset: int, kind: str, problem: str, last: bool) -> Problem | None:
    """The bad entry at ``offset`` of file ``number``, judged ``kind`` (torn, unwritten, foreign or
    corrupt) because of ``problem``: a Problem, or None where it only ends the log (a crash's tail in
    the ``last`` file)."""
    name = file_name(number)
    if kind == "foreign":
        return Problem(name, 0, NOT_A_LOG_FILE)
    if kind == "corrupt":
        return Problem(name, offset, problem)
    if not last:
        return Problem(name, offset, f"{kind} entry in a file that is not the last of the log "
                                     f"(a file is complete before the next begins): {problem}")
    return None


def next_file_problem(number: int, last_offset: int | None, end: int, next_number: int,
                      next_header: dict | None) -> Problem | None:
    """File ``number``, read to its end ``end`` with its last entry at ``last_offset`` (None: no
    entry), is followed by file ``next_number``, whose FileHeader's values are ``next_header``
    (None: it has none to compare with; its own check reports why)."""
    name = file_name(number)
    if last_offset is None:
        return Problem(name, 0, "log file is empty but is not the last file")
    if next_header is None:
        return None
    if next_number != number + 1:  # the files between were deleted on purpose (the caller checked the gap)
        claimed = next_header["last_entry_lsn"]
        if claimed.file == next_number - 1:
            return None
        return Problem(file_name(next_number), 0, f"{file_name(next_number)}'s FileHeader says the file before "
                                                  f"it ended at {claimed}, not in {file_name(next_number - 1)}")
    claimed, actual = next_header["last_entry_lsn"], LSN(number, last_offset)
    if claimed == actual:
        return None
    cut = " (the file was cut short)" if claimed.file == number and claimed.offset >= end else ""
    return Problem(name, end, f"the file's last entry is {actual}, but {file_name(next_number)}'s FileHeader "
                              f"says it is {claimed}{cut}")


def foreign_file_problem(number: int, header: dict | None, env_id: int | None) -> Problem | None:
    """File ``number`` starts with the FileHeader ``header`` (None: it has none; its own check reports
    why); ``env_id`` is the log's environment id (None: not known, nothing to compare with)."""
    if header is None or env_id is None or header["env_id"] == env_id:
        return None
    name = file_name(number)
    return Problem(name, 0, f"{name} belongs to another environment (env id {env_id_text(header['env_id'])}, "
                            f"this log's is {env_id_text(env_id)})", foreign=True)
