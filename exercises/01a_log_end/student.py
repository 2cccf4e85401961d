"""Exercise 01a: find where a log file's valid entries end.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/01a_log_end --exercise-impl=student
"""

from __future__ import annotations


def valid_end(data: bytes, file_number: int) -> int:
    """Return the offset just past the last good entry of one log file.

    ``data`` is the whole content of log file number ``file_number`` (for
    example ``00000001.jdb`` is file 1). Walk its entries from offset 0:

    - the first entry must be a FileHeader whose ``file_number`` field is
      ``file_number``, and its ``prev`` field must be 0;
    - every entry must have a readable header with a legal type code and
      legal flags, fit in ``data``, have a ``prev`` field equal to the
      offset of the entry before it, and carry a matching checksum (computed
      with the INVISIBLE flag bit taken as 0; erased entries, type 0xff,
      are checked the same way).

    Stop at the first entry that fails any check and return its offset; if
    every entry is good, return ``len(data)``. An empty file, or one whose
    first entry is bad, gives 0.
    """
    raise NotImplementedError("exercise 01a: implement valid_end (see exercises/01a_log_end/README.md)")
