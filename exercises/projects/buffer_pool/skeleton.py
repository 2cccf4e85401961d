"""Project buffer_pool: the page store's buffer pool, whole (see README.md).

The engine builds its buffer pool through the hot spot ``BUFFER_POOL``; with
``--impl student --project buffer_pool`` it constructs the ``BufferPool`` of
this file instead, everywhere: the volume, the storage manager, restart, the
crash tests. Every method below is one the engine calls; its docstring is the
contract the engine relies on.

Given (``minidb.pagestore.buffer.frame``): ``Frame`` (the control block; the
write-ahead logging code reads ``page.frame.pool`` and ``page.frame.dirty``),
``FrameView`` and ``WriteRun`` (what pictures and tests read). Yours to write: every method
of ``BufferPool``. You may use what lies below the pool in minidb: latches
(``minidb.pagestore.buffer.latch``), the clock (``choose_victim`` of
``minidb.pagestore.buffer.clock``, or your exercise 04a), pages
(``minidb.pagestore.pages``), the store properties
(``minidb.pagestore.pages.storeprop``), ``Stats`` and ``Trace``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from minidb.log.lsn import LSN
from minidb.pagestore.buffer.frame import POOL_STAT_NAMES, Frame, FrameView, WriteRun
from minidb.pagestore.buffer.latch import SH, LatchMode
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE
from minidb.pagestore.pages.slotted import SlottedPage

__all__ = ["BufferPool", "Frame", "FrameView", "WriteRun", "DEFAULT_MAX_MANY_PAGES"]

if TYPE_CHECKING:  # the volume's file is above the pool; the pool only keeps and calls it
    from minidb.pagestore.volume.volfile import VolumeFile

DEFAULT_MAX_MANY_PAGES = 8


class BufferPool:
    """Fixed frames over the volumes registered with :meth:`register`."""

    STAT_NAMES = POOL_STAT_NAMES

    def __init__(self, num_frames: int, page_size: int = DEFAULT_PAGE_SIZE, log=None,
                 max_many_pages: int = DEFAULT_MAX_MANY_PAGES, trace: bool = False):
        """``num_frames`` frames (a ``Frame`` each, holding a ``SlottedPage`` of ``page_size`` bytes, ``pool``
        set to this pool), all free. ``num_frames`` below 1 (or not an int) is a ``BadRequestError``; a bad
        page size is refused as ``check_page_size`` refuses it.

        Attributes the engine and the pictures read: ``page_size``; ``log`` (the ``LogManager``, or None: then
        no write-ahead rule and no recovery LSN from the log); ``frames`` (the list of ``Frame``);
        ``image_logger`` (None, later set by the volume: a function that logs a page's full image and returns
        its LSN); ``hand`` (the clock hand, a frame index); ``last_clock`` (the last ``ClockChoice``, or None);
        ``stats`` (a ``minidb.stats.Stats("bufferpool", STAT_NAMES)``, counted as the names say);
        ``trace`` (a ``minidb.stats.Trace(enabled=trace)``).
        """
        raise NotImplementedError("BufferPool.__init__")

    # -- volumes ------------------------------------------------------------------------
    def register(self, volfile: VolumeFile) -> None:
        """Mount a volume's file: pages of ``volfile.vid`` are read from and written to it. A file whose
        ``page_size`` differs from the frames' is a ``PageStoreError`` naming the file."""
        raise NotImplementedError("BufferPool.register")

    def volume_file(self, vid: int) -> VolumeFile:
        """The mounted file of volume ``vid``; an unmounted one is a ``BadRequestError``."""
        raise NotImplementedError("BufferPool.volume_file")

    # -- fixing --------------------------------------------------------------------------
    def fix(self, pid: PageId, mode: LatchMode = SH, *, virgin: bool = False,
            conditional: bool = False) -> SlottedPage | None:
        """Pin page ``pid`` in a frame and latch it in ``mode`` (SH or EX); return the frame's page.

        A hit pins the frame already holding the page. A miss takes a free frame (lowest index first),
        else a victim that is not pinned (writing it first if dirty, under the write-ahead rule), and reads
        the page, checking it (``page.check``; a page LSN at or past the log's end is a ``LogLostError``):
        on damage the frame stays free and the error propagates. ``virgin`` fills the frame with zeros
        instead of reading (a page about to be formatted). Every frame pinned: ``BufferPoolFullError``.
        ``conditional``: if the latch would wait, undo the pin and return None. An EX fix of a clean
        page sets the frame's recovery LSN to the log's end (``log.end_lsn``). Not a PageId or not a
        LatchMode: ``BadRequestError``. Never blocks on a latch while holding the pool's own mutex.
        """
        raise NotImplementedError("BufferPool.fix")

    def unfix(self, page: SlottedPage, dirty: bool = False) -> None:
        """Release one fix of ``page`` (unpin, unlatch). ``dirty=True``: the page was changed (unless a
        change under this fix failed, see :meth:`change_failed`); a clean page made dirty this way logs its
        image first (:meth:`image_before_change`) and keeps a recovery LSN. An EX fix that changed nothing
        clears the recovery LSN it set. Unfixing a page not fixed is a ``PageStoreError``."""
        raise NotImplementedError("BufferPool.unfix")

    def unfix_dirty(self, page: SlottedPage) -> None:
        """``unfix(page, dirty=True)``."""
        raise NotImplementedError("BufferPool.unfix_dirty")

    def image_before_change(self, page: SlottedPage) -> None:
        """Before the first change of a clean fixed page: log its full image through ``image_logger`` and
        note it (:meth:`note_image`). Nothing for a page already dirty, without an ``image_logger``, whose
        store's logging is off, or whose image is pending (``storeprop.logging_off``, ``image_pending``)."""
        raise NotImplementedError("BufferPool.image_before_change")

    def change_failed(self, page: SlottedPage) -> None:
        """A logged change of the fixed ``page`` failed before it was made: the ``unfix(page, dirty=True)``
        that follows marks nothing dirty and logs no image."""
        raise NotImplementedError("BufferPool.change_failed")

    def note_image(self, page: SlottedPage, lsn: LSN) -> None:
        """A full image of the fixed ``page`` was logged at ``lsn``: if it is clean, it is dirty from now on
        with recovery LSN ``lsn`` (a dirty page's recovery LSN is the LSN of its image)."""
        raise NotImplementedError("BufferPool.note_image")

    def lower_rec_lsn(self, page: SlottedPage, lsn: LSN) -> None:
        """Make the fixed ``page`` dirty with a recovery LSN of at most ``lsn`` (restart's redo)."""
        raise NotImplementedError("BufferPool.lower_rec_lsn")

    def set_dirty(self, page: SlottedPage) -> None:
        """Mark the fixed ``page`` dirty without unfixing it (a recovery LSN if it had none)."""
        raise NotImplementedError("BufferPool.set_dirty")

    # -- writing -----------------------------------------------------------------------------
    def clean(self, select: Callable[[Frame], bool] | None = None, wait: bool = False) -> list[WriteRun]:
        """The page cleaner: write the dirty frames ``select`` accepts (all if None), never TMP pages
        (``storeprop.never_forced``), sorted by (volume, page), contiguous pages coalesced into one
        ``write_run`` of at most ``max_many_pages``; before each write the log is durable up to the largest
        page LSN written (the write-ahead rule); then fsync each volume written, and every volume with
        evicted pages not yet fsynced. A frame latched EX is skipped unless ``wait``. A written frame
        becomes clean (recovery LSN None) only if nobody changed it meanwhile. Returns the writes made."""
        raise NotImplementedError("BufferPool.clean")

    def force_all(self) -> list[WriteRun]:
        """Write every dirty page (waiting for latches) and fsync: afterwards the dirty page table is empty
        of every page not fixed and changed meanwhile."""
        raise NotImplementedError("BufferPool.force_all")

    def force_store(self, stid: StoreId) -> list[WriteRun]:
        """:meth:`clean` of the pages of store ``stid``, waiting for latches."""
        raise NotImplementedError("BufferPool.force_store")

    def force_volume(self, vid: int) -> list[WriteRun]:
        """:meth:`clean` of the pages of volume ``vid``, waiting for latches."""
        raise NotImplementedError("BufferPool.force_volume")

    def force_until(self, lsn: LSN) -> list[WriteRun]:
        """:meth:`clean` of the pages whose recovery LSN is at or before ``lsn``, waiting for latches."""
        raise NotImplementedError("BufferPool.force_until")

    def discard_store(self, stid: StoreId) -> int:
        """Drop, without writing, the frames of the pages whose *header* names store ``stid``; how many.
        A fixed one is a ``BadRequestError`` and nothing is dropped."""
        raise NotImplementedError("BufferPool.discard_store")

    def discard_volume(self, vid: int) -> int:
        """Drop, without writing, the frames of volume ``vid``'s pages; how many (fixed: ``BadRequestError``)."""
        raise NotImplementedError("BufferPool.discard_volume")

    # -- looking ------------------------------------------------------------------------------
    def dirty_page_table(self) -> dict[PageId, LSN]:
        """Page id -> recovery LSN of every page that may differ from its durable image: the frames with a
        recovery LSN, and the pages written (evicted) but whose volume is not fsynced since; never a page
        outside the table (``storeprop.outside_dirty_page_table``). A checkpoint logs it; restart redoes
        from its smallest LSN."""
        raise NotImplementedError("BufferPool.dirty_page_table")

    def dirty_pages(self) -> list[PageId]:
        """The pages dirty in frames that the cleaner would write (every one but TMP pages)."""
        raise NotImplementedError("BufferPool.dirty_pages")

    def min_rec_lsn(self) -> LSN | None:
        """The smallest recovery LSN of the dirty page table, None if it is empty."""
        raise NotImplementedError("BufferPool.min_rec_lsn")

    def is_cached(self, pid: PageId) -> bool:
        """Whether page ``pid`` is in a frame."""
        raise NotImplementedError("BufferPool.is_cached")

    def write_sizes(self) -> dict[int, int]:
        """How many writes of each size (in pages) were made, sorted by size."""
        raise NotImplementedError("BufferPool.write_sizes")

    def frame_views(self) -> list[FrameView]:
        """A ``FrameView`` per frame, in frame order (``latch``: the latch mode's name; ``page_lsn`` None
        for a free frame)."""
        raise NotImplementedError("BufferPool.frame_views")
