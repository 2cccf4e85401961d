"""The buffer pool: fixes, latches and pins, clock victims, recovery LSNs, WAL, the cleaner."""

import threading

import pytest

from minidb import impl
from minidb.crashtest.pagestore import crash_sweep as pagestore_crash_sweep
from minidb.io import CrashMode
from minidb.log import LSN, TRACE
from minidb.pagestore import (
    EX,
    SH,
    BadRequestError,
    BufferPool,
    BufferPoolFullError,
    PageId,
    PageTag,
    TornPageError,
    Volume,
)
from minidb.pagestore.buffer import bufferpool
from minidb.pagestore.pages.page import NO_PAGE_LSN
from minidb.pagestore.volume.volfile import volume_file_name

from tests.pagestore.helpers import log_durable_ends, mount, new_volume, page_writes

VOL = volume_file_name(1)


def pid(n: int) -> PageId:
    return PageId(1, 1, n)


def update(setup, n: int, text: str = "x", virgin: bool = False) -> LSN:
    """The protocol by hand: fix EX, apply, log, set the page LSN, unfix dirty."""
    bp = setup.bp
    page = bp.fix(pid(n), EX, virgin=virgin)
    if virgin or page.tag == PageTag.FREE:
        page.format(pid(n), PageTag.FILE)
    page.insert(text.encode())
    lsn = setup.log.append(TRACE, {"message": f"update page {n}: {text}"})
    page.lsn = lsn
    bp.unfix(page, dirty=True)
    return lsn


def test_hits_misses_and_pins():
    s = new_volume(frames=4)
    bp = s.bp
    bp.stats.reset()
    a = bp.fix(pid(8))
    b = bp.fix(pid(8))
    assert a is b
    view = bp.frame_views()[a.frame.index]
    assert (view.pid, view.pin_count, view.latch) == (pid(8), 2, "SH")
    bp.unfix(a)
    bp.unfix(b)
    assert bp.frame_views()[a.frame.index].pin_count == 0
    assert (bp.stats["nFixes"], bp.stats["nHits"], bp.stats["nMisses"], bp.stats["nPageReads"]) == (2, 1, 1, 1)
    with pytest.raises(Exception, match="not fixed"):
        bp.unfix(a)


def test_conditional_fix_fails_instead_of_waiting_and_changes_nothing():
    s = new_volume(frames=4)
    page = s.bp.fix(pid(8), SH)
    assert s.bp.fix(pid(8), EX, conditional=True) is None
    assert s.bp.stats["nConditionalFails"] == 1
    assert s.bp.frame_views()[page.frame.index].pin_count == 1
    other = s.bp.fix(pid(8), SH, conditional=True)
    assert other is page
    s.bp.unfix(other)
    s.bp.unfix(page)


def test_an_ex_fix_waits_for_sh_holders():
    s = new_volume(frames=4)
    page = s.bp.fix(pid(8), SH)
    blocked, got = threading.Event(), threading.Event()
    page.frame.latch.on_block = lambda mode: blocked.set()

    def writer():
        p = s.bp.fix(pid(8), EX)
        got.set()
        s.bp.unfix(p)

    thread = threading.Thread(target=writer)
    thread.start()
    assert blocked.wait(10)  # the writer is waiting for the latch ...
    assert not got.is_set()  # ... and has not got it
    assert page.frame.pin_count == 2  # but it has pinned the frame
    s.bp.unfix(page)
    thread.join(10)
    assert got.is_set() and page.frame.pin_count == 0


def test_clock_victims_on_a_scripted_sequence():
    s = new_volume(frames=4)
    bp = s.bp
    for frame_index in range(4):  # load user pages 8..11 into frames 0..3 (store 0 pages are not cached yet)
        bp.unfix(bp.fix(pid(8 + frame_index)))
    assert [v.pid.page for v in bp.frame_views()] == [8, 9, 10, 11]
    update(s, 9)  # frame 1 dirty
    bp.trace.clear()
    bp.unfix(bp.fix(pid(12)))  # every frame referenced: pass 1 clears all four bits, pass 2 takes frame 0
    assert "clock pass 2: frame 0 victim (p(1.1.8))" in bp.trace.lines
    assert [v.pid.page for v in bp.frame_views()] == [12, 9, 10, 11]
    bp.trace.clear()
    bp.unfix(bp.fix(pid(13)))  # hand at 1: frame 1 dirty, skipped; frame 2 clean, unreferenced
    assert bp.trace.lines[:2] == ["clock pass 1: frame 1 dirty, skipped", "clock pass 1: frame 2 victim (p(1.1.10))"]
    held = bp.fix(pid(11))  # pinned: never a victim
    bp.unfix(bp.fix(pid(14)))  # hand at 3: 3 pinned, 0 referenced (cleared), 1 dirty, 2 referenced (cleared); pass 2: 0
    assert [v.pid.page for v in bp.frame_views()] == [14, 9, 13, 11]
    bp.unfix(held)
    assert bp.stats["nDirtyVictims"] == 0 and bp.stats["nVictims"] == 3


