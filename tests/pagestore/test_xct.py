"""Transactions: states, the log chain and undo-next, commit and abort, savepoints, CLRs, locks."""

import pytest

from minidb import impl
from minidb.log import NULL_LSN
from minidb.pagestore import PAGESTORE_TYPES
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.lock import LockManager
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.transactions.xctmgr import XctError
from minidb.pagestore.wal.logrec import REDO, UNDO, check_handlers

from tests.pagestore.sm_helpers import entries, new_sm


def test_the_table_declares_the_new_types_with_shore_flags():
    rows = {t.name: (t.code, t.flags) for t in PAGESTORE_TYPES if 0x20 <= t.code <= 0x38 and not 0x24 <= t.code <= 0x27}
    assert rows == {
        "xct_abort": (0x20, "T"), "xct_freeing_space": (0x21, "T"), "xct_end": (0x22, "T"),
        "compensate": (0x23, "TC"), "chkpt_begin": (0x28, ""), "chkpt_bf_tab": (0x29, ""),
        "chkpt_xct_tab": (0x2a, ""), "chkpt_end": (0x2b, ""), "chkpt_dev_tab": (0x2c, ""),
        "mount_vol": (0x2d, ""), "dismount_vol": (0x2e, ""), "page_format": (0x30, "TR"),
        "rec_insert": (0x31, "TRU"), "rec_remove": (0x32, "TRU"), "rec_splice": (0x33, "TRU"),
        "clr_rec_insert": (0x34, "TRC"), "clr_rec_remove": (0x35, "TRC"), "clr_rec_splice": (0x36, "TRC"),
        "page_image": (0x38, "TR"),
    }
    for entry_type in PAGESTORE_TYPES:
        if entry_type.compensation:  # a CLR says where rollback goes on
            assert "undo_nxt" in dict(entry_type.fields) and not entry_type.undoable
        if entry_type.redoable:  # redo finds its page from the fields alone
            assert [n for n, _ in entry_type.fields[:3]] == ["vol", "store", "page"]
    assert check_handlers() == []
    assert {"rec_insert", "rec_remove", "rec_splice"} <= set(UNDO)
    assert {"clr_rec_insert", "clr_rec_remove", "clr_rec_splice", "page_format"} <= set(REDO)


def test_begin_commit_abort_and_the_states():
    sm = new_sm()
    t1, t2 = sm.begin(), sm.begin()
    assert (t1.txn_id, t2.txn_id) == (1, 2) and t1.state == XctState.ACTIVE
    assert sm.xcts.oldest_active() == 1 and [x.txn_id for x in sm.xcts.active()] == [1, 2]
    fid = sm.create_file(t1)
    point = sm.commit(t1)
    assert t1.state == XctState.ENDED and sm.log.is_durable(point)
    assert sm.log.read(point).type_name == "xct_end" and sm.log.read(point).values["committed"]
    sm.create_rec(t2, fid, b"x")
    sm.abort(t2)
    assert t2.state == XctState.ENDED and sm.xcts.active() == []
    names = [e.type_name for e in entries(sm) if e.txn_id == 2]
    assert names == ["rec_insert", "xct_abort", "clr_rec_insert", "xct_end"]
    with pytest.raises(XctError, match="T1 is ENDED|not an active transaction"):
        sm.commit(t1)
    with pytest.raises(XctError):
        sm.create_rec(t2, fid, b"y")


def test_a_read_only_transaction_logs_nothing():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"x")
    end = sm.log.last_lsn
    t = sm.begin()
    assert sm.read_rec(t, rid).body == b"x"
    assert sm.commit(t) == NULL_LSN
    assert sm.log.last_lsn == end and sm.xcts.stats["nReadOnly"] == 1


