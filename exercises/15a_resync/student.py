"""Exercise 15a: resynchronise after a corrupt entry.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/15a_resync --exercise-impl=student
"""

from __future__ import annotations


def resync(data: bytes, bad_offset: int) -> int | None:
    """Return the offset of the intact entry that follows the bad entry at ``bad_offset``.

    ``data`` is the whole content of one log file. First try where the bad
    entry's header says it ends (if that header can be read); then search
    ``data`` after it for an entry whose ``prev`` field is ``bad_offset``.
    The answer must be an intact entry (readable header, legal type and
    flags, fits in ``data``, matching checksum) whose ``prev`` is
    ``bad_offset``. Return None when there is none.
    """
    raise NotImplementedError("exercise 15a: implement resync (see exercises/15a_resync/README.md)")
