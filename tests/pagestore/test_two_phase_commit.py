"""Two-phase commit: prepare, in-doubt transactions through checkpoints, crashes and restarts, then phase two."""

import threading

import pytest

from minidb.io import CrashMode
from minidb.pagestore import PAGESTORE_TYPES
from minidb.pagestore.lock import LockId, LockManager, LockMode
from minidb.pagestore.restart.results import XctEntry
from minidb.pagestore.transactions.prepare import MAX_GTID, GtidError
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.transactions.xctmgr import XctError

from tests.pagestore.sm_helpers import entries, new_sm, open_again, reopen


def in_flight(locking=True, **options):
    """A committed file with two records, then T (not committed) changing one, freeing the other, adding one."""
    sm = new_sm(locking=LockManager() if locking is True else locking or None, **options)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        keep = sm.create_rec(t, fid, b"hello world")
        gone = sm.create_rec(t, fid, b"x" * 40)
    t = sm.begin()
    sm.update_rec(t, keep, 0, b"HELLO")
    sm.free_rec(t, gone)
    new = sm.create_rec(t, fid, b"new record")
    return sm, t, fid, keep, gone, new


BEFORE = {b"hello world", b"x" * 40}
AFTER = {b"HELLO world", b"new record"}


def bodies(sm, fid):
    return {body for _, body in sm.contents()[fid].values()}


def test_the_prepare_entries_are_shores_in_the_transaction_range():
    rows = {t.name: (t.code, t.flags) for t in PAGESTORE_TYPES if t.name.startswith("xct_prepare")}
    assert rows == {"xct_prepare_st": (0x24, "T"), "xct_prepare_alk": (0x25, "T"),
                    "xct_prepare_stores": (0x26, "T"), "xct_prepare_fi": (0x27, "T")}


def test_prepare_logs_the_entries_forces_them_and_the_transaction_is_prepared():
    sm, t, fid, keep, gone, new = in_flight()
    lsn = sm.prepare(t, b"order-17", coordinator=b"coord-A")
    assert t.state == XctState.PREPARED and t.last_lsn == lsn
    assert sm.log.is_durable(lsn)  # forced
    names = [e.type_name for e in entries(sm, ("xct_prepare_st", "xct_prepare_alk", "xct_prepare_stores",
                                                "xct_prepare_fi"))]
    assert names == ["xct_prepare_st", "xct_prepare_alk", "xct_prepare_stores", "xct_prepare_fi"]
    [doubt] = sm.in_doubt()
    assert (doubt.gtid, doubt.tid, doubt.first_lsn, doubt.prepared_at, doubt.coordinator) == (
        b"order-17", t.txn_id, t.first_lsn, lsn, b"coord-A")
    assert doubt.locks[LockId.record(keep)] == "EX" and doubt.locks[LockId.record(new)] == "EX"
    assert sm.xcts.stats["nPrepared"] == 1


def test_crash_restart_in_doubt_with_locks_held_then_commit_prepared():
    sm, t, fid, keep, gone, new = in_flight()
    first, tid = t.first_lsn, t.txn_id
    sm.prepare(t, b"g-commit")
    locks = sm.in_doubt()[0].locks
    lm = LockManager()
    sm = reopen(sm, "crash", locking=lm)
    [doubt] = sm.in_doubt()
    assert (doubt.gtid, doubt.tid, doubt.first_lsn, doubt.locks) == (b"g-commit", tid, first, locks)
    assert sm.restart_report.undo.losers == [] and sm.restart_report.finish.prepared == [tid]
    # another transaction asking for a conflicting lock waits (timeout 0: fails at once)...
    other = sm.begin()
    assert not sm.xcts.try_lock(other, keep, "SH")
    # ... and a thread updating the record blocks until the prepared transaction commits
    done = []
    worker = threading.Thread(target=lambda: done.append(sm.update_rec(other, keep, 6, b"W")))
    worker.start()
    assert lm.watch(lambda: lm.blocked(other), timeout=30)
    assert not done
    sm.commit_prepared(b"g-commit")
    worker.join(30)
    assert done == [None]
    sm.commit(other)
    assert sm.in_doubt() == [] and lm.query(LockId.record(keep)) == LockMode.NL
    sm = reopen(sm, "crash")
    assert bodies(sm, fid) == {b"HELLO World", b"new record"}
    assert sm.in_doubt() == [] and sm.xcts.active() == []