@pytest.mark.parametrize("which", [impl.ENGINE, impl.FAST])
def test_a_read_only_durable_commit_neither_logs_nor_waits_for_the_log(which):
    with impl.using(which):
        sm = new_sm(locking=LockManager())
        with sm.transaction() as t:
            ix = sm.create_index(t, "i4")
            sm.index_insert(t, ix, 7, b"seven")
        with sm.transaction(durable=False) as t:
            sm.index_insert(t, ix, 8, b"eight")  # a commit not yet durable: a read-only commit must not force it
        end, events, durable = sm.log.end_lsn, len(sm.disk.events), sm.log.durable_end
        with sm.transaction() as t:  # durable, as by default
            assert sm.index_lookup(t, ix, 7) == [b"seven"]
            assert sm.xcts.locks.held(t)  # its locks, held until its commit
        assert (sm.log.end_lsn, len(sm.disk.events), sm.log.durable_end) == (end, events, durable)
        assert sm.xcts.stats["nReadOnly"] == 1 and not sm.xcts.active()
        assert not sm.xcts.locks.held(t)


def test_durable_and_non_durable_commits():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
    t = sm.begin()
    sm.create_rec(t, fid, b"lazy")
    lazy = sm.commit(t, durable=False)
    assert not sm.log.is_durable(lazy)
    t = sm.begin()
    sm.create_rec(t, fid, b"forced")
    forced = sm.commit(t)
    assert sm.log.is_durable(forced) and sm.log.is_durable(lazy)  # the group commit covers both


def test_every_entry_is_chained_and_undo_next_skips_redo_only_entries():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
    t = sm.begin()
    rid = sm.create_rec(t, fid, b"0123456789")
    first_undoable = t.undo_nxt
    sm.update_rec(t, rid, 2, b"ab")
    chain, lsn = [], t.last_lsn
    while not lsn.is_null:
        entry = sm.log.read(lsn)
        chain.append(entry.type_name)
        lsn = entry.values["txn_prev_lsn"]
    assert chain == ["rec_splice", "rec_insert"]
    assert t.first_lsn == first_undoable and t.undo_nxt == t.last_lsn


def test_rollback_logs_one_clr_per_undone_entry_pointing_past_it():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"hello world")
    t = sm.begin()
    sm.update_rec(t, rid, 0, b"HELLO")
    other = sm.create_rec(t, fid, b"new")
    sm.free_rec(t, rid)
    forward = [e for e in entries(sm) if e.txn_id == t.txn_id]
    steps = sm.abort(t)
    assert [s.type_name for s in steps] == ["rec_remove", "rec_insert", "rec_splice"]
    clrs = [e for e in entries(sm) if e.txn_id == t.txn_id and e.entry_type.compensation]
    assert [c.type_name for c in clrs] == ["clr_rec_remove", "clr_rec_insert", "clr_rec_splice"]
    # each CLR's undo_nxt is the txn_prev_lsn of the entry it compensates
    assert [c.values["undo_nxt"] for c in clrs] == [f.values["txn_prev_lsn"] for f in reversed(forward)]
    assert clrs[-1].values["undo_nxt"] == NULL_LSN
    with sm.transaction() as t:
        assert sm.read_rec(t, rid).body == b"hello world"
        with pytest.raises(Exception, match="stale record id"):
            sm.read_rec(t, other)


def test_savepoints_roll_back_only_what_came_after():
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
    t = sm.begin()
    a = sm.create_rec(t, fid, b"a")
    sp1 = sm.save_point(t)
    b = sm.create_rec(t, fid, b"b")
    sp2 = sm.save_point(t)
    sm.update_rec(t, a, 0, b"A")
    sm.free_rec(t, b)
    steps = sm.rollback_to(t, sp2)
    assert [s.type_name for s in steps] == ["rec_remove", "rec_splice"]
    assert t.state == XctState.ACTIVE
    assert {r.body for r in sm.scan(t, fid)} == {b"a", b"b"}
    sm.update_rec(t, a, 0, b"Z")
    sm.rollback_to(t, sp1)
    assert [r.body for r in sm.scan(t, fid)] == [b"a"]
    sm.commit(t)
    with sm.transaction() as t:
        assert [(r.rid, r.body) for r in sm.scan(t, fid)] == [(a, b"a")]
    t = sm.begin()
    with pytest.raises(XctError, match="does not belong"):
        sm.rollback_to(t, sp1)


