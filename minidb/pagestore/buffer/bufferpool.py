"""The buffer pool: fixing pages in frames, clock replacement, the write-ahead rule.

The buffer manager is the means by which every other module reads and
writes pages. It has a fixed number of *frames*, each the size of a page,
and a hash table from page id to the frame's *control block* (Shore's
``bfcb_t``; a dict here, where Shore uses cuckoo hashing). A control block
records the page in the frame, its *pin count* (how many fixes are held),
its latch, whether it is *dirty*, its *recovery LSN* and its *reference
bit*. The hash key is ``(volume, page number)``: store membership is
immaterial to finding a page.

**Fixing.** ``fix(pid, mode)`` finds the page (a *hit*) or reads it into a
free frame or a victim's frame (a *miss*), pins it and latches it SH or EX;
``unfix(page)`` (or ``unfix(page, dirty=True)``, Shore's ``unfix_dirty``)
releases both. A ``virgin`` fix gives an EX-latched frame without reading
the page, for a page about to be formatted. A pinned frame is never chosen
as a victim. Victims are chosen by clock (:mod:`minidb.pagestore.buffer.clock`),
whose sweep examines a few frames per miss, amortised, whatever the pool's
size: the pool passes it ``dirty_skips``, the most dirty frames it may pass
over looking for a clean one.

**Dirty victims.** A dirty victim is written before its frame is reused,
under the write-ahead rule (below), and not fsynced. When the clock takes a
dirty frame in pass 1, it has passed ``dirty_skips`` dirty frames in this
sweep and no clean unreferenced one: clean frames are scarce here, and the frames just ahead of the hand are
likely dirty too. So the victim is written together with them, like a real
pool's cleaner that works ahead of the hand: the dirty, unpinned, unreferenced
frames among the next ``max_many_pages - 1`` (TMP pages excepted), sorted and
coalesced into runs, one log sync first. They stay cached, clean (written,
not fsynced: in the dirty page table until the next fsync of their volume,
like an evicted page), and the next misses take them without a write. In a
pool that is all dirty (a bulk load larger than the pool), a miss then costs
about two frames examined and one page written, in writes of up to
``max_many_pages`` pages, instead of a sweep of the whole pool per miss.
Worked example, 20 frames holding dirty, unreferenced pages 8..27, the hand
at 0: pass 1 passes frames 0-7, takes frame 8 (page 16), the log is synced
up to the largest page LSN of pages 16-23, pages 16-23 go in one write; the
next seven misses take frames 9-15 without writing. A pool of at most
``dirty_skips`` frames never takes a dirty victim in pass 1: it evicts one
page at a time, by Shore's rule.

**Recovery LSNs and the dirty page table.** Fixing a clean page EX signals
intent to change it: its control block gets a *recovery LSN*, the log's end
at that moment, which is at most the LSN of any entry that will change the
page (ARIES' choice; Shore takes the page LSN, which is older still). If the
page is unfixed without being dirtied, the recovery LSN is cleared again.
Before the first change of a clean page, the pool logs a full image of it
through its ``image_logger`` (set by the volume;
:mod:`minidb.pagestore.wal.pageimage`), and the recovery LSN becomes the
image's LSN: a dirty page's recovery LSN is always the LSN of its image, so
restart can repair the page if its write is torn, from the log kept since
the smallest recovery LSN. A change that logs nothing (an unfix dirty of a
clean page) logs the image at the unfix.
Writing the page (durably) clears it. :meth:`BufferPool.dirty_page_table`
maps each page that may differ from its durable image to its recovery LSN:
the frames with a recovery LSN, and pages written but not yet fsynced. A
checkpoint logs this table; restart redoes from its smallest LSN.

**The write-ahead rule.** A page is never written before the log is
durable up to the page's LSN: before each write, the pool asks the log to
sync up to the largest page LSN in it (:meth:`LogManager.sync`), unless
that entry is durable already
(:func:`~minidb.pagestore.buffer.walrule.log_sync_point`). Each write is
one disk write; the simulated disk's write record lets tests check the rule
write by write.

**Checking what is read.** Each write carries the page's checksum, computed
into the image written (:func:`~minidb.pagestore.pages.page.stamp_checksum`).
Each page read is checked (:meth:`~minidb.pagestore.pages.page.Page.check`): a
torn or damaged page raises a
:class:`~minidb.pagestore.errors.BadPageError` naming it, and, by the
write-ahead rule, a page whose LSN lies at or past the end of the log means
the log lost durable entries (:class:`~minidb.pagestore.errors.LogLostError`).
The frame is left free: nothing bad is cached.

**The page cleaner.** :meth:`clean` writes dirty pages sorted by (volume,
page number), coalescing runs of contiguous pages (at most
``max_many_pages``) into one write, then fsyncs each volume file once and
marks the written frames clean if no one changed them meanwhile. It skips
frames latched EX (hot pages) rather than wait. It pins the frames it
writes, so none is evicted (and written anew) between its copy and its
write; a miss that finds every frame pinned while a cleaner that waits for no
latch (the background thread's: :mod:`minidb.pagestore.restart.background`)
holds some of the pins waits for it to let go, rather than call the pool
full (one that waits for latches could wait for the missing thread's), and
so does a discard that finds pages of its store pinned. A frame is marked
clean under its latch tried SH, so no EX fix looks at ``dirty``
in the middle of that step. ``force_all``,
``force_store`` wait for latches instead; ``discard_store`` drops a
destroyed store's frames without writing them. A victim is written without
an fsync (eviction must be quick), alone or with the dirty frames ahead of
the hand (above); each page written stays in the dirty page table until the
next fsync of its volume.

**Unlogged pages** (Shore's temporary pages; :mod:`minidb.pagestore.pages.storeprop`).
A page of a TMP store changes without log entries and is destroyed by the
next restart: nothing will ever be redone on it. So it is never in the
dirty page table (its recovery LSN holds back neither a checkpoint's redo
LSN nor the log's scavenging), the cleaner and the forcing calls pass it
over, and it reaches the disk only when it is evicted (the write-ahead
rule still syncs the log up to its page LSN, its ``page_format``'s). Pages
of LOAD and INSERT stores are unlogged too: they are not in the dirty page
table either (the log has no image to repair them from, and nothing to redo
on them: a loser's undo drops them), but the cleaner and the forcing calls
write them like any page, and their loading transaction's commit marks
every one of them regular, evicted ones included, and forces them all
(:mod:`minidb.pagestore.transactions.loadstores`). Worked example: a LOAD
page written by the cleaner, changed again (no image is logged: nothing of
it is) and listed by a checkpoint would be a page restart must read and
cannot repair if that write is torn; outside the table, restart never reads
it, and the undo of its loser frees it.

Worked example: with dirty pages 20, 10, 6, 5, 9 and 7 in the frames, the
cleaner writes pages 5-7 in one write of 3 pages, 9-10 in one of 2 and 20
in one of 1 (``write_sizes()`` = {1: 1, 2: 1, 3: 1}), then fsyncs once.

The control blocks and what pictures see of them (``Frame``, ``FrameView``,
``WriteRun``) live in :mod:`.frame`, apart from the pool: a course project
(``exercises/projects/buffer_pool/``) asks a student to write this class
whole against them. Every part of the engine builds its pool through the
hot spot ``BUFFER_POOL`` (:mod:`minidb.impl`), so the student's class runs
wherever this one would.

Locking order: the pool mutex, then (never the reverse) a frame latch may
be *tried*; blocking latch waits happen without the pool mutex. A miss does
its I/O (victim write, page read) under the pool mutex: simpler than Shore's
in-transit frames, at the price of serialising misses.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from minidb import impl
from minidb.log.lsn import LSN
from minidb.pagestore.buffer.clock import VICTIM, ClockChoice
from minidb.pagestore.buffer.frame import POOL_STAT_NAMES, Frame, FrameView, WriteRun
from minidb.pagestore.buffer.latch import EX, SH, LatchMode
from minidb.pagestore.buffer.walrule import LOG_SYNC_POINT
from minidb.pagestore.errors import (
    BadRequestError,
    BufferPoolFullError,
    LogLostError,
    PageStoreCorruptionError,
    PageStoreError,
)
from minidb.pagestore.ids import PageId, StoreId
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE, NO_PAGE_LSN, check_page_size, stamp_checksum
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.pages.storeprop import image_pending, logging_off, never_forced, outside_dirty_page_table
from minidb.stats import Stats, Trace

if TYPE_CHECKING:  # the volume's file is above the pool; the pool only keeps and calls it
    from minidb.pagestore.volume.volfile import VolumeFile

DEFAULT_MAX_MANY_PAGES = 8
DEFAULT_DIRTY_SKIPS = 8


class BufferPool:
    """Fixed frames over the volumes registered with :meth:`register` (see the module documentation)."""

    STAT_NAMES = POOL_STAT_NAMES

    def __init__(self, num_frames: int, page_size: int = DEFAULT_PAGE_SIZE, log=None,
                 max_many_pages: int = DEFAULT_MAX_MANY_PAGES, trace: bool = False):
        if not isinstance(num_frames, int) or num_frames < 1:
            raise BadRequestError(f"a buffer pool needs at least one frame, not {num_frames!r}")
        self.page_size = check_page_size(page_size)
        self.log = log
        self.max_many_pages = max_many_pages
        self.dirty_skips = DEFAULT_DIRTY_SKIPS  # dirty frames the clock's pass 1 passes over at most
        self.frames = [Frame(i, SlottedPage(bytearray(page_size)), pool=self) for i in range(num_frames)]
        # Logs a full image of a page and returns its LSN; set by the volume (the pool is below the
        # log's entry types). None: no images (a pool used without a volume).
        self.image_logger: Callable[[SlottedPage], LSN] | None = None
        self.hand = 0
        self.last_clock: ClockChoice | None = None  # the last victim choice, for pictures and tests
        self.stats = Stats("bufferpool", self.STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self._table: dict[tuple[int, int], Frame] = {}
        # frames holding no page, the lowest taken first: a heap (a sorted list is one), so taking one while
        # the pool first fills up costs log n, not a shift of the whole list
        self._free = list(range(num_frames))
        self._volumes: dict[int, VolumeFile] = {}
        self._unsynced: dict[tuple[int, int], tuple[PageId, LSN]] = {}  # written, not yet fsynced
        self._write_sizes: dict[int, int] = {}
        self._mutex = threading.Lock()
        self._cleaner_pins = 0  # pins the cleaner holds now (they go when it is done)
        self._unpinned = threading.Condition(self._mutex)  # a miss that found only them pinned waits here

    # -- volumes ------------------------------------------------------------------------
    def register(self, volfile: VolumeFile) -> None:
        if volfile.page_size != self.page_size:
            raise PageStoreError(f"{volfile.where()}: pages of {volfile.page_size} bytes do not fit "
                                 f"frames of {self.page_size}")
        self._volumes[volfile.vid] = volfile

    def volume_file(self, vid: int) -> VolumeFile:
        try:
            return self._volumes[vid]
        except KeyError:
            raise BadRequestError(f"volume v({vid}) is not mounted in this buffer pool") from None

    # -- fixing --------------------------------------------------------------------------
    def fix(self, pid: PageId, mode: LatchMode = SH, *, virgin: bool = False,
            conditional: bool = False) -> SlottedPage | None:
        """Pin and latch page ``pid``; None only when a ``conditional`` latch would wait."""
        if not isinstance(pid, PageId) or not isinstance(mode, LatchMode):
            raise BadRequestError(f"fix needs a PageId and a LatchMode (SH or EX), not {pid!r}, {mode!r}"
                                  + (" (parse_id turns 'p(1.3.48)' into a PageId)" if isinstance(pid, str) else ""))
        with self._mutex:
            self.stats.add("nFixes")
            frame = self._table.get(pid.key)
            if frame is not None:
                self.stats.add("nHits")
                if self.trace.enabled:
                    self.trace.emit("fix %s %s: hit in frame %d", pid, mode.name, frame.index)
            else:
                frame = self._load(pid, mode, virgin)
            frame.pin_count += 1
            frame.referenced = True
        return self._latch_pinned(frame, mode, conditional)

    def _latch_pinned(self, frame: Frame, mode: LatchMode, conditional: bool) -> SlottedPage | None:
        """The second half of a fix: latch the pinned ``frame`` (None, unpinned again, if ``conditional``
        and the latch would wait); an EX fix of a clean page sets its recovery LSN."""
        if not frame.latch.acquire(mode, conditional):
            with self._mutex:
                frame.pin_count -= 1
                self.stats.add("nConditionalFails")
            return None
        if mode == EX and not frame.dirty and frame.rec_lsn is None:
            frame.rec_lsn = self.log.end_lsn if self.log is not None else frame.page.lsn
        return frame.page

    def _load(self, pid: PageId, mode: LatchMode, virgin: bool) -> Frame:
        """A miss: put page ``pid`` in a free or victim frame (caller holds the mutex)."""
        volfile = self.volume_file(pid.vol)
        volfile.check_page(pid.page)
        self.stats.add("nMisses")
        frame = self._free_frame()
        if virgin:
            frame.page.buf[:] = bytes(self.page_size)
            self.stats.add("nVirginFixes")
        else:
            data = volfile.read_page(pid.page)
            self.stats.add("nPageReads")
            frame.page.buf[:] = data
            try:
                self._check_read(frame.page, volfile.where(pid.page))
            except PageStoreCorruptionError:
                heapq.heappush(self._free, frame.index)
                raise
        frame.pid = pid
        frame.dirty = False
        frame.rec_lsn = None
        self._table[pid.key] = frame
        self.trace.emit("fix %s %s: miss, %s frame %d", pid, mode.name, "virgin" if virgin else "read into",
                        frame.index)
        return frame

    def _check_read(self, page: SlottedPage, where: str) -> None:
        """A page just read: its checksum and LSN pair, and its LSN against the log (the write-ahead rule)."""
        page.check(where)
        if self.log is not None and page.lsn != NO_PAGE_LSN and page.lsn >= self.log.end_lsn:
            raise LogLostError(f"{where}: page LSN {page.lsn} lies past the end of the log ({self.log.end_lsn}): "
                               f"the log lost entries that were durable before the page was written")

    def _free_frame(self) -> Frame:
        if self._free:
            return self.frames[heapq.heappop(self._free)]
        choice = self._choose_victim()
        while choice.victim is None and self._cleaner_pins:  # the cleaner (another thread) lets go soon
            self._unpinned.wait()
            choice = self._choose_victim()
        self.last_clock = choice
        self.stats.add("nClockSweeps")
        self.stats.add("nClockSteps", choice.examined)
        self.stats.add("nRefBitsCleared", len(choice.cleared))
        if choice.victim is None:
            raise BufferPoolFullError(f"all {len(self.frames)} frames of the buffer pool are pinned")
        victim = self.frames[choice.victim]
        if self.trace.enabled:
            for step in choice.steps:
                self.trace.emit("clock %s%s", step, f" ({victim.pid})" if step.action == "victim" else "")
        if victim.dirty:
            # A dirty victim in pass 1: the hand passed its dirty_skips, so clean frames are scarce here.
            ahead = self._dirty_ahead(choice.hand) if choice.passes == 1 else []
            self._write_frames([victim, *ahead], sync=False)  # may raise: all still dirty, nothing lost
            self.stats.add("nDirtyVictims")
            for frame in ahead:  # written, not fsynced: in the dirty page table until the next fsync
                frame.dirty, frame.rec_lsn = False, None
        for index in choice.cleared:
            self.frames[index].referenced = False
        self.hand = choice.hand
        self.stats.add("nVictims")
        del self._table[victim.pid.key]  # type: ignore[union-attr]
        victim.old_pid, victim.pid = victim.pid, None
        victim.dirty, victim.rec_lsn, victim.referenced = False, None, False
        return victim

    def _choose_victim(self) -> ClockChoice:
        """The clock's sweep from the hand (choose_victim, or exercise 04a's: :mod:`minidb.impl`); the steps
        are recorded only for the trace."""
        return VICTIM.call(self.frames, self.hand, self.dirty_skips, self.trace.enabled)

    def _dirty_ahead(self, hand: int) -> list[Frame]:
        """The frames among the ``max_many_pages - 1`` just ahead of the hand that the clock would pass over
        next time (dirty, unpinned, unreferenced), to be written with a dirty victim. TMP pages are left:
        they reach the disk only when evicted."""
        n = len(self.frames)
        ahead = [self.frames[(hand + k) % n] for k in range(min(self.max_many_pages - 1, n - 1))]
        return [f for f in ahead if f.dirty and not f.pin_count and not f.referenced and f.pid is not None
                and not never_forced(f.page.store_flags)]

    def unfix(self, page: SlottedPage, dirty: bool = False) -> None:
        """Release a fix; ``dirty=True`` marks the page changed (Shore's ``unfix_dirty``)."""
        if not isinstance(page, SlottedPage):
            raise BadRequestError(f"unfix needs the page that fix returned, not {page!r}")
        frame: Frame = page.frame  # type: ignore[assignment]
        dirty = dirty and not frame.failed
        if dirty and not frame.dirty and frame.pin_count > 0:
            try:  # a change that logged nothing: its page's image (the change included) is logged now
                self.image_before_change(page)
            except BaseException:
                with self._mutex:
                    frame.pin_count -= 1
                frame.latch.release()
                raise
        with self._mutex:
            if frame.pin_count < 1:
                raise PageStoreError(f"unfix of {frame.pid}, which is not fixed")
            if dirty:
                if frame.rec_lsn is None:  # dirtied under an SH fix: an unlogged change
                    frame.rec_lsn = self.log.end_lsn if self.log is not None else frame.page.lsn
                frame.dirty = True
            elif frame.latch.exclusive and not frame.dirty:
                frame.rec_lsn = None  # fixed EX, not changed after all
            frame.failed = False
            frame.pin_count -= 1
        frame.latch.release()

    def unfix_dirty(self, page: SlottedPage) -> None:
        self.unfix(page, dirty=True)

    def image_before_change(self, page: SlottedPage) -> None:
        """Before the first change of a clean fixed page: log its full image; it is dirty from there.

        Keeps the invariant of :mod:`minidb.pagestore.wal.pageimage`: a dirty
        page's recovery LSN is the LSN of its full image. Does nothing for a
        page already dirty, or without an ``image_logger``, or whose store's
        logging is off (a TMP, LOAD or INSERT page is outside the dirty page
        table: it is forced, never redone), or whose image is pending (a page
        just made regular, forced at once; its first logged change logs its
        ``unlogged_page_image``).
        """
        frame: Frame = page.frame  # type: ignore[assignment]
        flags = page.store_flags
        if not frame.dirty and self.image_logger is not None and not logging_off(flags) and not image_pending(flags):
            self.note_image(page, self.image_logger(page))

    def change_failed(self, page: SlottedPage) -> None:
        """A logged change of the fixed ``page`` failed before it was made (its image, or its entry, could
        not be logged): the page is as it was, so the ``unfix(page, dirty=True)`` that follows (a caller's
        ``finally``) marks nothing dirty and logs no image. Logging again would retry on a log that just
        failed: after a crash, "handle was lost" would hide the crash itself."""
        page.frame.failed = True  # type: ignore[attr-defined]

    def note_image(self, page: SlottedPage, lsn: LSN) -> None:
        """A full image of the fixed ``page`` was logged at ``lsn``: if it is clean, it is dirty since then."""
        frame: Frame = page.frame  # type: ignore[assignment]
        with self._mutex:
            if not frame.dirty:
                frame.rec_lsn = lsn
                frame.dirty = True

    def lower_rec_lsn(self, page: SlottedPage, lsn: LSN) -> None:
        """Make a fixed page's recovery LSN at most ``lsn``.

        Restart's redo applies old entries to pages: such a page is dirty
        since the first entry redone on it, not since the (much later) end
        of the log when it was fixed, and a checkpoint must say so.
        """
        frame: Frame = page.frame  # type: ignore[assignment]
        with self._mutex:
            if frame.rec_lsn is None or lsn < frame.rec_lsn:
                frame.rec_lsn = lsn
            frame.dirty = True

    def set_dirty(self, page: SlottedPage) -> None:
        """Mark a fixed page dirty without unfixing it."""
        frame: Frame = page.frame  # type: ignore[assignment]
        with self._mutex:
            if frame.rec_lsn is None:
                frame.rec_lsn = self.log.end_lsn if self.log is not None else frame.page.lsn
            frame.dirty = True

    # -- writing -----------------------------------------------------------------------------
    def _runs(self, frames: list[Frame]) -> list[list[Frame]]:
        """Frames sorted by (volume, page), cut into runs of contiguous pages."""
        runs: list[list[Frame]] = []
        for frame in sorted(frames, key=lambda f: f.pid.key):  # type: ignore[union-attr]
            last = runs[-1][-1] if runs else None
            if (last is not None and last.pid.vol == frame.pid.vol  # type: ignore[union-attr]
                    and last.pid.page + 1 == frame.pid.page and len(runs[-1]) < self.max_many_pages):  # type: ignore[union-attr]
                runs[-1].append(frame)
            else:
                runs.append([frame])
        return runs

    def _write_copies(self, run: list[tuple[Frame, bytes]]) -> WriteRun:
        """One disk write of a run of page images, after the log covers their LSNs."""
        first = run[0][0].pid
        assert first is not None
        volfile = self.volume_file(first.vol)
        synced_to = None
        if self.log is not None:
            synced_to = LOG_SYNC_POINT.call([LSN.unpack(int.from_bytes(data[:8], "little")) for _, data in run],
                                            self.log.durable_end)  # log_sync_point, or exercise 04b's
            if synced_to is not None:
                self.log.sync(synced_to)  # the write-ahead rule
                self.stats.add("nLogForces")
                self.trace.emit("WAL: log synced up to %s before writing %s", synced_to, first)
        volfile.write_run(first.page, b"".join(stamp_checksum(data) for _, data in run))
        written = WriteRun(first.vol, first.page, len(run), synced_to)
        self.stats.add("nWriteRequests")
        self.stats.add("nPageWrites", len(run))
        self._write_sizes[len(run)] = self._write_sizes.get(len(run), 0) + 1
        self.trace.emit("write %s", written)
        return written

    def _write_frames(self, frames: list[Frame], sync: bool) -> list[WriteRun]:
        """Write unpinned dirty frames under the mutex (eviction); they stay in the table."""
        done = []
        for run in self._runs(frames):
            done.append(self._write_copies([(f, bytes(f.page.buf)) for f in run]))
            for frame in run:
                assert frame.pid is not None and frame.rec_lsn is not None
                if not outside_dirty_page_table(frame.page.store_flags):
                    self._note_unsynced(frame.pid, frame.rec_lsn)
        if sync:
            self._sync_volumes({f.pid.vol for f in frames})  # type: ignore[union-attr]
        return done

    def _note_unsynced(self, pid: PageId, rec_lsn: LSN) -> None:
        known = self._unsynced.get(pid.key)
        if known is None or rec_lsn < known[1]:
            self._unsynced[pid.key] = (pid, rec_lsn)

    def _sync_volumes(self, vids: Iterable[int]) -> None:
        for vid in sorted(set(vids)):
            self.volume_file(vid).sync()
            self.stats.add("nVolumeSyncs")
            for key in [k for k in self._unsynced if k[0] == vid]:
                del self._unsynced[key]

    def clean(self, select: Callable[[Frame], bool] | None = None, wait: bool = False) -> list[WriteRun]:
        """The page cleaner: write dirty pages (sorted, coalesced), fsync, mark them clean.

        Every page written before (evicted victims) is made durable by the
        same fsyncs, so afterwards only pages dirty in frames remain in the
        dirty page table.

        Frames latched EX are skipped unless ``wait`` (then the cleaner waits
        for their latches); frames changed while being written stay dirty.
        TMP pages are never chosen (see the module documentation).
        """
        with self._mutex:
            chosen = [f for f in self.frames if f.dirty and f.pid is not None and (select is None or select(f))
                      and not never_forced(f.page.store_flags)]
            for frame in chosen:
                frame.pin_count += 1  # keeps the frame from being evicted while we work
            waited_for = 0 if wait else len(chosen)  # a cleaner that never waits for a latch is waited for
            self._cleaner_pins += waited_for
        copies: list[tuple[Frame, bytes]] = []
        try:
            for frame in sorted(chosen, key=lambda f: f.pid.key):  # type: ignore[union-attr]
                if frame.latch.acquire(SH, conditional=not wait):
                    try:
                        copies.append((frame, bytes(frame.page.buf)))
                    finally:
                        frame.latch.release()
            written: list[WriteRun] = []
            with self._mutex:
                by_frame = dict(copies)
                for run in self._runs([f for f, _ in copies]):
                    written.append(self._write_copies([(f, by_frame[f]) for f in run]))
                # Also the volumes of evicted pages not yet fsynced: after clean(), every page
                # written so far is durable.
                self._sync_volumes({f.pid.vol for f, _ in copies} | {key[0] for key in self._unsynced})  # type: ignore[union-attr]
                for frame, data in copies:
                    # Clean only if nobody changed the page since we copied it, nor holds it EX: the
                    # latch tried SH keeps an EX fix (and its look at ``dirty``) out while we decide.
                    if frame.latch.acquire(SH, conditional=True):
                        try:
                            if frame.page.buf == data:
                                frame.dirty = False
                                frame.rec_lsn = None
                        finally:
                            frame.latch.release()
        finally:
            with self._mutex:
                for frame in chosen:
                    frame.pin_count -= 1
                self._cleaner_pins -= waited_for
                self._unpinned.notify_all()
        return written

    def force_all(self) -> list[WriteRun]:
        """Write every dirty page and fsync (e.g. at a clean shutdown)."""
        return self.clean(wait=True)

    def force_store(self, stid: StoreId) -> list[WriteRun]:
        return self.clean(lambda f: f.pid is not None and f.pid.stid == stid, wait=True)

    def force_volume(self, vid: int) -> list[WriteRun]:
        return self.clean(lambda f: f.pid is not None and f.pid.vol == vid, wait=True)

    def force_until(self, lsn: LSN) -> list[WriteRun]:
        """Write the pages whose recovery LSN is at or before ``lsn``."""
        return self.clean(lambda f: f.rec_lsn is not None and f.rec_lsn <= lsn, wait=True)

    def discard_store(self, stid: StoreId) -> int:
        """Drop the frames of a (destroyed) store's pages without writing them.

        A page belongs to the store its *header* names: a page freed by one
        store and formatted for another may still sit in the frame it was
        fixed into under its old store's id.
        """
        return self._discard(lambda f: f.pid is not None and f.page.pid.stid == stid, f"store {stid}")

    def discard_volume(self, vid: int) -> int:
        return self._discard(lambda f: f.pid is not None and f.pid.vol == vid, f"volume v({vid})")

    def _discard(self, select: Callable[[Frame], bool], what: str) -> int:
        with self._mutex:
            chosen = [f for f in self.frames if select(f)]
            while self._cleaner_pins and any(f.pin_count for f in chosen):  # the cleaner's pins go soon
                self._unpinned.wait()
                chosen = [f for f in self.frames if select(f)]
            pinned = [str(f.pid) for f in chosen if f.pin_count]
            if pinned:
                raise BadRequestError(f"cannot discard {what}: pages {', '.join(pinned)} are fixed")
            for frame in chosen:
                del self._table[frame.pid.key]  # type: ignore[union-attr]
                frame.old_pid, frame.pid = frame.pid, None
                frame.dirty, frame.rec_lsn, frame.referenced = False, None, False
                heapq.heappush(self._free, frame.index)
            self.stats.add("nDiscards", len(chosen))
            return len(chosen)

    # -- looking ------------------------------------------------------------------------------
    def dirty_page_table(self) -> dict[PageId, LSN]:
        """Page id -> recovery LSN of every page that may differ from its durable image."""
        with self._mutex:
            table = {pid: lsn for pid, lsn in self._unsynced.values()}
            for frame in self.frames:
                if (frame.pid is not None and frame.rec_lsn is not None
                        and not outside_dirty_page_table(frame.page.store_flags)):
                    known = table.get(frame.pid)
                    table[frame.pid] = frame.rec_lsn if known is None else min(known, frame.rec_lsn)
            return table

    def dirty_pages(self) -> list[PageId]:
        """The pages dirty in frames that the cleaner writes (every one but TMP pages), loading pages included."""
        with self._mutex:
            return [f.pid for f in self.frames
                    if f.dirty and f.pid is not None and not never_forced(f.page.store_flags)]

    def min_rec_lsn(self) -> LSN | None:
        table = self.dirty_page_table()
        return min(table.values()) if table else None

    def is_cached(self, pid: PageId) -> bool:
        return pid.key in self._table

    def write_sizes(self) -> dict[int, int]:
        """How many writes of each size (in pages) were made."""
        return dict(sorted(self._write_sizes.items()))

    def frame_views(self) -> list[FrameView]:
        with self._mutex:
            return [FrameView(f.index, f.pid, f.pin_count, f.latch.mode.name, f.dirty, f.rec_lsn, f.referenced,
                              f.page.lsn if f.pid is not None else None) for f in self.frames]

    def __repr__(self) -> str:
        return f"BufferPool({len(self.frames)} frames of {self.page_size} bytes, {len(self._table)} pages cached)"


BUFFER_POOL = impl.hot_spot(BufferPool, project="buffer_pool")
