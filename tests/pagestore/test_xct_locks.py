"""Transactions with Shore's lock manager: conflicts block, deadlock victims abort and roll back with CLRs.

Each transaction runs in its own thread through the lock manager's
``Interleaving``: a step runs until it is done or blocked, deterministically,
without sleeps.
"""

import pytest

from minidb.pagestore.lock import BadLockRequest, DeadlockVictim, Interleaving, LockId, LockManager, LockMode
from minidb.pagestore.transactions.locking import ShoreLocking

from tests.pagestore.sm_helpers import new_sm


def locked_sm(**options):
    lm = LockManager(escalation_threshold=None)
    sm = new_sm(locking=lm, **options)
    assert isinstance(sm.xcts.locks, ShoreLocking)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rids = [sm.create_rec(t, fid, f"record {i}".encode()) for i in range(3)]
    return sm, lm, fid, rids


def test_an_update_takes_an_ex_record_lock_and_its_parents_until_commit():
    sm, lm, fid, rids = locked_sm()
    t = sm.begin()
    sm.update_rec(t, rids[0], 0, b"R")
    held = {str(lock_id): mode for lock_id, mode in lm.held(t).items()}
    assert held == {"v(1)": LockMode.IX, "s(1.3)": LockMode.IX, str(rids[0].pid): LockMode.IX,
                    str(rids[0]): LockMode.EX}
    sm.read_rec(t, rids[1])
    assert lm.held(t)[LockId.record(rids[1])] == LockMode.SH
    sm.commit(t)
    assert lm.held(t) == {}


def test_two_transactions_conflicting_on_a_record_block_until_the_first_commits():
    sm, lm, fid, rids = locked_sm()
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "update", lambda: sm.update_rec(t1, rids[0], 0, b"T1"))
        reader = script.run(t2, "read", lambda: sm.read_rec(t2, rids[0]))
        writer_blocked = reader.status
        script.run(t1, "commit", lambda: sm.commit(t1))
        assert writer_blocked == "blocked" and reader.status == "done"
        assert reader.result.body == b"T1cord 0"  # T1's committed bytes, never its uncommitted ones
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert any("blocked" in line for line in script.log)


def test_the_deadlock_victim_aborts_and_rolls_back_with_clrs():
    sm, lm, fid, rids = locked_sm()
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "update r0", lambda: sm.update_rec(t1, rids[0], 0, b"T1"))
        script.run(t2, "update r1", lambda: sm.update_rec(t2, rids[1], 0, b"T2"))
        script.run(t2, "create", lambda: sm.create_rec(t2, fid, b"T2's new record"))
        waiting = script.run(t1, "update r1", lambda: sm.update_rec(t1, rids[1], 0, b"T1"))
        victim = script.run(t2, "update r0", lambda: sm.update_rec(t2, rids[0], 0, b"T2"))
        assert waiting.status == "blocked"
        assert victim.status == "raised" and isinstance(victim.error, DeadlockVictim)  # T2 is the younger
        steps = script.run(t2, "abort", lambda: sm.abort(t2)).result
        assert [s.type_name for s in steps] == ["rec_insert", "rec_splice"]
        assert waiting.status == "done"  # T2's locks are gone: T1's update went through
        script.run(t1, "commit", lambda: sm.commit(t1))
    clrs = [e.type_name for e in sm.log.scan() if e.txn_id == t2.txn_id and e.entry_type.compensation]
    assert clrs == ["clr_rec_insert", "clr_rec_splice"]
    assert {rid: body for rid, (_, body) in sm.contents()[fid].items()} == {
        rids[0]: b"T1cord 0", rids[1]: b"T1cord 1", rids[2]: b"record 2"}


def test_a_slot_locked_by_another_transaction_is_not_taken():
    """T1 creates a record, then rolls the creation back: the slot is free, but T1 still holds its lock."""
    sm, lm, fid, rids = locked_sm()
    t1 = sm.begin()
    point = sm.save_point(t1)
    mine = sm.create_rec(t1, fid, b"t1")
    sm.rollback_to(t1, point)
    t2 = sm.begin()
    theirs = sm.create_rec(t2, fid, b"t2")
    assert theirs != mine and lm.held(t1)[LockId.record(mine)] == LockMode.EX
    sm.commit(t2)
    sm.commit(t1)


def test_destroying_a_file_waits_for_the_transactions_using_it():
    sm, lm, fid, rids = locked_sm()
    user, destroyer = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(user, "update", lambda: sm.update_rec(user, rids[2], 0, b"U"))
        destroy = script.run(destroyer, "destroy", lambda: sm.destroy_file(destroyer, fid))
        assert destroy.status == "blocked"
        script.run(user, "commit", lambda: sm.commit(user))
        assert destroy.status == "done"
        script.run(destroyer, "commit", lambda: sm.commit(destroyer))
    assert sm.files.files() == [] and sm.check() == []


def test_a_lock_manager_can_be_given_directly_or_through_the_policy():
    lm = LockManager()
    assert new_sm(locking=lm).xcts.locks.manager is lm
    policy = ShoreLocking(lm)
    assert new_sm(locking=policy).xcts.locks is policy
    with pytest.raises(BadLockRequest, match="not a lock mode: 'XX'"):
        policy.lock(new_sm().begin(), rid_of(), "XX")


def rid_of():
    from minidb.pagestore import RecordId

    return RecordId(1, 3, 16, 0)
