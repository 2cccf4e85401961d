"""Store properties: TMP files are unlogged and gone after restart, LOAD and INSERT files forced and regular at commit."""

import re

import pytest

from minidb.io import CrashMode
from minidb.pagestore import PAGESTORE_TYPES, BadRequestError, StoreFlags, StoreProperty
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.ids import StoreId
from minidb.pagestore.transactions.xctmgr import XctError

from tests.pagestore.helpers import page_writes
from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen

RECORD_ENTRIES = {"rec_insert", "rec_remove", "rec_splice", "clr_rec_insert", "clr_rec_remove", "clr_rec_splice"}


def logged_since(sm, count):
    return [e for e in entries(sm)[count:]]


def record_entries_on(sm, count, stores):
    """Record entries logged after the ``count``-th entry on pages of ``stores`` (store numbers)."""
    return [e for e in logged_since(sm, count) if e.type_name in RECORD_ENTRIES and e.values["store"] in stores]


def file_stores(sm, fid):
    return {fid.store, sm.files.file_info(fid).large}


def fill(sm, t, fid, count=12, size=40):
    rids = [sm.create_rec(t, fid, bytes([i]) * size) for i in range(count)]
    rids.append(sm.create_rec(t, fid, b"L" * 900))  # a large record: chunk pages in the large store
    return rids


def test_the_entry_type_of_store_properties():
    t = PAGESTORE_TYPES.unlogged_page_image
    assert (t.code, t.flags) == (0x3c, "TR")


def test_property_names_and_bad_names_get_clear_errors():
    assert StoreProperty.parse("tmp") is StoreProperty.TMP and StoreProperty.parse("Load") is StoreProperty.LOAD
    assert StoreProperty.INSERT.flags == StoreFlags.INSERT_FILE
    sm = new_sm()
    t = sm.begin()
    stores = sm.volume.stores()
    for bad in ("temporary", 2, None, StoreFlags.TMP):
        with pytest.raises(BadRequestError, match="not a store property .*REGULAR, TMP, LOAD, INSERT"):
            sm.create_file(t, bad)
    assert sm.volume.stores() == stores and t.last_lsn.is_null  # nothing changed
    fid = sm.create_file(t)
    with pytest.raises(BadRequestError, match="not a store property"):
        sm.set_store_property(t, fid, "fast")
    for prop in ("tmp", "load"):
        with pytest.raises(BadRequestError, match="a REGULAR file cannot become"):
            sm.set_store_property(t, fid, prop)
    assert sm.store_property(fid) is StoreProperty.REGULAR


# -- TMP ---------------------------------------------------------------------------------------------
def test_tmp_record_changes_write_no_log_entries():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        tmp = sm.create_file(t, StoreProperty.TMP)
    assert sm.volume.store_node(tmp.store).flags == StoreFlags.TMP
    count = len(entries(sm))
    with sm.transaction() as t:
        rids = fill(sm, t, tmp)
        sm.update_rec(t, rids[0], 0, b"new")
        sm.append_rec(t, rids[1], b"more" * 100)
        sm.free_rec(t, rids[2])
    assert record_entries_on(sm, count, file_stores(sm, tmp)) == []
    names = {e.type_name for e in logged_since(sm, count)}
    assert names <= {"alloc_pages_in_ext", "page_format", "compensate", "xct_end", "create_ext_list",
                     "set_ext_next", "set_ext_prev", "page_image"}  # space logging only
    assert not [e for e in logged_since(sm, count)
                if e.type_name == "page_image" and e.values["store"] in file_stores(sm, tmp)]  # images of maps only
    with sm.transaction() as t:
        assert sm.read_rec(t, rids[0]).body == b"new" + bytes([0]) * 37
        assert sm.read_rec(t, rids[1]).body == bytes([1]) * 40 + b"more" * 100


