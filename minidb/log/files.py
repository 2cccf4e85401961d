"""Log file names: eight lowercase hex digits and ``.jdb``, as in JE.

File 1 is ``00000001.jdb``, file 26 is ``0000001a.jdb``. Files are numbered
from 1 and never renamed. Whole files are deleted on purpose only after a
durable record says so: from the low end, the first file kept, the *log
head* (:mod:`minidb.log.head`); from the middle, the deleted-files record
(:mod:`minidb.log.deleted`). :func:`log_file_numbers` leaves out both kinds
(deleted, or left by a crash before their deletion), so every reader sees
the same log, and :func:`first_gap` accepts a jump over recorded files only.
The numbering only grows.
"""

from __future__ import annotations

import re

from minidb.io import Disk
from minidb.log.deleted import read_deleted_files
from minidb.log.head import read_log_head

SUFFIX = ".jdb"
_NAME = re.compile(r"^([0-9a-f]{8})\.jdb$")


def file_name(number: int) -> str:
    return f"{number:08x}{SUFFIX}"


def file_number(name: str) -> int | None:
    """The number of a log file name, or None if ``name`` is not one."""
    match = _NAME.match(name)
    return int(match.group(1), 16) if match else None


def log_file_numbers(disk: Disk) -> list[int]:
    """The numbers of the log files on ``disk`` from the log head on, ascending, without the files recorded
    deleted from the middle; other files are ignored."""
    head, deleted = read_log_head(disk), read_deleted_files(disk)
    return [n for n in all_log_file_numbers(disk) if n >= head and n not in deleted]


def effective_head(head: int, deleted: frozenset[int] | set[int]) -> int:
    """The first file the log can start with: the recorded head, past the recorded middle files right
    above it (deleted on purpose as well)."""
    while head in deleted:
        head += 1
    return head


def all_log_file_numbers(disk: Disk) -> list[int]:
    """Every log file on ``disk``, those below the log head (about to be deleted) included."""
    numbers = (file_number(name) for name in disk.list())
    return sorted(n for n in numbers if n is not None)


def first_gap(numbers: list[int] | tuple[int, ...],
              deleted: frozenset[int] | set[int] = frozenset()) -> tuple[int, str] | None:
    """The first file missing between the first and the last of ``numbers`` (sorted), and why it is missed.

    A hole in the middle is a lost file, and reading across it would silently
    skip its entries, unless every file in it is recorded in ``deleted``
    (:mod:`minidb.log.deleted`): those were deleted on purpose.
    """
    for before, after in zip(numbers, numbers[1:], strict=False):
        lost = next((n for n in range(before + 1, after) if n not in deleted), None)
        if lost is not None:
            return lost, (f"log file is missing: the log jumps from {file_name(before)} to {file_name(after)}"
                          + (" (only some files between were deleted on purpose)" if deleted.intersection(
                              range(before + 1, after)) else ""))
    return None