def test_crash_restart_then_abort_prepared_rolls_its_changes_back():
    sm, t, fid, keep, gone, new = in_flight()
    sm.prepare(t, b"g-abort")
    sm = reopen(sm, "crash")
    assert bodies(sm, fid) == AFTER  # its changes are there (not rolled back), not committed
    steps = sm.abort_prepared(b"g-abort")
    assert sum(1 for s in steps if s.action == "undone") >= 3
    assert bodies(sm, fid) == BEFORE and sm.in_doubt() == []
    sm = reopen(sm, "crash")
    assert bodies(sm, fid) == BEFORE
    assert sm.contents()[fid][gone] == (b"", b"x" * 40)  # back in its own slot


def test_a_prepared_transaction_survives_two_checkpoints_a_crash_and_a_clean_close():
    sm, t, fid, keep, gone, new = in_flight(locking=False)
    first, tid = t.first_lsn, t.txn_id
    sm.prepare(t, b"g-long")
    with sm.transaction() as u:  # other work, so the checkpoints have something to say
        sm.create_rec(u, fid, b"other")
    sm.checkpoint()
    sm.checkpoint()
    sm = reopen(sm, "crash")
    analysis = sm.restart_report.analysis
    assert analysis.start > first  # the prepare entries lie before the master checkpoint
    assert [x.tid for x in analysis.prepared] == [tid]
    [doubt] = sm.in_doubt()
    assert (doubt.tid, doubt.first_lsn) == (tid, first)
    assert [x.first_lsn for x in sm.xcts.active()] == [first]  # counts as active: the log is kept from there
    sm.checkpoint()
    sm = reopen(sm, "clean")  # a clean close leaves it in doubt too
    assert [d.gtid for d in sm.in_doubt()] == [b"g-long"]
    assert bodies(sm, fid) == AFTER | {b"other"}
    sm.commit_prepared(b"g-long")
    sm = reopen(sm, "crash")
    assert bodies(sm, fid) == AFTER | {b"other"} and sm.in_doubt() == []


def test_restart_holds_the_slot_a_prepared_transaction_freed_for_its_abort():
    """Without locks nothing stops new inserts on the page: the slot and its bytes must stay reserved."""
    sm, t, fid, keep, gone, new = in_flight(locking=False)
    sm.prepare(t, b"g-slot")
    sm = reopen(sm, "crash")
    assert sm.restart_report.finish.prepared == [t.txn_id]
    with sm.transaction() as u:
        rids = [sm.create_rec(u, fid, b"y" * 30) for _ in range(12)]
    assert gone not in rids
    sm.abort_prepared(b"g-slot")
    assert sm.contents()[fid][gone] == (b"", b"x" * 40)


def test_space_a_prepared_transaction_frees_is_kept_until_it_commits():
    sm = new_sm()
    with sm.transaction() as t:
        doomed = sm.create_file(t)
        sm.create_rec(t, doomed, b"r")
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, bytes(200)) for _ in range(6)]
    t = sm.begin()
    sm.destroy_file(t, doomed)
    for rid in rids[2:]:
        sm.free_rec(t, rid)  # empties pages after the first: they are freed
    assert t.pages_freed
    freed, marked, exts = set(t.pages_freed), list(t.stores_to_free), set(t.extents_to_free)
    assert doomed in marked
    sm.prepare(t, b"g-space")
    sm = reopen(sm, "crash")
    assert doomed not in sm.files.files()  # gone from the directory, but its store...
    assert sm.volume.store_node(doomed.store).in_use  # ... marked for deletion, not removed by restart
    assert all(sm.xcts.is_page_held(page, None) for _, page in freed)
    [xct] = sm.xcts.active()
    assert (xct.stores_to_free, xct.extents_to_free, xct.pages_freed) == (marked, exts, freed)
    sm.commit_prepared(b"g-space")
    assert not sm.volume.store_node(doomed.store).in_use and sm.check() == []
    assert not any(sm.xcts.is_page_held(page, None) for _, page in freed)
    assert set(sm.contents()[fid]) == set(rids[:2])