def test_an_abort_does_not_undo_a_tmp_files_records_and_keeps_their_pages():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        tmp = sm.create_file(t, "tmp")
    t = sm.begin()
    small, large = sm.create_rec(t, tmp, b"small"), sm.create_rec(t, tmp, b"B" * 700)
    chunks = sm.volume.store_pages(StoreId(tmp.vol, sm.files.file_info(tmp).large))
    assert len(chunks) == 2
    sm.abort(t)
    assert sm.volume.store_pages(StoreId(tmp.vol, sm.files.file_info(tmp).large)) == chunks
    with sm.transaction() as t:
        assert sm.read_rec(t, small).body == b"small"
        assert sm.read_rec(t, large).body == b"B" * 700  # its chunk pages were kept
    assert sm.check() == []


@pytest.mark.parametrize("how", ["clean", "crash"])
def test_a_tmp_file_is_gone_after_restart_its_extents_freed_by_logged_drops(how):
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        reg = sm.create_file(t)
        kept = sm.create_rec(t, reg, b"regular")
        tmp = sm.create_file(t, "tmp")
    with sm.transaction() as t:
        fill(sm, t, tmp)
    stores = file_stores(sm, tmp)
    exts = [e for s in stores for e in sm.volume.owned_extents(s)]
    sm.log.sync()
    sm = reopen(sm, how)
    assert sm.files.files() == [reg]
    assert not stores & {s.store for s in sm.volume.stores()}
    assert all(sm.volume.extlink(e).owner == 0 for e in exts)
    assert sm.check() == []
    assert any(f"TMP file {tmp} destroyed" in line for line in sm.restart_report.finish.removed_stores)
    drops = [e for e in entries(sm) if e.type_name == "store_operation" and e.values["op"] == "delete_store"]
    assert {e.values["snum"] for e in drops} >= stores
    with sm.transaction() as t:
        assert sm.read_rec(t, kept).body == b"regular"


