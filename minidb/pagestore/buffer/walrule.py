"""The write-ahead rule: how far the log must be durable before pages may be written.

A page on disk must never hold a change whose log entry could still be
lost: after a crash, restart could neither redo the entries after it nor undo
the change if its transaction loses. So before the buffer pool writes a page
(a dirty victim it evicts, or a run of pages the cleaner writes in one go),
the log must be durable up to the entry that changed the page last, its
*page LSN*, the largest LSN any of the pages in the write carries. A page's
*recovery LSN* is its first change since it was clean; the write needs its
last.

``durable_end`` is where the log's durable bytes end: an entry that starts
before it is on disk, an entry that starts at or after it is not. A page no
logged entry has changed has page LSN ``NO_PAGE_LSN`` (0/0) and needs
nothing. If the log must be synced, :func:`log_sync_point` returns the LSN to
sync up to (the log manager's ``sync`` returns once that entry is durable);
None if the log is durable far enough already (the common case: a sync
writes the whole log buffer, so one sync covers many later writes).

Worked example: the log is durable up to 0x1/0x200. A victim whose page LSN
is 0x1/0x1c0 is written at once (None); one whose page LSN is 0x1/0x240
first makes the log durable up to 0x1/0x240. The cleaner's run of pages 5-7
with page LSNs 0x1/0x120, 0x1/0x2a0, 0x1/0x180 syncs up to 0x1/0x2a0.

The buffer pool calls this function in one place, before each write
(``BufferPool._write_copies``), through ``LOG_SYNC_POINT``, an exercise hook
(:mod:`minidb.impl`; exercise 04b): with ``MINIDB_IMPL=student``
the student's version decides, and the page store's crash test shows what a
wrong rule costs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from minidb import impl
from minidb.log.lsn import LSN
from minidb.pagestore.pages.page import NO_PAGE_LSN


def log_sync_point(page_lsns: Sequence[LSN], durable_end: LSN) -> LSN | None:
    """The LSN the log must be durable up to before pages with these page LSNs are written, or None."""
    logged = [lsn for lsn in page_lsns if lsn != NO_PAGE_LSN]
    if not logged:
        return None
    top = max(logged)
    return None if top < durable_end else top


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable[[Sequence[LSN], LSN], LSN | None]:
    """A student's ``log_sync_point`` (exercise 04b has the engine's signature), its answer checked for form."""
    def sync_point(page_lsns: Sequence[LSN], durable_end: LSN) -> LSN | None:
        answer = student(list(page_lsns), durable_end)
        if answer is not None and not isinstance(answer, LSN):
            raise hook.wrong(f"returned {answer!r}, not an LSN or None")
        return answer
    return sync_point


LOG_SYNC_POINT = impl.register("04b_wal_rule", "log_sync_point", log_sync_point, _from_exercise)