def test_prepare_is_atomic_across_a_crash_at_any_of_its_writes():
    sm, t, fid, keep, gone, new = in_flight(locking=False)
    start = len(sm.disk.events)
    sm.prepare(t, b"g-atomic")
    disk = sm.disk
    outcomes = set()
    for event in range(start - 1, len(disk.events)):
        for mode in (CrashMode.nothing(), CrashMode.everything()):
            again = open_again(disk.crash_image(event, mode))
            doubt = again.in_doubt()
            assert bodies(again, fid) == (AFTER if doubt else BEFORE)
            outcomes.add(bool(doubt))
    assert outcomes == {True, False}
    again = open_again(disk.crash_image(len(disk.events) - 1))
    assert [d.gtid for d in again.in_doubt()] == [b"g-atomic"]  # once prepare returned, it is durable


@pytest.mark.parametrize("gtid, message", [
    ("text", "must be bytes"), (b"", "1 to 128 bytes long"), (b"g" * (MAX_GTID + 1), "not 129"), (7, "must be bytes"),
])
def test_a_bad_gtid_is_refused_and_changes_nothing(gtid, message):
    sm, t, *_ = in_flight()
    end = sm.log.end_lsn
    with pytest.raises(GtidError, match=message):
        sm.prepare(t, gtid)
    assert t.state == XctState.ACTIVE and sm.log.end_lsn == end and sm.in_doubt() == []
    sm.commit(t)


def test_double_prepare_work_after_prepare_and_a_gtid_in_use_are_refused():
    sm, t, fid, keep, gone, new = in_flight()
    sm.prepare(t, b"g1")
    end = sm.log.end_lsn
    for attempt in (lambda: sm.prepare(t, b"g2"), lambda: sm.update_rec(t, keep, 0, b"z"),
                    lambda: sm.read_rec(t, keep), lambda: sm.create_rec(t, fid, b"z"), lambda: sm.commit(t),
                    lambda: sm.abort(t), lambda: sm.save_point(t)):
        with pytest.raises(XctError, match="PREPARED .*commit_prepared or abort_prepared"):
            attempt()
    u = sm.begin()
    with pytest.raises(GtidError, match="already T2's"):
        sm.prepare(u, b"g1")
    assert u.state == XctState.ACTIVE and sm.log.end_lsn == end
    assert [d.gtid for d in sm.in_doubt()] == [b"g1"]
    sm.abort(u)
    sm.commit_prepared(b"g1")
    assert bodies(sm, fid) == AFTER


def test_an_unknown_gtid_at_phase_two_is_refused_and_changes_nothing():
    sm, t, fid, *_ = in_flight()
    sm.prepare(t, b"known")
    end = sm.log.end_lsn
    for phase_two in (sm.commit_prepared, sm.abort_prepared):
        with pytest.raises(GtidError, match=r"no prepared transaction has gtid b'unknown' \(prepared: b'known'\)"):
            phase_two(b"unknown")
        with pytest.raises(GtidError, match="must be bytes"):
            phase_two("known")
    assert sm.log.end_lsn == end and [d.gtid for d in sm.in_doubt()] == [b"known"]
    sm.commit_prepared(b"known")
    with pytest.raises(GtidError, match="no prepared transaction"):
        sm.commit_prepared(b"known")  # resolved: the gtid is free again
    u = sm.begin()
    sm.create_rec(u, fid, b"again")
    sm.prepare(u, b"known")
    sm.abort_prepared(b"known")