def test_a_full_pool_of_pinned_frames_is_an_error_that_changes_nothing():
    s = new_volume(frames=2)
    held = [s.bp.fix(pid(8)), s.bp.fix(pid(9))]
    before = s.bp.frame_views()
    with pytest.raises(BufferPoolFullError, match="all 2 frames of the buffer pool are pinned"):
        s.bp.fix(pid(10))
    assert s.bp.frame_views() == before
    for page in held:
        s.bp.unfix(page)


def test_recovery_lsn_set_by_ex_fix_cleared_if_not_dirtied():
    s = new_volume(frames=4)
    end = s.log.end_lsn
    page = s.bp.fix(pid(8), EX)
    assert page.frame.rec_lsn == end
    s.bp.unfix(page)
    assert page.frame.rec_lsn is None and s.bp.dirty_page_table() == {}
    lsn = update(s, 8)
    # The change logged nothing the pool knows of: at the unfix, the page's image (pageimage.py) is logged
    # after it, and the page is dirty from the image's LSN on.
    image = [e for e in s.log.scan() if e.type_name == "page_image"]
    assert [e.values["page"] for e in image] == [8] and end <= lsn < image[0].lsn
    assert s.bp.dirty_page_table() == {pid(8): image[0].lsn}
    update(s, 8, "again")  # a dirty page keeps its first recovery LSN, and logs no second image
    assert s.bp.dirty_page_table() == {pid(8): image[0].lsn}
    assert [e.type_name for e in s.log.scan()].count("page_image") == 1


def test_the_write_ahead_rule_forces_the_log_before_a_page_write():
    s = new_volume(frames=4)
    update(s, 8)
    lsn = s.log.last_lsn  # the page's LSN: its image, logged when the unfix made it dirty
    assert not s.log.is_durable(lsn)
    s.bp.trace.clear()
    runs = s.bp.force_all()
    assert s.log.is_durable(lsn)
    assert runs[0].log_synced_to == lsn and s.bp.stats["nLogForces"] == 1
    assert f"WAL: log synced up to {lsn} before writing p(1.1.8)" in s.bp.trace.lines
    write = page_writes(s.disk)[-1]
    durable = log_durable_ends(s.disk, write.index)
    assert lsn.offset < durable[lsn.file]
    assert s.bp.dirty_page_table() == {}