def test_tmp_pages_are_not_in_the_dirty_page_table_nor_written_at_commit_or_by_the_cleaner():
    sm = new_sm(frames=16)
    with sm.transaction() as t:
        tmp = sm.create_file(t, "tmp")
    sm.bp.force_all()
    writes = len(page_writes(sm.disk))
    with sm.transaction() as t:
        rids = fill(sm, t, tmp)
    tmp_pids = {v.pid for v in sm.bp.frame_views() if v.pid is not None and v.pid.store in file_stores(sm, tmp)}
    assert tmp_pids and all(v.dirty for v in sm.bp.frame_views() if v.pid in tmp_pids)
    assert not tmp_pids & set(sm.bp.dirty_page_table())
    assert not tmp_pids & set(sm.bp.dirty_pages())  # not even among the pages the cleaner writes
    result = sm.checkpoint()
    logged = {(p["store"], p["page"]) for e in entries(sm, ("chkpt_bf_tab",), result.begin) for p in e.values["pages"]}
    assert not logged & {(p.store, p.page) for p in tmp_pids}
    sm.bp.clean()
    sm.bp.force_all()
    tmp_pages = {p.page for p in tmp_pids}
    assert [e for e in page_writes(sm.disk)[writes:] if e.offset // 512 in tmp_pages] == []
    assert all(v.dirty for v in sm.bp.frame_views() if v.pid in tmp_pids)
    # ... only evicted: a small pool and another file push them out. The clock prefers clean frames, and it
    # cleans regular dirty frames ahead of its hand (never TMP ones), so it would keep the TMP pages while the
    # other file's pages pass through clean; a clock that passes over no dirty frame evicts them too.
    sm.bp.dirty_skips = 0
    with sm.transaction() as t:
        reg = sm.create_file(t)
        for i in range(60):
            sm.create_rec(t, reg, bytes([i]) * 120)
    assert [e for e in page_writes(sm.disk)[writes:] if e.offset // 512 in tmp_pages]
    with sm.transaction() as t:
        assert sm.read_rec(t, rids[3]).body == bytes([3]) * 40  # read back after its eviction


def test_a_tmp_file_made_regular_survives_a_crash():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        tmp = sm.create_file(t, "tmp")
        rids = fill(sm, t, tmp)
    with sm.transaction() as t:
        sm.set_store_property(t, tmp, "regular")
    assert sm.store_property(tmp) is StoreProperty.REGULAR
    count = len(entries(sm))
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"logged")
    assert [e.type_name for e in logged_since(sm, count)] == ["unlogged_page_image", "rec_splice", "xct_end"]
    sm = reopen(sm)
    with sm.transaction() as t:
        assert sm.read_rec(t, rids[0]).body == b"logged" + bytes([0]) * 34
        assert sm.read_rec(t, rids[-1]).body == b"L" * 900
        assert len(list(sm.scan(t, tmp))) == len(rids)


# -- LOAD -----------------------------------------------------------------------------------------------
def test_a_load_file_is_minimally_logged_and_regular_after_commit():
    sm = new_sm(frames=8)
    count = len(entries(sm))
    with sm.transaction() as t:
        load = sm.create_file(t, "load")
        assert sm.volume.store_node(load.store).flags == StoreFlags.LOAD_FILE
        rids = fill(sm, t, load, count=30)
    stores = file_stores(sm, load)
    assert record_entries_on(sm, count, stores) == []
    formats = [e for e in logged_since(sm, count) if e.type_name == "page_format" and e.values["store"] in stores]
    assert formats and all(e.values["store_flags"] == StoreFlags.LOAD_FILE for e in formats)
    assert sm.store_property(load) is StoreProperty.REGULAR
    assert all(sm.volume.store_node(s).flags == StoreFlags.REGULAR for s in stores)
    page = sm.bp.fix(rids[0].pid, SH)
    assert page.store_flags == StoreFlags.REGULAR | StoreFlags.LOAD_FILE  # regular, its image not logged yet
    sm.bp.unfix(page)
    count = len(entries(sm))
    with sm.transaction() as t:
        sm.update_rec(t, rids[0], 0, b"later")  # logged now, after the page's image
        sm.update_rec(t, rids[0], 5, b"!")
    assert [e.type_name for e in logged_since(sm, count)] == [
        "unlogged_page_image", "rec_splice", "rec_splice", "xct_end"]


def test_a_load_files_pages_are_forced_before_its_commit_is_durable():
    """A crash at every disk event of the commit: once the commit entry survives, so does every record."""
    sm = new_sm(frames=6)
    with sm.transaction() as t:
        load = sm.create_file(t, "load")
        rids = fill(sm, t, load, count=30)
        before = len(sm.disk.events)
    lsn = t.last_lsn
    contents = sm.contents()[load]
    assert any(e.kind == "fsync" and e.name == "v1.vol" for e in sm.disk.events[before:])
    survived = 0
    for index in range(before - 1, len(sm.disk.events)):
        image = sm.disk.crash_image(index, CrashMode.nothing())
        again = open_again(image, frames=8)
        try:
            committed = again.log.read(lsn).type_name == "xct_end"
        except Exception:
            committed = False
        if committed:
            survived += 1
            assert again.contents()[load] == contents
        else:
            assert load not in again.files.files()
        assert again.check() == []
    assert survived >= 1 and len(rids) == 31


def test_a_crash_right_after_a_load_commit_keeps_everything_and_a_torn_later_write_is_rebuilt():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        load = sm.create_file(t, "load")
        rids = fill(sm, t, load, count=10)
    with sm.transaction() as t:
        sm.update_rec(t, rids[4], 0, b"changed")
    sm.bp.force_all()
    page_write = max(e.index for e in page_writes(sm.disk) if e.offset == rids[4].page * 512)
    image = sm.disk.crash_image(page_write, CrashMode.torn(100))  # the header is new, the rest old
    again = open_again(image, frames=8)
    assert again.restart_report.redo.torn_pages_rebuilt == 1
    with again.transaction() as t:
        assert again.read_rec(t, rids[4]).body == b"changed" + bytes([4]) * 33
        assert [r.body for r in again.scan(t, load)][:3] == [bytes([i]) * 40 for i in range(3)]
    plain = open_again(sm.disk.crash_image(len(sm.disk.events) - 1, CrashMode.nothing()), frames=8)
    assert plain.contents()[load] == sm.contents()[load]


@pytest.mark.parametrize("how", ["abort", "crash"])
def test_an_uncommitted_load_file_is_gone(how):
    sm = new_sm(frames=6)
    with sm.transaction() as t:
        reg = sm.create_file(t)
    t = sm.begin()
    load = sm.create_file(t, "load")
    fill(sm, t, load, count=30)
    stores = file_stores(sm, load)
    if how == "abort":
        sm.abort(t)
    else:
        sm.log.sync()
        sm = reopen(sm)
    assert sm.files.files() == [reg]
    assert not stores & {s.store for s in sm.volume.stores()}
    assert sm.check() == []


def test_only_the_loading_transaction_changes_a_load_file_and_a_savepoint_before_unlogged_changes_is_refused():
    sm = new_sm(frames=8)
    t = sm.begin()
    load = sm.create_file(t, "load")
    early = sm.save_point(t)
    rid = sm.create_rec(t, load, b"first")
    other = sm.begin()
    with pytest.raises(BadRequestError, match=re.escape(f"{load} is being loaded (LOAD) by T{t.txn_id}")):
        sm.create_rec(other, load, b"intruder")
    with pytest.raises(XctError, match="without logging; abort instead"):
        sm.rollback_to(t, early)
    late = sm.save_point(t)
    sm.rollback_to(t, late)  # nothing unlogged since: allowed
    sm.commit(t)
    sm.create_rec(other, load, b"now allowed")
    sm.commit(other)
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"first"


# -- INSERT ------------------------------------------------------------------------------------------------
def insert_file_with_old_records(sm):
    with sm.transaction() as t:
        fid = sm.create_file(t)
        old = [sm.create_rec(t, fid, bytes([i]) * 40) for i in range(3)]
    return fid, old


def test_an_insert_file_logs_changes_to_its_old_pages_not_its_new_ones_and_becomes_regular():
    sm = new_sm(frames=8)
    fid, old = insert_file_with_old_records(sm)
    old_pages = {r.page for r in old}
    count = len(entries(sm))
    with sm.transaction() as t:
        sm.set_store_property(t, fid, StoreProperty.INSERT)
        assert sm.store_property(fid) is StoreProperty.INSERT
        sm.update_rec(t, old[0], 0, b"old")
        new = [sm.create_rec(t, fid, bytes([i]) * 40, policy=4) for i in range(40)]  # APPEND: new pages
    logged = record_entries_on(sm, count, file_stores(sm, fid))
    assert logged and {e.values["page"] for e in logged} <= old_pages
    assert {r.page for r in new} - old_pages
    assert sm.store_property(fid) is StoreProperty.REGULAR
    sm.log.sync()
    sm = reopen(sm)
    with sm.transaction() as t:
        assert sm.read_rec(t, old[0]).body == b"old" + bytes([0]) * 37
        assert [sm.read_rec(t, r).body for r in new] == [bytes([i]) * 40 for i in range(40)]


def test_an_aborted_insert_load_frees_its_new_pages_and_undoes_its_logged_changes():
    sm = new_sm(frames=8)
    fid, old = insert_file_with_old_records(sm)
    pages = sm.volume.store_pages(fid)
    before = sm.contents()
    t = sm.begin()
    sm.set_store_property(t, fid, "insert")
    sm.update_rec(t, old[1], 0, b"undone")
    for i in range(40):
        sm.create_rec(t, fid, bytes([i]) * 40, policy=4)
    sm.create_rec(t, fid, b"L" * 900)
    assert len(sm.volume.store_pages(fid)) > len(pages)
    sm.abort(t)
    assert sm.volume.store_pages(fid) == pages
    assert sm.contents() == before
    assert sm.store_property(fid) is StoreProperty.REGULAR
    assert sm.check() == []


def test_the_unlogged_switch_is_the_page_flags():
    """A page whose header says REGULAR is logged even in a store being loaded (INSERT's old pages)."""
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t, "load")
        first = StoreId(fid.vol, fid.store)
        rid = sm.create_rec(t, first, b"abc")
        page = sm.bp.fix(rid.pid, SH)
        assert page.store_flags == StoreFlags.LOAD_FILE and page.lsn == [
            e for e in entries(sm, ("page_format",)) if e.values["page"] == rid.page][-1].lsn
        sm.bp.unfix(page)