def test_rollback_jumps_over_a_compensated_page_allocation():
    """A file page allocated by an aborted transaction stays: others may have records on it."""
    sm = new_sm()
    with sm.transaction() as t:
        fid = sm.create_file(t)
        sm.create_rec(t, fid, b"f" * 120)
        sm.create_rec(t, fid, b"f" * 120)
        sm.create_rec(t, fid, b"f" * 120)
        sm.create_rec(t, fid, b"f" * 40)  # the first page is full now
    t1, t2 = sm.begin(), sm.begin()
    mine = sm.create_rec(t1, fid, b"t1" * 10)  # on a new page, allocated by T1
    theirs = sm.create_rec(t2, fid, b"t2" * 10)  # on the same page
    assert mine.pid == theirs.pid
    steps = sm.abort(t1)
    assert [s.action for s in steps] == ["undone", "jumped"]
    sm.commit(t2)
    with sm.transaction() as t:
        assert sm.read_rec(t, theirs).body == b"t2" * 10
    assert sm.volume.is_allocated(theirs.pid) and sm.check() == []


class RecordingLocking:
    """Records lock requests, and the fixes around them, to check the protocol's order."""

    def __init__(self, sm_holder):
        self.events = []
        self.sm_holder = sm_holder

    def lock(self, xct, target, mode, duration="long", timeout=None):
        self.events.append(("lock", str(target), mode))

    def try_lock(self, xct, target, mode, duration="long"):
        self.events.append(("try_lock", str(target), mode))
        return True

    def release_all(self, xct):
        self.events.append(("release_all", xct.txn_id))


def test_the_protocol_locks_before_it_fixes_and_releases_at_the_end():
    holder = {}
    locking = RecordingLocking(holder)
    sm = new_sm(locking=locking)
    real_fix = sm.bp.fix

    def fix(pid, mode=None, **kw):
        if mode == EX and pid.store >= 3:
            locking.events.append(("fix EX", str(pid)))
        return real_fix(pid, mode, **kw) if mode is not None else real_fix(pid, **kw)

    sm.bp.fix = fix
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"x")
    locking.events.clear()
    t = sm.begin()
    sm.update_rec(t, rid, 0, b"y")
    sm.read_rec(t, rid)
    sm.commit(t)
    assert locking.events == [("lock", str(rid), "EX"), ("fix EX", str(rid.pid)), ("lock", str(rid), "SH"),
                              ("release_all", t.txn_id)]
    locking.events.clear()
    t = sm.begin()
    sm.destroy_file(t, fid)
    assert locking.events[:2] == [("lock", str(fid), "EX"), ("lock", "s(1.4)", "EX")]
    sm.abort(t)


def test_printlog_of_transactions_records_and_checkpoints_golden(tmp_path, capsys):
    from minidb.cli import main
    from minidb.io import OSDisk
    from minidb.pagestore import StorageManager

    from tests.cli.test_cli import check_golden
    from tests.pagestore.sm_helpers import fixed_clock

    sm = StorageManager.format(OSDisk(tmp_path / "db", create=True), num_pages=64, ext_sz=4, page_size=512,
                               frames=8, clock=fixed_clock)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"alpha", b"h")
    t = sm.begin()
    sm.update_rec(t, rid, 0, b"A")
    sm.free_rec(t, rid)
    sm.abort(t)
    with sm.transaction() as t:
        sm.destroy_file(t, fid)
    sm.close()
    assert main(["printlog", str(tmp_path / "db")]) == 0
    check_golden("printlog_transactions.txt", capsys.readouterr().out)
