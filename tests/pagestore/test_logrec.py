"""The entry table, the update protocol, and redo/undo dispatched by entry-type name."""

import pytest

from minidb.errors import DiskFullError
from minidb.io import CrashMode
from minidb.log import NULL_LSN, type_by_code
from minidb.pagestore import PAGESTORE_TYPES, AllocMode, PageId, StoreId, TxnRef, redo, undo
from minidb.pagestore.wal.logrec import REDO, UNDO, check_handlers

from tests.pagestore.helpers import mount, new_volume


def test_the_table_declares_shore_names_flags_and_codes():
    rows = {t.name: (t.code, t.flags) for t in PAGESTORE_TYPES if t.code < 0x20}  # the storage layer
    assert rows == {
        "create_ext_list": (0x10, "TR"), "free_ext_list": (0x11, "TR"), "set_ext_next": (0x12, "TR"),
        "set_ext_prev": (0x13, "TR"), "alloc_pages_in_ext": (0x14, "TRUL"), "free_pages_in_ext": (0x15, "TRUL"),
        "store_operation": (0x16, "TRUL"),
    }
    for entry_type in PAGESTORE_TYPES:
        assert type_by_code(entry_type.code) is entry_type
        if entry_type.code < 0x20:
            assert [name for name, _ in entry_type.all_fields[:5]] == ["txn_id", "txn_prev_lsn", "vol", "store", "page"]


def test_every_flag_has_its_handler():
    assert check_handlers() == []
    assert set(REDO) == {t.name for t in PAGESTORE_TYPES if t.redoable}
    assert set(UNDO) == {t.name for t in PAGESTORE_TYPES if t.undoable}


class FullLog:
    """A log whose disk is full: every append fails, nothing is logged."""

    def __init__(self, real):
        self.real = real
        self.end_lsn = real.end_lsn

    def append(self, *args, **kwargs):
        raise DiskFullError("sim: disk full")

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_failing_append_puts_the_page_back():
    s = new_volume()
    st = s.vol.create_store()
    before = s.snapshot()
    extmap = s.bp.fix(PageId(1, 0, 1))
    image = bytes(extmap.buf)
    s.bp.unfix(extmap)
    s.vol.log = FullLog(s.log)
    with pytest.raises(DiskFullError):
        s.vol.alloc_page(st)
    s.vol.log = s.log
    extmap = s.bp.fix(PageId(1, 0, 1))
    assert bytes(extmap.buf) == image
    s.bp.unfix(extmap)
    assert s.snapshot() == before


def workload(vol):
    a, b = vol.create_store(), vol.create_store()
    pages = [vol.alloc_page(a if i % 3 else b, AllocMode.APPEND) for i in range(30)]
    for pid in pages[::4]:
        vol.free_page(pid)
    c = vol.create_store()
    vol.alloc_page(c)
    vol.drop_store(b)
    return a, c


def test_redo_from_the_log_rebuilds_the_maps_after_a_crash():
    s = new_volume(frames=2)  # a small pool: some map pages were written, some not
    workload(s.vol)
    s.log.sync()
    expected = (s.vol.dump_extents(), s.vol.dump_stores())
    written = s.bp.stats["nPageWrites"]
    assert written > 0 and s.bp.dirty_page_table()
    s.disk.crash(CrashMode.nothing())  # the volume keeps only what was fsynced
    after = mount(s.disk, frames=2)
    assert (after.vol.dump_extents(), after.vol.dump_stores()) != expected
    entries = list(after.log.scan())
    applied = sum(redo(after.bp, entry) for entry in entries)
    assert 0 < applied < len(entries)  # pages written before the crash were already up to date
    after.vol.reset_caches()
    assert (after.vol.dump_extents(), after.vol.dump_stores()) == expected
    assert after.vol.check() == []
    assert sum(redo(after.bp, entry) for entry in entries) == 0  # redo is idempotent


def test_entries_of_a_transaction_are_chained():
    s = new_volume()
    xct = TxnRef(7)
    st = s.vol.create_store(xct=xct)
    s.vol.alloc_page(st, xct=xct)
    mine = [e for e in s.log.scan() if e.txn_id == 7]
    assert len(mine) == 4 and mine[0].txn_prev_lsn == NULL_LSN
    assert [e.txn_prev_lsn for e in mine[1:]] == [e.lsn for e in mine[:-1]]
    assert xct.last_lsn == mine[-1].lsn
    s.vol.alloc_page(st)  # outside any transaction: txn_id 0
    assert s.log.read(s.log.last_lsn).txn_id == 0


def rollback(s, xct):
    """Undo a transaction's entries, newest first, following its chain (what the next layer does with CLRs)."""
    lsn = xct.last_lsn
    while lsn != NULL_LSN:
        entry = s.log.read(lsn)
        if entry.entry_type.undoable:
            undo(s.vol, entry)
        lsn = entry.txn_prev_lsn


def test_undo_of_a_transaction_that_created_a_store_and_allocated_pages():
    s = new_volume()
    keep = s.vol.create_store()
    s.vol.alloc_page(keep)
    before = (s.vol.dump_extents(), s.vol.dump_stores())
    xct = TxnRef(9)
    st = s.vol.create_store(xct=xct)
    for _ in range(6):
        s.vol.alloc_page(st, AllocMode.APPEND, xct=xct)
    s.vol.alloc_page(keep, xct=xct)
    rollback(s, xct)
    assert (s.vol.dump_extents(), s.vol.dump_stores()) == before
    assert s.vol.check() == []


def test_undo_of_frees_and_of_marking_for_deletion():
    s = new_volume()
    st = s.vol.create_store()
    pages = [s.vol.alloc_page(st) for _ in range(3)]
    before = (s.vol.dump_extents(), s.vol.dump_stores())
    xct = TxnRef(11)
    s.vol.free_page(pages[1], xct=xct, free_empty_extent=False)
    s.vol.destroy_store(st, xct=xct)
    rollback(s, xct)
    assert (s.vol.dump_extents(), s.vol.dump_stores()) == before
    assert s.vol.alloc_page(st) == PageId(1, 3, 15)  # page 13 is allocated again: the caches were told


def test_undo_refuses_what_it_cannot_undo():
    s = new_volume()
    st = s.vol.create_store()
    xct = TxnRef(3)
    s.vol.alloc_page(st, xct=xct)
    alloc = s.log.read(xct.last_lsn)
    create_ext_list = next(e for e in s.log.scan() if e.type_name == "create_ext_list")
    with pytest.raises(ValueError, match="not undoable"):
        undo(s.vol, create_ext_list)
    s.vol.free_page(PageId(1, 3, 12))
    with pytest.raises(Exception, match="no longer holds those pages"):
        undo(s.vol, alloc)
    assert StoreId(1, 3) in s.vol.stores()