def test_every_page_write_is_covered_by_the_durable_log():
    """The write record of a workload with evictions and cleaning: no page is ever ahead of the log."""
    s = new_volume(frames=3)
    for i in range(40):
        update(s, 8 + (i * 7) % 20, f"v{i}")
        if i % 9 == 8:
            s.bp.clean()
    s.bp.force_all()
    writes = page_writes(s.disk)
    assert len(writes) > 20 and s.bp.stats["nDirtyVictims"] > 10
    for write in writes:
        durable = log_durable_ends(s.disk, write.index)
        for k in range(len(write.data) // 512):
            lsn = LSN.unpack(int.from_bytes(write.data[k * 512:k * 512 + 8], "little"))
            if lsn != NO_PAGE_LSN:
                assert lsn.offset < durable.get(lsn.file, 0), f"{write}: page LSN {lsn} is not durable"


def test_the_cleaner_sorts_and_coalesces_contiguous_pages():
    s = new_volume(frames=16)
    for n in (20, 10, 6, 5, 9, 7):
        update(s, n, virgin=True)
    before = len(page_writes(s.disk))
    runs = s.bp.clean()
    assert [str(r) for r in runs] == ["v(1) pages 5-7 in one write", "v(1) pages 9-10 in one write",
                                      "v(1) page 20 in one write"]
    writes = page_writes(s.disk)[before:]
    assert [(w.offset // 512, len(w.data) // 512) for w in writes] == [(5, 3), (9, 2), (20, 1)]
    assert s.bp.write_sizes() == {1: 1, 2: 1, 3: 1}
    fsyncs = [e for e in s.disk.events if e.kind == "fsync" and e.name == VOL]
    assert fsyncs[-1].index > writes[-1].index  # one fsync after the writes, then the frames are clean
    assert s.bp.dirty_page_table() == {}
    assert all(not v.dirty for v in s.bp.frame_views())


def test_runs_are_cut_at_max_many_pages():
    s = new_volume(frames=16)
    s.bp.max_many_pages = 2
    for n in range(8, 13):
        update(s, n, virgin=True)
    assert [(r.first_page, r.count) for r in s.bp.clean()] == [(8, 2), (10, 2), (12, 1)]


def test_the_cleaner_skips_pages_latched_ex_and_keeps_pages_changed_meanwhile():
    s = new_volume(frames=8)
    update(s, 8, virgin=True)
    update(s, 9, virgin=True)
    hot = s.bp.fix(pid(9), EX)
    runs = s.bp.clean()
    assert [(r.first_page, r.count) for r in runs] == [(8, 1)]
    assert s.bp.dirty_page_table().keys() == {pid(9)}
    s.bp.unfix(hot)


def test_an_evicted_page_stays_in_the_dirty_page_table_until_its_volume_is_synced():
    s = new_volume(frames=1)
    update(s, 8, virgin=True)
    rec = s.bp.dirty_page_table()[pid(8)]
    s.bp.unfix(s.bp.fix(pid(9)))  # evicts page 8: written, not fsynced
    assert s.bp.stats["nDirtyVictims"] == 1 and not s.bp.is_cached(pid(8))
    assert s.bp.dirty_page_table() == {pid(8): rec}
    syncs = s.bp.stats["nVolumeSyncs"]
    s.bp.clean()  # nothing dirty in a frame, but the evicted page's write is fsynced now
    assert s.bp.stats["nVolumeSyncs"] == syncs + 1
    assert s.bp.dirty_page_table() == {}


def test_a_pool_short_of_clean_frames_writes_its_victim_with_the_dirty_frames_ahead_after_the_log():
    """Frames 0..19 hold dirty, unreferenced pages 8..27, the hand at 0. Pass 1 passes over eight dirty
    frames (``dirty_skips``) and takes frame 8 (page 16); the pool makes the log durable up to the largest
    page LSN of pages 16..23, then writes them in one write: frames 9..15 are clean now, the next seven
    misses take them without a write, and the pages stay in the dirty page table until an fsync."""
    s = new_volume(frames=20)
    for n in range(8, 28):
        update(s, n, virgin=True)
    for frame in s.bp.frames:
        frame.referenced = False
    views = s.bp.frame_views()
    assert [v.pid.page for v in views] == list(range(8, 28)) and all(v.dirty for v in views)
    newest = max(v.page_lsn for v in views[8:16])
    assert not s.log.is_durable(newest)
    table = s.bp.dirty_page_table()
    before = len(page_writes(s.disk))
    s.bp.trace.clear()
    s.bp.unfix(s.bp.fix(pid(40)))
    assert s.bp.trace.lines[:9] == [f"clock pass 1: frame {i} dirty, skipped" for i in range(8)] + [
        "clock pass 1: frame 8 victim (p(1.1.16))"]
    writes = page_writes(s.disk)[before:]
    assert [(w.offset // 512, len(w.data) // 512) for w in writes] == [(16, 8)]
    assert newest.offset < log_durable_ends(s.disk, writes[0].index)[newest.file]  # the log first
    views = s.bp.frame_views()
    assert views[8].pid == pid(40) and s.bp.hand == 9
    assert [v.dirty for v in views[:16]] == [True] * 8 + [False] * 8
    assert s.bp.dirty_page_table() == table  # pages 16..23 written, not fsynced
    for n in range(41, 48):
        s.bp.unfix(s.bp.fix(pid(n)))
    assert [v.pid.page for v in s.bp.frame_views()[8:16]] == list(range(40, 48))
    assert len(page_writes(s.disk)) == before + 1 and s.bp.stats["nDirtyVictims"] == 1


def test_misses_in_a_large_dirty_pool_examine_a_few_frames_each():
    """512 frames, every one dirty, and every missed page made dirty too: the frames the hand examines,
    apart from the reference bits it clears (each set by a fix), stay below three per victim."""
    s = new_volume(num_pages=1088, frames=512, trace=False)
    for n in range(8, 520):
        update(s, n, virgin=True)
    stats = s.bp.stats
    examined, cleared, fixes = -stats["nClockSteps"], -stats["nRefBitsCleared"], -stats["nFixes"]
    for n in range(520, 1032):
        update(s, n, virgin=True)
    assert stats["nVictims"] == 512
    examined, cleared, fixes = examined + stats["nClockSteps"], cleared + stats["nRefBitsCleared"], fixes + stats["nFixes"]
    assert cleared <= fixes + 512  # the bits of the filled pool, and one per fix since
    assert examined - cleared <= 3 * 512


def test_force_store_and_discard_store():
    s = new_volume(frames=8)
    update(s, 8, virgin=True)
    other = PageId(1, 2, 12)
    page = s.bp.fix(other, EX, virgin=True)
    page.format(other, PageTag.FILE)
    page.lsn = s.log.append(TRACE, {"message": "store 2"})
    s.bp.unfix(page, dirty=True)
    runs = s.bp.force_store(pid(8).stid)
    assert [(r.first_page, r.count) for r in runs] == [(8, 1)]
    assert s.bp.dirty_page_table().keys() == {other}
    held = s.bp.fix(other)
    with pytest.raises(BadRequestError, match=r"cannot discard store s\(1.2\): pages p\(1.2.12\) are fixed"):
        s.bp.discard_store(other.stid)
    s.bp.unfix(held)
    assert s.bp.discard_store(other.stid) == 1
    assert not s.bp.is_cached(other) and s.bp.dirty_page_table() == {}
    assert len([e for e in page_writes(s.disk) if e.offset == 12 * 512]) == 0  # never written


def test_a_torn_page_is_detected_when_read_and_changes_nothing():
    s = new_volume(frames=4)
    update(s, 8, "first", virgin=True)
    s.bp.force_all()
    update(s, 8, "second")
    s.log.sync()
    s.bp.clean()  # page 8 written again, then fsynced
    last = page_writes(s.disk)[-1]
    # Crash right after that write, before its fsync, keeping only its first 100 bytes.
    image = s.disk.crash_image(last.index, CrashMode.prefix(0, torn=100))
    after = mount(image, frames=4)
    views = after.bp.frame_views()
    with pytest.raises(TornPageError, match=r"v1.vol page 8: torn page"):
        after.bp.fix(pid(8))
    assert after.bp.frame_views() == views


def test_virgin_fix_does_not_read():
    s = new_volume(frames=4)
    reads = s.bp.stats["nPageReads"]
    page = s.bp.fix(pid(30), EX, virgin=True)
    assert page.tag == PageTag.FREE and s.bp.stats["nPageReads"] == reads
    s.bp.unfix(page)


def test_a_page_of_an_unknown_volume_or_outside_the_volume_is_refused():
    s = new_volume(frames=4)
    with pytest.raises(BadRequestError, match=r"volume v\(2\) is not mounted"):
        s.bp.fix(PageId(2, 1, 8))
    with pytest.raises(BadRequestError, match="page 64 is outside the volume"):
        s.bp.fix(pid(64))


def test_frames_must_fit_the_volume_pages():
    s = new_volume(frames=4)
    other = BufferPool(2, page_size=1024)
    with pytest.raises(Exception, match="do not fit frames of 1024"):
        Volume(s.disk, other, s.log)


def test_set_dirty_and_force_until():
    s = new_volume(frames=8)
    first = update(s, 8, virgin=True)
    update(s, 9, virgin=True)
    table = s.bp.dirty_page_table()
    assert table[pid(8)] < table[pid(9)]
    runs = s.bp.force_until(table[pid(8)])  # only pages whose recovery LSN is that old or older
    assert [(r.first_page, r.count) for r in runs] == [(8, 1)]
    assert s.bp.dirty_page_table().keys() == {pid(9)}
    page = s.bp.fix(pid(10), EX, virgin=True)
    page.format(pid(10), PageTag.FILE)  # an unlogged change (a page about to be logged as formatted)
    s.bp.set_dirty(page)
    s.bp.unfix(page)
    assert pid(10) in s.bp.dirty_page_table()
    assert s.log.is_durable(first)  # the write-ahead rule synced the log up to page 8's LSN at least


def test_discard_volume_drops_every_frame():
    s = new_volume(frames=8)
    update(s, 8, virgin=True)
    s.bp.unfix(s.bp.fix(pid(9)))
    assert s.bp.discard_volume(1) == 2
    assert all(v.pid is None for v in s.bp.frame_views()) and s.bp.dirty_page_table() == {}


@pytest.mark.parametrize("mode", [impl.ENGINE, impl.FAST])
def test_the_crash_sweep_holds_when_dirty_victims_are_written_with_the_frames_ahead(monkeypatch, mode):
    """The page store's crash sweep (pools of three to six frames) never reaches the clock's ``dirty_skips``
    of eight; with none, every dirty victim in pass 1 is written with the dirty frames ahead of the hand,
    which stay cached, clean and unsynced. Restart must still find exactly the committed state."""
    monkeypatch.setattr(bufferpool, "DEFAULT_DIRTY_SKIPS", 0)
    cleaned = []
    dirty_ahead = bufferpool.BufferPool._dirty_ahead

    def counted(self, hand):
        cleaned.extend(frames := dirty_ahead(self, hand))
        return frames

    monkeypatch.setattr(bufferpool.BufferPool, "_dirty_ahead", counted)
    with impl.using(mode):
        for seed in range(4) if mode == impl.ENGINE else range(4, 8):
            assert pagestore_crash_sweep(seed, ops=12).violations == [], seed
    assert len(cleaned) >= 5  # the path was taken
