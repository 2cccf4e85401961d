"""Files of records: record tags, small and large records, rid verification, placement, space."""


import pytest

from minidb import impl
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.errors import BadRequestError, RecordWontFitError, StaleRecordIdError
from minidb.pagestore.files.file import FILE_MANAGER, FileManager, Policy
from minidb.pagestore.files.histogram import Histoid, bucket_needed, bucket_of
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.pages.page import PageTag
from minidb.pagestore.pages.rectag import RecFlags, RecTag, chunk_size, small_slot, split_slot
from minidb.pagestore.pages.slotted import SLOT_RESERVED

from tests.pagestore.sm_helpers import new_sm

FAST_FILES = FILE_MANAGER.name


def make_file(sm):
    with sm.transaction() as t:
        return sm.create_file(t)


def test_record_tag_worked_example():
    slot = small_slot(b"h1", b"hello")
    assert slot.hex(" ") == "02 00 01 00 05 00 00 00 68 31 68 65 6c 6c 6f"
    tag, hdr, body = split_slot(slot)
    assert (tag, hdr, body) == (RecTag(2, RecFlags.SMALL, 5), b"h1", b"hello")
    assert chunk_size(512) == 448 and chunk_size(8192) == 8128


def test_create_file_makes_two_stores_a_first_page_and_a_directory_entry():
    sm = new_sm()
    fid = make_file(sm)
    info = sm.files.file_info(fid)
    assert (fid, info.large) == (StoreId(1, 3), 4)
    assert [p.page for p in sm.volume.store_pages(fid)] == [sm.files.first_page(fid)]
    page = sm.bp.fix(sm.volume.store_pages(fid)[0], SH)
    assert page.tag == PageTag.FILE and page.nslots == 0
    sm.bp.unfix(page)
    assert sm.files.files() == [fid]
    with pytest.raises(BadRequestError, match=r"s\(1.4\) is not a file"):
        sm.files.file_info(StoreId(1, 4))


def test_small_and_large_records_create_read_update_append_truncate_free():
    sm = new_sm()
    fid = make_file(sm)
    big = bytes(range(256)) * 4  # 1024 bytes: three chunks of at most 452
    with sm.transaction() as t:
        small = sm.create_rec(t, fid, b"hello", b"h")
        large = sm.create_rec(t, fid, big, b"hdr")
        rec = sm.read_rec(t, large)
        assert (rec.hdr, rec.body, rec.flags) == (b"hdr", big, RecFlags.LARGE_0)
        assert len(sm.volume.store_pages(StoreId(1, 4))) == 3
        sm.update_rec(t, large, 440, b"X" * 30)  # across the first chunk boundary
        big = big[:440] + b"X" * 30 + big[470:]
        sm.append_rec(t, large, b"Y" * 500)  # fills the last chunk, adds one
        big += b"Y" * 500
        assert sm.read_rec(t, large).body == big
        sm.truncate_rec(t, large, 600)  # frees a chunk page
        big = big[:-600]
        assert sm.read_rec(t, large).body == big
        sm.append_rec(t, small, b" world")
        sm.truncate_rec(t, small, 3)
        assert sm.read_rec(t, small) == sm.read_rec(t, small)
        assert sm.read_rec(t, small).body == b"hello wo"
        sm.append_rec(t, small, b"!" * 200)  # outgrows max_small_rec: becomes large, same id
        rec = sm.read_rec(t, small)
        assert (rec.rid, rec.hdr, rec.body, rec.flags) == (small, b"h", b"hello wo" + b"!" * 200, RecFlags.LARGE_0)
    with sm.transaction() as t:
        sm.free_rec(t, large)
        sm.free_rec(t, small)
    assert sm.volume.store_pages(StoreId(1, 4)) == []  # every chunk page freed
    assert sm.contents() == {fid: {}} and sm.check() == []


def test_update_errors_change_nothing():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        rid = sm.create_rec(t, fid, b"12345")
    t = sm.begin()
    end = sm.log.last_lsn
    with pytest.raises(BadRequestError, match="cannot write 3 bytes at 4"):
        sm.update_rec(t, rid, 4, b"abc")
    with pytest.raises(BadRequestError, match="cannot cut 9 bytes"):
        sm.truncate_rec(t, rid, 9)
    with pytest.raises(RecordWontFitError, match="more than a two-level index lists"):
        sm.create_rec(t, fid, b"z" * 6_000_000)
    assert sm.log.last_lsn == end
    sm.commit(t)


