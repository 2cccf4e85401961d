"""Milestone 3: undo. After redo, your ``undo()`` must roll every loser back, all together, newest entry
first, logging a CLR for each entry undone and an ``xct_end`` for each loser; a CLR's ``undo_nxt`` says where
its transaction's rollback goes on, so nothing is ever undone twice: not after a rollback to a savepoint,
and not after a crash during restart's own undo followed by another restart."""

from collections import Counter

import pytest

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode

from tests.pagestore.sm_helpers import entries, new_sm, open_again

WORDS = [b"alpha", b"bravo", b"charlie", b"delta"]


def losers_crashed(frames=8):
    """A file of four records, committed; two losers changing them (one rolled back to a savepoint part
    of the way), the log synced, a crash."""
    sm = new_sm(frames=frames)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, w) for w in WORDS]
    one, two = sm.begin(), sm.begin()
    sm.update_rec(one, rids[0], 0, b"ONE")
    sm.update_rec(two, rids[1], 0, b"TWO")
    save = sm.save_point(two)
    sm.update_rec(two, rids[2], 0, b"TWO")
    sm.create_rec(two, fid, b"new")
    sm.rollback_to(two, save)  # CLRs: their undo_nxt jumps back past what they undid
    sm.update_rec(one, rids[3], 0, b"ONE")
    sm.update_rec(two, rids[3], 2, b"two")
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    return sm.disk, fid, rids, (one.txn_id, two.txn_id)


def as_committed(sm, fid, rids):
    with sm.transaction() as t:
        assert [sm.read_rec(t, rid).body for rid in rids] == WORDS
        assert [r.rid for r in sm.scan(t, fid)] == rids


def compensated(sm):
    """How many CLRs point at each (transaction, undo_nxt): more than one is an entry undone twice."""
    return Counter((e.values["txn_id"], e.values["undo_nxt"]) for e in entries(sm)
                   if e.entry_type is not None and e.entry_type.compensation)


def test_undo_logs_a_clr_for_each_entry_undone_and_ends_each_loser():
    disk, fid, rids, losers = losers_crashed()
    sm = open_again(disk, frames=8, restart=False)
    sm.restart.analysis()
    sm.restart.redo()
    before = sm.log.end_lsn
    undo = sm.restart.undo()
    assert sm.restart.undo_result is undo and undo.losers == sorted(losers)
    order = [step.lsn for _, step in undo.steps]
    assert order == sorted(order, reverse=True)  # one backward sweep over both losers
    assert any(step.action == "jumped" for _, step in undo.steps)  # over the savepoint's CLRs
    logged = [e for e in entries(sm, start=before)]
    clrs = [e for e in logged if e.entry_type.compensation]
    assert len(clrs) >= undo.undone and set(undo.ended) == set(losers)
    ends = [e for e in logged if e.type_name == "xct_end"]
    assert sorted(e.values["txn_id"] for e in ends) == sorted(losers) and not any(e.values["committed"] for e in ends)
    assert all(count == 1 for count in compensated(sm).values())
    sm.restart.finish()
    as_committed(sm, fid, rids)


def test_a_crash_anywhere_in_restart_then_another_restart_undoes_nothing_twice():
    disk, fid, rids, losers = losers_crashed()
    counted = disk.clone("counted")
    open_again(counted, frames=8)  # the whole restart: how many writes, truncates and fsyncs it makes
    ops = sum(1 for e in counted.events if e.kind in ("write", "truncate", "fsync"))
    assert ops > 5
    for at in range(1, ops + 1):
        twin = disk.clone(f"crash-{at}")
        twin.schedule_crash(after_ops=at)
        with pytest.raises(SimulatedCrash):
            open_again(twin, frames=8)
        again = open_again(twin, frames=8)
        assert all(count == 1 for count in compensated(again).values()), f"crash after {at} of {ops} operations"
        as_committed(again, fid, rids)
        assert again.xcts.active() == []


def test_undo_rolls_back_all_losers_in_strictly_reverse_lsn_order():
    sm = new_sm(frames=8)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        base = sm.create_rec(t, fid, b"0123456789")
    losers = [sm.begin() for _ in range(3)]
    for step in range(4):
        for i, t in enumerate(losers):
            if (step + i) % 2:
                sm.create_rec(t, fid, bytes([step, i]))
            else:
                sm.update_rec(t, base, step + 3 * i % 7, bytes([i]))
    sm.abort(losers[1])  # an aborted one: already rolled back, not a loser
    sm.log.sync()
    sm.disk.crash(CrashMode.nothing())
    sm = open_again(sm.disk, frames=8)
    report = sm.restart_report
    assert report.undo.losers == [losers[0].txn_id, losers[2].txn_id]
    order = [step.lsn for _, step in report.undo.steps]
    assert order == sorted(order, reverse=True) and len(order) == 8
    with sm.transaction() as t:
        assert sm.read_rec(t, base).body == b"0123456789"
        assert [r.rid for r in sm.scan(t, fid)] == [base]
