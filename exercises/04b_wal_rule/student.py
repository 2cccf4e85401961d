"""Exercise 04b: the write-ahead rule when the buffer pool writes pages.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/04b_wal_rule --exercise-impl=student
"""

from __future__ import annotations

from collections.abc import Sequence

from minidb.log import LSN

NO_PAGE_LSN = LSN(0, 0)  # the page LSN of a page no logged entry has changed


def log_sync_point(page_lsns: Sequence[LSN], durable_end: LSN) -> LSN | None:
    """Before one disk write of pages with these page LSNs: the LSN up to which the log must be made
    durable first, or None if it is durable far enough already. ``durable_end`` is where the log's
    durable bytes end. See README.md.
    """
    raise NotImplementedError("log_sync_point: your code here")
