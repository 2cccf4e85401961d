"""Log file names: eight lowercase hex digits and ``.jdb``, as in JE.

File 1 is ``00000001.jdb``, file 26 is ``0000001a.jdb``. Files are numbered
from 1 and never renamed. Whole files are deleted only from the low end, and
only after the first file kept, the *log head*, was recorded
(:mod:`minidb.log.head`); :func:`log_file_numbers` leaves out files below
the head (deleted on purpose, or left by a crash before their deletion), so
every reader sees the same log. The numbering only grows.
"""

from __future__ import annotations

import re

from minidb.io import Disk
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
    """The numbers of the log files on ``disk`` from the log head on, ascending; other files are ignored."""
    head = read_log_head(disk)
    return [n for n in all_log_file_numbers(disk) if n >= head]


def all_log_file_numbers(disk: Disk) -> list[int]:
    """Every log file on ``disk``, those below the log head (about to be deleted) included."""
    numbers = (file_number(name) for name in disk.list())
    return sorted(n for n in numbers if n is not None)


def first_gap(numbers: list[int] | tuple[int, ...]) -> tuple[int, str] | None:
    """The first file missing between the first and the last of ``numbers`` (sorted), and why it is missed.

    Files are deleted only from the low end, so a hole in the middle means a
    lost file, and reading across it would silently skip its entries.
    """
    for before, after in zip(numbers, numbers[1:], strict=False):
        if after != before + 1:
            return before + 1, f"log file is missing: the log jumps from {file_name(before)} to {file_name(after)}"
    return None
