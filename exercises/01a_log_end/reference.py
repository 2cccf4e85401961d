"""Exercise 01a, reference: minidb's own answer (not a second implementation).

``valid_end`` is what :class:`minidb.log.scan.FileScanner` computes when the
log is opened (see :func:`minidb.log.end.find_end`): the scanner walks the
file's good entries and stops at the first bad one; ``end`` is the offset just
past the last good entry.
"""

from __future__ import annotations

from minidb.log.scan import FileScanner


def valid_end(data: bytes, file_number: int) -> int:
    """The offset just past the last good entry of log file ``file_number``."""
    return FileScanner(data, file_number).run().end
