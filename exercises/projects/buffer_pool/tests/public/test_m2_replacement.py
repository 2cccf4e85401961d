"""Milestone 2: clock replacement, pinned frames, dirty victims written, discarding frames."""

import pytest

from minidb.pagestore import EX, BadRequestError, BufferPoolFullError, PageId, PageTag


def test_clock_victims_on_a_scripted_sequence(kit):
    s = kit.new_volume(frames=4)
    bp = s.bp
    for index in range(4):  # user pages 8..11 into frames 0..3
        bp.unfix(bp.fix(kit.pid(8 + index)))
    assert [v.pid.page for v in bp.frame_views()] == [8, 9, 10, 11]
    kit.update(s, 9)  # frame 1 dirty
    bp.unfix(bp.fix(kit.pid(12)))  # every bit set: pass 1 clears them, pass 2 takes frame 0
    assert [v.pid.page for v in bp.frame_views()] == [12, 9, 10, 11]
    bp.unfix(bp.fix(kit.pid(13)))  # hand at 1: frame 1 dirty, skipped; frame 2 clean, unreferenced
    assert [v.pid.page for v in bp.frame_views()] == [12, 9, 13, 11]
    held = bp.fix(kit.pid(11))  # pinned: never a victim
    bp.unfix(bp.fix(kit.pid(14)))
    assert [v.pid.page for v in bp.frame_views()] == [14, 9, 13, 11]
    bp.unfix(held)
    assert bp.stats["nDirtyVictims"] == 0 and bp.stats["nVictims"] == 3


def test_a_full_pool_of_pinned_frames_is_an_error_that_changes_nothing(kit):
    s = kit.new_volume(frames=2)
    held = [s.bp.fix(kit.pid(8)), s.bp.fix(kit.pid(9))]
    before = s.bp.frame_views()
    with pytest.raises(BufferPoolFullError, match="all 2 frames of the buffer pool are pinned"):
        s.bp.fix(kit.pid(10))
    assert s.bp.frame_views() == before
    for page in held:
        s.bp.unfix(page)


def test_a_dirty_victim_is_written_before_its_frame_is_reused(kit):
    s = kit.new_volume(frames=1)
    kit.update(s, 8, "kept", virgin=True)
    before = len(kit.page_writes(s.disk))
    s.bp.unfix(s.bp.fix(kit.pid(9)))  # evicts page 8
    writes = kit.page_writes(s.disk)[before:]
    assert [(w.offset // kit.page_size, len(w.data)) for w in writes] == [(8, kit.page_size)]
    assert s.bp.stats["nDirtyVictims"] == 1 and not s.bp.is_cached(kit.pid(8))
    page = s.bp.fix(kit.pid(8))  # read back: the change is there
    assert b"kept" in bytes(page.buf)
    s.bp.unfix(page)


def test_discard_store_drops_frames_without_writing_them(kit):
    s = kit.new_volume(frames=8)
    kit.update(s, 8, virgin=True)
    other = PageId(1, 2, 12)
    page = s.bp.fix(other, EX, virgin=True)
    page.format(other, PageTag.FILE)
    page.lsn = kit.update(s, 9, virgin=True)
    s.bp.unfix(page, dirty=True)
    held = s.bp.fix(other)
    with pytest.raises(BadRequestError, match=r"p\(1.2.12\)"):
        s.bp.discard_store(other.stid)
    s.bp.unfix(held)
    assert s.bp.discard_store(other.stid) == 1
    assert not s.bp.is_cached(other) and other not in s.bp.dirty_page_table()
    assert [e for e in kit.page_writes(s.disk) if e.offset == 12 * kit.page_size] == []


def test_discard_volume_drops_every_frame(kit):
    s = kit.new_volume(frames=8)
    kit.update(s, 8, virgin=True)
    s.bp.unfix(s.bp.fix(kit.pid(9)))
    assert s.bp.discard_volume(1) == 2
    assert all(v.pid is None for v in s.bp.frame_views()) and s.bp.dirty_page_table() == {}
