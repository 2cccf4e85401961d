"""Checking a whole log: every file, every entry, every item.

:func:`verify_log` reads every log file in full (opening a log reads only the
last one) and checks, for each entry, what readers check (header, flags, size,
``prev`` chain, checksum) and also that the item decodes by its entry type.
Across files it checks that each ``FileHeader`` names its own file and points
(``last_entry_lsn``) at the true last entry of the file before it (into the
file just before it when that one was deleted on purpose: a jump over files
that the deleted-files record, :mod:`minidb.log.deleted`, names is fine; any
other missing file is lost), and that
each carries the log's environment id (the first file's, unless the caller
names the environment's: a page store's volume header). Files are
judged by :mod:`minidb.log.check`, as every other reader judges them.

An erased entry is checked in its erased form (:mod:`minidb.log.header`), and
only the log store has an eraser: in a log without any entry of the log
store's, an erased entry is a problem however well formed. The first problem
found is reported with its file and offset. The owner of a log with an
eraser (the log store) may add its own rule of where an erased entry may lie
(``erased_rule``: outside the recovery interval, only types it erases). A torn tail or
unwritten space at the end of the last file is not a problem: it is what a
crash leaves, and opening the log cuts it. It is reported as a note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from minidb.errors import ForeignLogFileError, LogCorruptionError, UserError
from minidb.io import Disk
from minidb.log.check import (
    Problem,
    bad_entry_problem,
    first_file_problem_on,
    foreign_file_problem,
    missing_file,
    next_file_problem,
)
from minidb.log.deleted import read_deleted_files
from minidb.log.end import file_header_of, log_env_id, read_file
from minidb.log.fields import ItemFormatError
from minidb.log.files import file_name, log_file_numbers
from minidb.log.header import ERASABLE_CODES, ERASED_TYPE
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.scan import FileScanner, judge_bad_entry
from minidb.log.types import type_by_code


@dataclass
class VerifyReport:
    files: int = 0
    entries: int = 0
    end: LSN = NULL_LSN
    problem: Problem | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None


def require_log(disk: Disk) -> list[int]:
    """The log file numbers on ``disk``; a UserError if there are none."""
    numbers = log_file_numbers(disk)
    if not numbers:
        raise UserError(f"{disk.where()}: not a minidb log (no log files named like 00000001.jdb)")
    return numbers


ErasedRule = Callable[[LSN, int, bool], "str | None"]


def verify_log(disk: Disk, erasing: Mapping[int, Mapping[int, int]] | None = None,
               erased_rule: ErasedRule | None = None, env_id: int | None = None) -> VerifyReport:
    """Check every file of the log on ``disk`` (see the module documentation).

    ``erasing``: the unfinished erasure the log store's eraser recorded (file -> offset -> original type),
    whose entries may be half erased. ``erased_rule(lsn, original_type, in_last_file)``: where the owner's
    eraser may have put an erased entry (None, or why not there), asked of every erased entry.
    ``env_id``: the environment id its files must carry (None: as the files say, the majority's when the
    first and last file differ: :func:`~minidb.log.end.log_env_id`)."""
    try:
        numbers, deleted = require_log(disk), read_deleted_files(disk)
    except LogCorruptionError as e:  # the deleted-files record is damaged: every file's status is unknown
        return VerifyReport(problem=Problem(e.file_name, e.offset, e.what))
    report = VerifyReport(problem=missing_file(numbers, deleted))
    if report.problem is not None:
        return report
    if env_id is None:
        try:
            env_id = log_env_id(disk, numbers, file_header_of(disk, numbers[0]), file_header_of(disk, numbers[-1]))
        except ForeignLogFileError as e:
            report.problem = Problem(e.file_name, e.offset, e.what, foreign=True)
            return report
    previous = None  # (number, last entry's offset, end) of the file before, to check against this one
    first_erased: Problem | None = None  # the first erased entry: a problem unless the log store wrote this log
    log_store = False  # an entry of the log store's (not erased) was seen
    for index, number in enumerate(numbers):
        name = file_name(number)
        buf = read_file(disk, number)
        scanner = FileScanner(buf, number, erasing=(erasing or {}).get(number))
        for offset, header in scanner:
            if offset == 0 and index == 0:
                report.problem = first_file_problem_on(disk, number, scanner.file_header)
                if report.problem is not None:
                    return report
            if offset == 0:
                report.problem = foreign_file_problem(number, scanner.file_header, env_id)
                if report.problem is not None:
                    return report
            if offset == 0 and previous is not None:
                report.problem = next_file_problem(*previous, number, scanner.file_header)
                if report.problem is not None:
                    return report
                previous = None
            code = header.type_code
            if code == ERASED_TYPE:
                if first_erased is None:
                    first_erased = Problem(name, offset, "erased entry in a log that holds no log store entry: "
                                                         "no other owner of a log has an eraser")
                why = erased_rule(LSN(number, offset), buf[offset + header.size],
                                  index == len(numbers) - 1) if erased_rule is not None else None
                if why is not None:
                    report.problem = Problem(name, offset, why)
                    return report
            elif code in ERASABLE_CODES:
                log_store = True
            entry_type = type_by_code(code)
            if entry_type is not None:
                try:
                    entry_type.decode(buf[offset + header.size : offset + header.entry_size])
                except ItemFormatError as e:
                    report.problem = Problem(name, offset, f"item does not match {entry_type.name}: {e}")
                    return report
            report.entries += 1
        if previous is not None:  # this file holds no FileHeader to check the one before against
            report.problem = next_file_problem(*previous, number, None)
            if report.problem is not None:
                return report
        report.files += 1
        if scanner.problem is not None:
            bad = scanner.bad_offset or 0
            kind = judge_bad_entry(buf, bad, scanner.bad_header).kind
            report.problem = bad_entry_problem(number, bad, kind, scanner.problem, index == len(numbers) - 1)
            if report.problem is not None:
                return report
            article = "an" if kind[0] in "aeiou" else "a"
            report.notes.append(
                f"{name}: {len(buf) - bad} bytes at offset 0x{bad:x} are {article} {kind} tail "
                f"({scanner.problem}); opening the log cuts them"
            )
        previous = (number, scanner.last_offset, scanner.end)
        report.end = LSN(number, scanner.end)
    if first_erased is not None and not log_store:
        report.problem = first_erased
    return report