def test_stale_record_ids_are_refused_with_the_reason():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        a = sm.create_rec(t, fid, b"a")
        sm.create_rec(t, fid, b"b")
    with sm.transaction() as t:
        sm.free_rec(t, a)
    cases = {
        a: r"slot 0 of p\(1.3.16\) is not in use",
        RecordId(1, 3, 16, 9): r"slot 9 of p\(1.3.16\) is not in use",
        RecordId(1, 4, 16, 1): r"page 16 belongs to s\(1.3\)",
        RecordId(1, 3, 17, 0): r"p\(1.3.17\) is not a file page \(FREE\)",
        RecordId(1, 1, 8, 0): "not a record of a file",
        RecordId(1, 3, 500, 0): "page 500 is outside the volume",
        RecordId(2, 3, 16, 0): r"not on volume v\(1\)",
    }
    with sm.transaction() as t:
        for rid, why in cases.items():
            with pytest.raises(StaleRecordIdError, match=why):
                sm.read_rec(t, rid)
        with pytest.raises(StaleRecordIdError, match="stale record id"):
            sm.update_rec(t, a, 0, b"x")
    with sm.transaction() as t:
        sm.destroy_file(t, fid)
        with pytest.raises(StaleRecordIdError, match=r"store s\(1.3\) is being deleted"):
            sm.read_rec(t, RecordId(1, 3, 16, 1))


def test_freeing_the_last_record_frees_the_page_but_not_the_first_page():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, bytes([i]) * 100) for i in range(8)]  # four per page: pages 16, 17
    pages = sorted({r.page for r in rids})
    assert pages == [16, 17]
    with sm.transaction() as t:
        for rid in rids:
            sm.free_rec(t, rid)
        # the freed page comes back if T aborts: no one may allocate it meanwhile
        assert not sm.volume.is_allocated(rids[-1].pid) and sm.xcts.is_page_held(17, t)
    assert [p.page for p in sm.volume.store_pages(fid)] == [16]  # the first page stays
    assert sm.files.stats["nFilePagesFreed"] == 1


def test_a_freed_slot_stays_reserved_for_its_transaction():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, bytes([65 + i]) * 60) for i in range(3)]
    t1 = sm.begin()
    sm.free_rec(t1, rids[1])
    page = sm.bp.fix(rids[1].pid, SH)
    assert page.slot_state(1) == SLOT_RESERVED and page.nrsvd == 68 and page.rsvd_tid == t1.txn_id
    sm.bp.unfix(page)
    t2 = sm.begin()
    other = sm.create_rec(t2, fid, b"t2" * 30)
    assert other != rids[1]  # T2 may not take the slot T1 freed
    mine = sm.create_rec(t1, fid, b"t1" * 30)
    assert mine.slot != 1  # a forward insert never reuses a reserved slot, even its owner's
    sm.abort(t1)
    sm.commit(t2)
    with sm.transaction() as t:
        assert sm.read_rec(t, rids[1]).body == b"B" * 60  # back in its very slot


def test_placement_policies_cache_compact_append():
    sm = new_sm(max_small_rec=200)
    fid = make_file(sm)
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, bytes([i]) * 200, policy=Policy.APPEND) for i in range(6)]
    assert [r.page for r in rids] == [16, 16, 17, 17, 18, 18]
    with sm.transaction() as t:
        sm.free_rec(t, rids[0])
    with sm.transaction() as t:
        appended = sm.create_rec(t, fid, b"a" * 100, policy=Policy.APPEND)
        cached = sm.create_rec(t, fid, b"c" * 100, policy=Policy.CACHE)
    assert appended.page == 19  # page 18 (the last) is full: a new page at the end
    assert cached.page == 16  # the heap's smallest page with room: 16 (236 free) before 19 (340 free)
    assert sm.files.stats["nCacheHits"] == 1
    assert sm.files.histoid(fid).heap() == [(17, 28), (18, 28), (16, 128), (19, 340)]
    sm.files._reset_caches(fid.store)  # as after a restart: an empty heap, the histogram from the buckets
    with sm.transaction() as t:
        compact = sm.create_rec(t, fid, b"k" * 150, policy=Policy.CACHE | Policy.COMPACT)
    # 162 bytes need bucket 6: the linear search passes pages 16-18 (buckets 4, 1, 1) and takes 19 (bucket 10)
    assert compact.page == 19 and sm.files.stats["nCompactHits"] == 1


def test_histogram_worked_example():
    hist = Histoid(512)
    for page, free in ((12, 300), (13, 40), (14, 120)):
        hist.update(page, free)
    assert [bucket_of(f, 512) for f in (300, 40, 120)] == [9, 1, 3]
    assert bucket_needed(100, 512) == 4 and bucket_needed(350, 512) == 11
    assert [page for page, _ in hist.candidates(100)] == [14, 12]
    assert hist.pages_at_least(11) == 0 and hist.pages_at_least(3) == 2
    hist.remove(14)
    assert hist.heap() == [(13, 40), (12, 300)] and hist.counts[3] == 0


def test_scan_is_in_physical_order_and_destroy_frees_at_commit():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        rids = [sm.create_rec(t, fid, f"{i:03}".encode() * 30, policy=Policy.APPEND) for i in range(10)]
    with sm.transaction() as t:
        assert [r.rid for r in sm.scan(t, fid)] == sorted(rids, key=lambda r: (r.page, r.slot))
    large = sm.files.file_info(fid).large
    t = sm.begin()
    sm.destroy_file(t, fid)
    assert sm.files.files() == []
    assert fid in sm.volume.stores()  # marked, not yet removed
    sm.commit(t)
    assert {fid.store, large} & {s.store for s in sm.volume.stores()} == set()
    names = [e.type_name for e in sm.log.scan() if e.txn_id == t.txn_id]
    assert names[-1] == "xct_end" and "xct_freeing_space" in names
    assert sm.check() == []


