"""The buffer pool's control blocks and what pictures see of them: given to anyone who builds a pool.

A ``Frame`` is Shore's ``bfcb_t``: the page in the frame, its pin count, its
latch, whether it is dirty, its recovery LSN and its reference bit. The frame
and its page point at each other (``page.frame``), and the frame at its pool
(``frame.pool``): the write-ahead logging code (:mod:`minidb.pagestore.wal.logrec`)
goes from a page it changes to the pool that holds it, to ask for the page's
image before its first change. A ``FrameView`` is a frame frozen for pictures
and tests; a ``WriteRun`` is one disk write of the cleaner. ``POOL_STAT_NAMES``
are the counters every pool keeps (tests and pictures read them). The pool that
keeps them (:mod:`.bufferpool`, or a course project's) decides everything else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minidb.log.lsn import LSN
from minidb.pagestore.buffer.latch import LATCH, Latch
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.slotted import SlottedPage

POOL_STAT_NAMES = ["nFixes", "nHits", "nMisses", "nConditionalFails", "nVirginFixes", "nPageReads",
                   "nPageWrites", "nWriteRequests", "nLogForces", "nVictims", "nDirtyVictims", "nClockSweeps",
                   "nClockSteps", "nRefBitsCleared", "nVolumeSyncs", "nDiscards"]

@dataclass(eq=False)
class Frame:
    """A buffer control block and its frame (Shore's ``bfcb_t``)."""

    index: int
    page: SlottedPage
    pid: PageId | None = None
    old_pid: PageId | None = None  # the page the frame held before
    pin_count: int = 0
    dirty: bool = False
    rec_lsn: LSN | None = None
    referenced: bool = False
    latch: Latch = None  # type: ignore[assignment]
    pool: Any = None  # the pool of this frame (what logging asks to note an image)
    failed: bool = False  # a change under the current fix failed before it was made (see change_failed)

    def __post_init__(self) -> None:
        self.latch = LATCH.call()
        self.page.frame = self

    @property
    def pinned(self) -> bool:  # what the clock reads (a frame is its own ClockFrame)
        return self.pin_count > 0


@dataclass(frozen=True)
class FrameView:
    """A frame as pictures and tests see it."""

    index: int
    pid: PageId | None
    pin_count: int
    latch: str
    dirty: bool
    rec_lsn: LSN | None
    referenced: bool
    page_lsn: LSN | None


@dataclass(frozen=True)
class WriteRun:
    """One disk write of the cleaner: contiguous pages of one volume."""

    vid: int
    first_page: int
    count: int
    log_synced_to: LSN | None  # the LSN the log was synced to first (None: it already covered the pages)

    def __str__(self) -> str:
        pages = f"page {self.first_page}" if self.count == 1 else f"pages {self.first_page}-{self.first_page + self.count - 1}"
        return f"v({self.vid}) {pages} in one write"
