"""Milestone 3: recovery LSNs and the dirty page table, the write-ahead rule, the cleaner."""

import pytest

from minidb.io import CrashMode
from minidb.log import LSN
from minidb.pagestore import EX, TornPageError
from minidb.pagestore.pages.page import NO_PAGE_LSN


def test_an_ex_fix_sets_the_recovery_lsn_and_an_unchanged_unfix_clears_it(kit):
    s = kit.new_volume(frames=4)
    end = s.log.end_lsn
    page = s.bp.fix(kit.pid(8), EX)
    assert page.frame.rec_lsn == end
    s.bp.unfix(page)
    assert page.frame.rec_lsn is None and s.bp.dirty_page_table() == {}


def test_a_clean_page_made_dirty_logs_its_image_which_is_its_recovery_lsn(kit):
    s = kit.new_volume(frames=4)
    lsn = kit.update(s, 8)
    images = [e for e in s.log.scan() if e.type_name == "page_image"]
    assert [e.values["page"] for e in images] == [8] and lsn < images[0].lsn
    assert s.bp.dirty_page_table() == {kit.pid(8): images[0].lsn}
    kit.update(s, 8, "again")  # dirty already: the same recovery LSN, no second image
    assert s.bp.dirty_page_table() == {kit.pid(8): images[0].lsn}
    assert [e.type_name for e in s.log.scan()].count("page_image") == 1


def test_the_log_is_forced_before_a_page_is_written(kit):
    s = kit.new_volume(frames=4)
    kit.update(s, 8)
    lsn = s.log.last_lsn
    assert not s.log.is_durable(lsn)
    runs = s.bp.force_all()
    assert s.log.is_durable(lsn) and runs[0].log_synced_to == lsn
    write = kit.page_writes(s.disk)[-1]
    assert lsn.offset < kit.log_durable_ends(s.disk, write.index)[lsn.file]
    assert s.bp.dirty_page_table() == {}


def test_every_page_write_of_a_workload_is_covered_by_the_durable_log(kit):
    s = kit.new_volume(frames=3)
    for i in range(40):
        kit.update(s, 8 + (i * 7) % 20, f"v{i}")
        if i % 9 == 8:
            s.bp.clean()
    s.bp.force_all()
    writes = kit.page_writes(s.disk)
    assert len(writes) > 20 and s.bp.stats["nDirtyVictims"] > 10
    size = kit.page_size
    for write in writes:
        durable = kit.log_durable_ends(s.disk, write.index)
        for k in range(len(write.data) // size):
            lsn = LSN.unpack(int.from_bytes(write.data[k * size:k * size + 8], "little"))
            if lsn != NO_PAGE_LSN:
                assert lsn.offset < durable.get(lsn.file, 0), f"{write}: page LSN {lsn} is not durable"


def test_an_evicted_page_stays_in_the_dirty_page_table_until_its_volume_is_synced(kit):
    s = kit.new_volume(frames=1)
    kit.update(s, 8, virgin=True)
    rec = s.bp.dirty_page_table()[kit.pid(8)]
    s.bp.unfix(s.bp.fix(kit.pid(9)))  # evicts page 8: written, not fsynced
    assert s.bp.dirty_page_table() == {kit.pid(8): rec} and s.bp.min_rec_lsn() == rec
    s.bp.clean()
    assert s.bp.dirty_page_table() == {} and s.bp.min_rec_lsn() is None


def test_the_cleaner_sorts_and_coalesces_contiguous_pages(kit):
    s = kit.new_volume(frames=16)
    for n in (20, 10, 6, 5, 9, 7):
        kit.update(s, n, virgin=True)
    before = len(kit.page_writes(s.disk))
    runs = s.bp.clean()
    assert [str(r) for r in runs] == ["v(1) pages 5-7 in one write", "v(1) pages 9-10 in one write",
                                      "v(1) page 20 in one write"]
    writes = kit.page_writes(s.disk)[before:]
    assert [(w.offset // kit.page_size, len(w.data) // kit.page_size) for w in writes] == [(5, 3), (9, 2), (20, 1)]
    assert s.bp.write_sizes() == {1: 1, 2: 1, 3: 1}
    assert s.bp.dirty_page_table() == {} and not any(v.dirty for v in s.bp.frame_views())


def test_the_cleaner_skips_a_page_latched_ex(kit):
    s = kit.new_volume(frames=8)
    kit.update(s, 8, virgin=True)
    kit.update(s, 9, virgin=True)
    hot = s.bp.fix(kit.pid(9), EX)
    assert [(r.first_page, r.count) for r in s.bp.clean()] == [(8, 1)]
    assert s.bp.dirty_page_table().keys() == {kit.pid(9)}
    s.bp.unfix(hot)


def test_force_until_writes_only_the_oldest_pages(kit):
    s = kit.new_volume(frames=8)
    kit.update(s, 8, virgin=True)
    kit.update(s, 9, virgin=True)
    table = s.bp.dirty_page_table()
    assert table[kit.pid(8)] < table[kit.pid(9)]
    assert [(r.first_page, r.count) for r in s.bp.force_until(table[kit.pid(8)])] == [(8, 1)]
    assert s.bp.dirty_page_table().keys() == {kit.pid(9)}


def test_a_torn_page_is_detected_when_read_and_changes_nothing(kit):
    s = kit.new_volume(frames=4)
    kit.update(s, 8, "first", virgin=True)
    s.bp.force_all()
    kit.update(s, 8, "second")
    s.log.sync()
    s.bp.clean()
    last = kit.page_writes(s.disk)[-1]
    image = s.disk.crash_image(last.index, CrashMode.prefix(0, torn=100))
    after = kit.mount(image, frames=4)
    views = after.bp.frame_views()
    with pytest.raises(TornPageError, match="torn page"):
        after.bp.fix(kit.pid(8))
    assert after.bp.frame_views() == views
