"""Milestone 1: fix and unfix, hits and misses, pins and latches, refusals."""

import threading

import pytest

from minidb.pagestore import EX, SH, BadRequestError, PageId, PageStoreError, PageTag


def test_a_second_fix_is_a_hit_on_the_same_frame(kit):
    s = kit.new_volume(frames=4)
    bp = s.bp
    bp.stats.reset()
    a = bp.fix(kit.pid(8))
    b = bp.fix(kit.pid(8))
    assert a is b and bp.is_cached(kit.pid(8))
    view = bp.frame_views()[a.frame.index]
    assert (view.pid, view.pin_count, view.latch) == (kit.pid(8), 2, "SH")
    bp.unfix(a)
    bp.unfix(b)
    assert bp.frame_views()[a.frame.index].pin_count == 0
    assert (bp.stats["nFixes"], bp.stats["nHits"], bp.stats["nMisses"], bp.stats["nPageReads"]) == (2, 1, 1, 1)


def test_unfixing_a_page_not_fixed_is_refused(kit):
    s = kit.new_volume(frames=4)
    page = s.bp.fix(kit.pid(8))
    s.bp.unfix(page)
    with pytest.raises(PageStoreError, match="not fixed"):
        s.bp.unfix(page)


def test_a_conditional_fix_fails_instead_of_waiting_and_changes_nothing(kit):
    s = kit.new_volume(frames=4)
    page = s.bp.fix(kit.pid(8), SH)
    assert s.bp.fix(kit.pid(8), EX, conditional=True) is None
    assert s.bp.stats["nConditionalFails"] == 1
    assert s.bp.frame_views()[page.frame.index].pin_count == 1
    other = s.bp.fix(kit.pid(8), SH, conditional=True)
    assert other is page
    s.bp.unfix(other)
    s.bp.unfix(page)


def test_an_ex_fix_waits_for_the_sh_holder_with_the_frame_pinned(kit):
    s = kit.new_volume(frames=4)
    page = s.bp.fix(kit.pid(8), SH)
    blocked, got = threading.Event(), threading.Event()
    page.frame.latch.on_block = lambda mode: blocked.set()

    def writer():
        p = s.bp.fix(kit.pid(8), EX)
        got.set()
        s.bp.unfix(p)

    thread = threading.Thread(target=writer)
    thread.start()
    assert blocked.wait(10)  # the writer waits for the latch ...
    assert not got.is_set() and page.frame.pin_count == 2  # ... having pinned the frame
    s.bp.unfix(page)
    thread.join(10)
    assert got.is_set() and page.frame.pin_count == 0


def test_a_virgin_fix_does_not_read(kit):
    s = kit.new_volume(frames=4)
    reads = s.bp.stats["nPageReads"]
    page = s.bp.fix(kit.pid(30), EX, virgin=True)
    assert page.tag == PageTag.FREE and s.bp.stats["nPageReads"] == reads
    s.bp.unfix(page)


def test_a_page_of_an_unknown_volume_or_outside_the_volume_is_refused(kit):
    s = kit.new_volume(frames=4)
    with pytest.raises(BadRequestError, match=r"volume v\(2\) is not mounted"):
        s.bp.fix(PageId(2, 1, 8))
    with pytest.raises(BadRequestError, match="page 64 is outside the volume"):
        s.bp.fix(kit.pid(64))
    with pytest.raises(BadRequestError):
        s.bp.fix("p(1.1.8)")


def test_a_pool_needs_a_frame(kit):
    from minidb.pagestore import BUFFER_POOL

    with pytest.raises(BadRequestError):
        BUFFER_POOL.call(0, page_size=kit.page_size)
