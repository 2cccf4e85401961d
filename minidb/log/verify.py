"""Checking a whole log: every file, every entry, every item.

:func:`verify_log` reads every log file in full (opening a log reads only the
last one) and checks, for each entry, what readers check (header, flags, size,
``prev`` chain, checksum) and also that the item decodes by its entry type.
Across files it checks that each ``FileHeader`` names its own file and points
(``last_entry_lsn``) at the true last entry of the file before it, and that
each carries the log's environment id (the first file's, unless the caller
names the environment's: a page store's volume header). Files are
judged by :mod:`minidb.log.check`, as every other reader judges them.

The first problem found is reported with its file and offset. A torn tail or
unwritten space at the end of the last file is not a problem: it is what a
crash leaves, and opening the log cuts it. It is reported as a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from minidb.errors import UserError
from minidb.io import Disk
from minidb.log.check import (Problem, bad_entry_problem, first_file_problem_on, foreign_file_problem, missing_file,
                              next_file_problem)
from minidb.log.end import read_file
from minidb.log.fields import ItemFormatError
from minidb.log.files import file_name, log_file_numbers
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


def verify_log(disk: Disk, env_id: int | None = None) -> VerifyReport:
    """Check every file of the log on ``disk`` (see the module documentation); ``env_id``: the
    environment id its files must carry (None: the first file's)."""
    numbers = require_log(disk)
    report = VerifyReport(problem=missing_file(numbers))
    if report.problem is not None:
        return report
    previous = None  # (number, last entry's offset, end) of the file before, to check against this one
    for index, number in enumerate(numbers):
        name = file_name(number)
        buf = read_file(disk, number)
        scanner = FileScanner(buf, number)
        for offset, header in scanner:
            if offset == 0 and index == 0:
                report.problem = first_file_problem_on(disk, number, scanner.file_header)
                if report.problem is not None:
                    return report
                env_id = scanner.file_header["env_id"] if env_id is None and scanner.file_header else env_id
            if offset == 0:
                report.problem = foreign_file_problem(number, scanner.file_header, env_id)
                if report.problem is not None:
                    return report
            if offset == 0 and previous is not None:
                report.problem = next_file_problem(*previous, number, scanner.file_header)
                if report.problem is not None:
                    return report
                previous = None
            entry_type = type_by_code(header.type_code)
            if entry_type is not None and not header.erased:
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
    return report