# -- loading pages and the dirty page table ---------------------------------------------------------
def loading_file(sm, prop):
    """A transaction loading a new LOAD file, or a REGULAR file turned INSERT; the file; its committed contents."""
    if prop == "load":
        with sm.transaction() as t:
            sm.create_file(t)
        before = sm.contents()
        t = sm.begin()
        return t, sm.create_file(t, "load"), before
    fid, _ = insert_file_with_old_records(sm)
    before = sm.contents()
    t = sm.begin()
    sm.set_store_property(t, fid, "insert")
    return t, fid, before


def written(sm, pid) -> int:
    """The index of the last write of the volume that covers page ``pid``."""
    return max(e.index for e in page_writes(sm.disk) if e.offset <= pid.page * 512 < e.offset + len(e.data))


@pytest.mark.parametrize("prop", ["load", "insert"])
def test_a_loading_page_changed_after_its_write_and_torn_by_the_next_is_dropped_with_its_loser(prop):
    """A loaded page changed again once written has no image in the log (nothing of it is logged): it is not in
    the dirty page table, so no checkpoint lists it, and a torn write of it does not stop restart, whose undo
    drops the page with the rest of the loser's load."""
    sm = new_sm(frames=8)
    t, fid, before = loading_file(sm, prop)
    old_pages = set(sm.volume.store_pages(fid))
    rid = [sm.create_rec(t, fid, bytes([i]) * 40, policy=4) for i in range(12)][-1]  # APPEND: a new page
    assert rid.pid not in old_pages
    sm.bp.clean()  # written and fsynced: clean
    sm.update_rec(t, rid, 0, b"again")  # unlogged: the clean page is dirty again, with no image before it
    assert rid.pid not in sm.bp.dirty_page_table() and rid.pid in sm.bp.dirty_pages()
    result = sm.checkpoint()
    tables = entries(sm, ("chkpt_bf_tab",), result.begin)
    listed = {(p["store"], p["page"]) for e in tables for p in e.values["pages"]}
    assert (rid.store, rid.page) not in listed
    sm.bp.clean()
    image = sm.disk.crash_image(written(sm, rid.pid), CrashMode.torn(512 - 12))  # all but the footer: its checksum no longer matches
    again = open_again(image, frames=8)
    assert again.contents() == before
    assert again.check() == []


def test_a_load_commit_fsyncs_the_pages_evicted_before_it():
    """Pages of a loading store written on eviction (not fsynced) are outside the dirty page table, so no
    fsync waits for them; the commit reads them back, marks them regular and forces them before its entry."""
    sm = new_sm(frames=6)
    with sm.transaction() as t:
        reg = sm.create_file(t)
    sm.bp.force_all()
    with sm.transaction() as t:
        load = sm.create_file(t, "load")
        rids = [sm.create_rec(t, load, bytes([i]) * 40) for i in range(5)]
        for i in range(60):  # dirty pages, more than the frames: the load file's page is evicted
            sm.create_rec(t, reg, bytes([i]) * 120)
        assert not {r.pid for r in rids} & {v.pid for v in sm.bp.frame_views()}
        evicted = written(sm, rids[0].pid)
        assert not any(e.kind == "fsync" and e.name == "v1.vol" for e in sm.disk.events[evicted:])
    assert any(e.kind == "fsync" and e.name == "v1.vol" for e in sm.disk.events[evicted:])
    sm = reopen(sm)  # a crash: unsynced writes are lost
    with sm.transaction() as t:
        assert [sm.read_rec(t, r).body for r in rids] == [bytes([i]) * 40 for i in range(5)]
