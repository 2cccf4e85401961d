"""The twin of :class:`minidb.pagestore.buffer.bufferpool.BufferPool`: a fix counted without the stats' lock,
a clean unfix in a few steps.

Every page access fixes a page, so a fix's few steps are paid millions of
times. The reference counts each fix (``nFixes``) and each hit (``nHits``)
with :meth:`Stats.add <minidb.stats.Stats.add>`, which takes the stats' own
lock, twice per hit. This twin increments both counters in the stats' dict in
place (:func:`minidb.fast.held_counts`), and finds the frame by the page
id's fields (no call of the ``key`` property), the mutex taken by its bound
``acquire`` and ``release``; the rest of the fix is the
reference's, step for step (a miss is the reference's ``_load``, the latch
the reference's ``_latch_pinned``).

An unfix that does not mark the page dirty (every unfix of a read) skips
the reference's dirty branches, which only a dirty unfix enters (the image
before a first change, the recovery LSN of a change made under SH): under
the mutex it checks the pin count, clears the recovery LSN of a page fixed EX
and left clean, and unpins, as the reference; then it releases the latch. A
dirty unfix, or one of a page that is not pinned (the reference's error), is
the reference's code.

Safe because ``nFixes`` and ``nHits`` change only here, under the pool's
mutex, which the fix holds anyway: the mutex orders every change of them, so
no increment is lost, and a reader of the stats sees a count that was true at
some moment, as with the reference. An SH fix that is not conditional latches
the frame itself: the reference's ``_latch_pinned`` would too, and does
nothing else for it (the latch is granted, waiting if need be, and only an EX
fix sets a recovery LSN). The agreement scenarios of the page
store (``scn_forward``, ``scn_restart``) compare the pool's counters.

The SH latch of that fix, and the SH latch a clean unfix lets go, are
granted and released inline, as the latch's own twin
(:mod:`minidb.fast.pagestore.buffer.latch`) does, under the latch's lock:
a latch held EX is asked for by its ``acquire``, which waits; a release
with a request waiting (to be notified), or of a latch not held SH, is its
``release``. Safe for the reason that twin gives: its condition shares the
lock, so a request counted in ``waiting`` is never missed. The latch's
reference and its twin keep the same fields, so the pool is held to both
(``scn_buffer``, ``scn_btree``).
"""

from __future__ import annotations

from typing import Any

from minidb import fast
from minidb.pagestore.buffer import bufferpool as reference
from minidb.pagestore.buffer.latch import SH, LatchMode
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.slotted import SlottedPage


class BufferPool(reference.BufferPool):
    """:class:`minidb.pagestore.buffer.bufferpool.BufferPool` counting its fixes in place."""

    def __init__(self, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self._counts = fast.held_counts(self.stats)  # nFixes, nHits: changed under the pool mutex only

    def fix(self, pid: PageId, mode: LatchMode = SH, *, virgin: bool = False,
            conditional: bool = False) -> SlottedPage | None:
        if type(pid) is not PageId or type(mode) is not LatchMode:
            return super().fix(pid, mode, virgin=virgin, conditional=conditional)  # checks them, says what is wrong
        counts, mutex = self._counts, self._mutex
        mutex.acquire()
        try:
            counts["nFixes"] += 1
            frame = self._table.get((pid[0], pid[2]))  # pid.key, without the property's call
            if frame is not None:
                counts["nHits"] += 1
                if self.trace.enabled:
                    self.trace.emit("fix %s %s: hit in frame %d", pid, mode.name, frame.index)
            else:
                frame = self._load(pid, mode, virgin)
            frame.pin_count += 1
            frame.referenced = True
        finally:
            mutex.release()
        if mode is SH and not conditional:  # granted (waiting if need be), and SH sets no recovery LSN
            latch = frame.latch
            lock = latch._lock
            lock.acquire()
            if latch._exclusive:  # held EX: the latch's own acquire waits
                lock.release()
                latch.acquire(mode)
            else:  # granted under the latch's lock, as the latch's twin grants it
                latch._shared += 1
                lock.release()
            return frame.page
        return self._latch_pinned(frame, mode, conditional)

    def unfix(self, page: SlottedPage, dirty: bool = False) -> None:
        if dirty or type(page) is not SlottedPage:
            return super().unfix(page, dirty)
        frame = page.frame
        latch = frame.latch
        mutex = self._mutex
        mutex.acquire()
        if frame.pin_count < 1:
            mutex.release()
            return super().unfix(page)  # raises the reference's error
        if latch._exclusive and not frame.dirty:  # the latch's field, not its property's call
            frame.rec_lsn = None  # fixed EX, not changed after all
        frame.failed = False
        frame.pin_count -= 1
        mutex.release()
        lock = latch._lock
        lock.acquire()
        if latch.waiting or not latch._shared or latch._exclusive:  # EX, or a waiter to notify: the latch's release
            lock.release()
            latch.release()
        else:  # one SH hold let go under the latch's lock, nobody to notify, as the latch's twin does
            latch._shared -= 1
            lock.release()
        return None
