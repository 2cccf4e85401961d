"""Exercise 04b, reference: minidb's own answer (not a second implementation).

``log_sync_point`` is :func:`minidb.pagestore.buffer.walrule.log_sync_point`,
which ``BufferPool._write_copies`` in ``minidb/pagestore/buffer/bufferpool.py``
calls before every page write (a dirty victim, a run of the cleaner's): the
one place the buffer pool applies the write-ahead rule.
"""

from __future__ import annotations

from minidb.pagestore.buffer.walrule import log_sync_point as _log_sync_point


def log_sync_point(page_lsns, durable_end):
    return _log_sync_point(page_lsns, durable_end)
