"""Exercise 15a, reference: minidb's own answer (not a second implementation).

``resync`` is what :func:`minidb.log.scan.intact_successor` computes for
:func:`minidb.log.scan.scan_tolerant`, which the Spark data source uses to go
on reading a file after a corrupt entry.
"""

from __future__ import annotations

from minidb.log.header import read_header
from minidb.log.scan import intact_successor


def resync(data: bytes, bad_offset: int) -> int | None:
    """The offset of the intact entry after the bad one at ``bad_offset``, or None."""
    header, _ = read_header(data, bad_offset)
    return intact_successor(data, bad_offset, header)