def test_analysis_keeps_the_state_further_along_when_merging_a_checkpoint_row():
    """The checkpoint copied T PREPARED while its xct_abort (abort_prepared) was already logged after
    chkpt_begin: the scan's ABORTING wins, though ABORTING's value is smaller than PREPARED's."""
    from minidb.pagestore.restart.analysis import _merge_checkpointed  # analysis' own (not in an aries_restart edition)

    table = {5: XctEntry(5, XctState.ABORTING)}
    row = {"tid": 5, "state": int(XctState.PREPARED), "last_lsn": table[5].last_lsn, "undo_nxt": table[5].undo_nxt}
    _merge_checkpointed(table, set(), row)
    assert table[5].state == XctState.ABORTING
    table = {5: XctEntry(5, XctState.ACTIVE)}
    _merge_checkpointed(table, set(), row)
    assert table[5].state == XctState.PREPARED


def test_the_thread_that_prepared_a_transaction_can_wait_for_its_locks():
    """The prepared transaction leaves its thread: the thread's next transaction waiting for one of its
    locks is no deadlock (Dreadlocks would otherwise find the thread's fingerprint in its digest)."""
    lm = LockManager()
    made, done = [], []

    def server_thread():  # runs T, prepares it, then runs U, which waits for T's lock
        sm, t, fid, keep, gone, new = in_flight(locking=lm)
        made.append((sm, fid))
        sm.prepare(t, b"g-thread")
        u = sm.begin()
        made.append(u)
        sm.update_rec(u, keep, 0, b"J")
        sm.commit(u)
        done.append(u)

    worker = threading.Thread(target=server_thread)
    worker.start()
    assert lm.watch(lambda: len(made) == 2 and lm.blocked(made[1]), timeout=30)
    sm, fid = made[0]
    sm.commit_prepared(b"g-thread")
    worker.join(30)
    assert len(done) == 1 and lm.stats["nDeadlocks"] == 0
    assert bodies(sm, fid) == {b"JELLO world", b"new record"}


def test_a_transaction_that_loaded_a_load_file_or_created_a_tmp_file_cannot_be_prepared():
    for prop, what in (("LOAD", "changed LOAD or INSERT files without logging"), ("TMP", "created a TMP file")):
        sm = new_sm(locking=LockManager())
        t = sm.begin()
        fid = sm.create_file(t, property=prop)
        sm.create_rec(t, fid, b"unlogged")
        with pytest.raises(XctError, match=what):
            sm.prepare(t, b"g")
        assert t.state == XctState.ACTIVE and sm.in_doubt() == []
        sm.commit(t)


def test_restart_drops_the_tmp_files_a_prepared_transaction_used_before_taking_its_locks_again():
    """The TMP file goes at restart; the prepared transaction's locks on it must not make the drop wait."""
    sm = new_sm(locking=LockManager())
    with sm.transaction() as t:
        tmp = sm.create_file(t, property="TMP")
        fid = sm.create_file(t)
    t = sm.begin()
    sm.create_rec(t, tmp, b"scratch")
    sm.create_rec(t, fid, b"kept")
    sm.prepare(t, b"g-tmp")
    done = []
    worker = threading.Thread(target=lambda: done.append(reopen(sm, "crash", locking=LockManager())), daemon=True)
    worker.start()
    worker.join(60)
    assert done, "restart waited for the prepared transaction's lock on the TMP file"
    sm = done[0]
    assert tmp not in sm.files.files() and [d.gtid for d in sm.in_doubt()] == [b"g-tmp"]
    sm.commit_prepared(b"g-tmp")
    assert tmp not in sm.contents() and bodies(sm, fid) == {b"kept"}