def test_an_aborted_destroy_keeps_the_file():
    sm = new_sm()
    fid = make_file(sm)
    with sm.transaction() as t:
        rid = sm.create_rec(t, fid, b"still here")
    t = sm.begin()
    sm.destroy_file(t, fid)
    sm.abort(t)
    assert sm.files.files() == [fid]
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"still here"


def test_a_store_number_outside_the_volume_is_a_clear_error():
    sm = new_sm()
    with pytest.raises(BadRequestError, match=r"v\(1\): store 999 is outside 0..31"):
        sm.volume.store_node(999)
    with pytest.raises(BadRequestError, match="is not a store id"):
        sm.volume.store_pages(3)


def count_directory_reads(sm, monkeypatch) -> list[int]:
    reads = []
    real = sm.files.directory.get
    monkeypatch.setattr(sm.files.directory, "get", lambda snum: reads.append(snum) or real(snum))
    return reads


def test_the_fast_file_manager_reads_a_file_descriptor_from_the_directory_once(monkeypatch):
    with impl.using("fast", only=[FAST_FILES]):
        sm = new_sm()
        fid = make_file(sm)
        reads = count_directory_reads(sm, monkeypatch)
        for n in range(3):
            with sm.transaction() as t:
                sm.create_rec(t, fid, b"rec %d" % n)
    assert reads == [fid.store]


@pytest.mark.parametrize("which", [impl.ENGINE, impl.FAST])
def test_no_descriptor_outlives_an_aborted_creation(which):
    """The creating transaction inserts (its descriptor is cached by the fast file manager), then aborts:
    the file is gone, and an insert into it is refused as into no file, whichever way it was undone."""
    with impl.using(which):
        no_descriptor_outlives_an_aborted_creation()


def no_descriptor_outlives_an_aborted_creation():
    sm = new_sm()
    t = sm.begin()
    fid = sm.create_file(t)
    sm.create_rec(t, fid, b"first")
    sm.abort(t)
    with sm.transaction() as t2, pytest.raises(BadRequestError, match=r"s\(1.3\) is not a file"):
        sm.create_rec(t2, fid, b"into nothing")
    t = sm.begin()
    point = sm.xcts.save_point(t)
    fid = sm.create_file(t)
    sm.create_rec(t, fid, b"first")
    sm.xcts.rollback_to(t, point)
    with pytest.raises(BadRequestError, match=r"is not a file"):
        sm.create_rec(t, fid, b"into nothing")
    sm.abort(t)


@pytest.mark.parametrize("which", [impl.ENGINE, impl.FAST])
def test_no_descriptor_outlives_a_destroyed_file(which):
    with impl.using(which):
        sm = new_sm()
        fid = make_file(sm)
        with sm.transaction() as t:
            sm.create_rec(t, fid, b"cached")
        with sm.transaction() as t:
            sm.files.destroy_file(t, fid)
        with sm.transaction() as t, pytest.raises(BadRequestError, match=r"s\(1.3\) is not a file"):
            sm.create_rec(t, fid, b"into nothing")


def test_the_fast_file_manager_reads_a_page_extlink_once_then_knows_it(monkeypatch):
    """Whether the page is the file's and its advisory bucket come from one extent-map read; once known,
    later inserts read nothing until an extlink is written (a page allocated); the bucket is written back
    only when it moves, and is then known too."""
    with impl.using("fast", only=[FAST_FILES]):
        sm = new_sm()
    assert type(sm.files) is not FileManager
    fid = make_file(sm)
    with sm.transaction() as t:
        rid = sm.create_rec(t, fid, b"first")
    reads = []  # the file manager's questions to the extent map (setting a bucket checks the page itself)
    real = sm.volume.page_allocation
    monkeypatch.setattr(sm.volume, "page_allocation", lambda pid: reads.append(pid.page) or real(pid))
    with sm.transaction() as t:
        second = sm.create_rec(t, fid, b"second")
    assert second.pid == rid.pid and reads == []
    with sm.transaction() as t:  # another file: its stores and first page are written in the extent map
        make_file(sm)
    reads.clear()
    with sm.transaction() as t:
        third = sm.create_rec(t, fid, b"third")
    assert third.pid == rid.pid and reads == [rid.page]
    reads.clear()
    with sm.transaction() as t:
        sm.create_rec(t, fid, b"fourth" * 20)  # its bucket moves: written, and known
        sm.create_rec(t, fid, b"fifth")
    assert reads == []
    page = sm.bp.fix(rid.pid, SH)
    free = page.nfree
    sm.bp.unfix(page)
    monkeypatch.undo()
    assert sm.volume.page_bucket(rid.pid) == bucket_of(free, sm.files.page_size)
    assert sm.files.page_allocation(rid.pid) == sm.volume.page_allocation(rid.pid)
