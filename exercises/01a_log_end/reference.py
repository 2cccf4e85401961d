"""Exercise 01a, reference: minidb's own answer (not a second implementation).

``valid_end`` is :func:`minidb.log.end.valid_end`: what
:class:`minidb.log.scan.FileScanner` computes when the log is opened (see
:func:`minidb.log.end.find_end`): the scanner walks the file's good entries
and stops at the first bad one; ``end`` is the offset just past the last good
entry. The same module turns a student's ``valid_end`` into the scan of the
last log file when the log is opened (``LAST_FILE_SCAN``, see
``minidb/impl.py``).
"""

from __future__ import annotations

from minidb.log.end import valid_end

__all__ = ["valid_end"]
