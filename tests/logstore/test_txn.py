"""Transactions: abort LSNs, commit and abort entries, record locks, firstActiveLSN."""

import threading

import pytest

from minidb.errors import LogError
from minidb.io import CrashMode
from minidb.log import NULL_LSN
from minidb.logstore import AbortNotLoggedError, Durability, Environment, LockConflictError, TransactionStateError
from minidb.logstore.logdef import COMMIT
from minidb.logstore.txn.txn import TxnState

from tests.log.test_manager import GatedDisk
from tests.logstore.helpers import entries, fill, new_env, reopen, small_config


def test_transactional_lns_carry_the_abort_lsn():
    _, env = new_env()
    db = env.database("t")
    original = db.put("k", "original")
    txn = env.begin()
    first = db.put("k", "one", txn=txn)
    second = db.put("k", "two", txn=txn)
    db.put("new", "fresh", txn=txn)
    txn.commit()
    lns = entries(env, "LN_TX")
    assert [(e["key"], e["abort_lsn"], e["abort_known_deleted"]) for e in lns] == [
        (b"k", original, False), (b"k", original, False), (b"new", NULL_LSN, True),
    ]
    assert lns[0]["prev_lsn"] == original and lns[1]["prev_lsn"] == first
    assert [e.txn_prev_lsn for e in lns] == [NULL_LSN, first, second]
    commit = entries(env, "Commit")[-1]
    assert commit.txn_id == txn.id and commit.txn_prev_lsn == lns[-1].lsn


def test_abort_restores_every_record_to_its_abort_version():
    _, env = new_env()
    db = env.database("t")
    fill(db, 12)
    before = dict(db.items())
    txn = env.begin()
    db.put("key001", "changed", txn=txn)
    db.put("key001", "changed twice", txn=txn)
    db.delete("key002", txn=txn)
    db.put("key100", "inserted", txn=txn)
    db.delete("key100", txn=txn)
    db.put("key101", "inserted", txn=txn)
    assert db.get("key001", txn=txn) == b"changed twice" and db.get("key002", txn=txn) is None
    abort_lsn = txn.abort()
    assert dict(db.items()) == before
    assert env.log.read(abort_lsn).type_name == "Abort"
    # The Abort entry is logged before the undo; every undo happens while the txn is still registered.
    assert abort_lsn > entries(env, "LN_TX", "DEL_LN_TX")[-1].lsn


def test_the_transaction_stays_active_until_its_undo_is_done(monkeypatch):
    _, env = new_env()
    db = env.database("t")
    txn = env.begin()
    db.put("k", "v", txn=txn)
    seen = []
    restore = env.records.restore

    def watching(*args, **kw):
        seen.append((txn.id in env.txn_manager.active, env.txn_manager.first_active_lsn()))
        return restore(*args, **kw)

    monkeypatch.setattr(env.records, "restore", watching)
    txn.abort()
    assert seen == [(True, txn.first_lsn)]
    assert env.txn_manager.first_active_lsn() == NULL_LSN


def test_commit_is_durable_when_it_returns():
    disk, env = new_env()
    db = env.database("t")
    with env.begin() as txn:
        db.put("k", "committed", txn=txn)
    assert env.log.is_durable(txn.end_lsn)
    db.put("loose", "not synced")  # a write without a transaction is not synced
    env.crash(CrashMode.nothing())
    again = reopen(disk)
    db = again.database("t")
    assert db.get("k") == b"committed" and db.get("loose") is None


def test_no_sync_durability_leaves_the_commit_in_the_buffer():
    disk, env = new_env(durability=Durability.NO_SYNC)
    db = env.database("t")
    env.checkpoint()
    txn = env.begin()
    db.put("k", "v", txn=txn)
    lsn = txn.commit()
    assert not env.log.is_durable(lsn)
    env.crash(CrashMode.nothing())
    assert reopen(disk).database("t").get("k") is None


def test_context_manager_commits_or_aborts():
    _, env = new_env()
    db = env.database("t")
    with env.begin() as txn:
        db.put("a", "1", txn=txn)
    with pytest.raises(RuntimeError):
        with env.begin() as txn:
            db.put("b", "2", txn=txn)
            raise RuntimeError("boom")
    assert db.get("a") == b"1" and db.get("b") is None


def test_a_lock_conflict_changes_nothing():
    _, env = new_env(lock_timeout=0)  # no waiting: the conflict is an error at once
    db = env.database("t")
    db.put("k", "v")
    owner = env.begin()
    db.put("k", "owner's", txn=owner)
    end = env.log.end_lsn
    other = env.begin()
    for attempt in (lambda: db.put("k", "x", txn=other), lambda: db.delete("k", txn=other),
                    lambda: db.get("k", txn=other), lambda: db.put("k", "x"), lambda: db.get("k"),
                    lambda: db.delete("k")):
        with pytest.raises(LockConflictError, match=rf"locked by txn {owner.id}"):
            attempt()
    assert env.log.end_lsn == end
    assert env.locks.dump() == [f"db {db.id} key b'k': write-locked by txn {owner.id}"]
    assert db.get("k", txn=owner) == b"owner's"
    owner.commit()
    assert db.get("k", txn=other) == b"owner's"
    other.commit()
    assert len(env.locks) == 0


def test_first_active_lsn():
    _, env = new_env()
    db = env.database("t")
    assert env.txn_manager.first_active_lsn() == NULL_LSN
    t1, t2 = env.begin(), env.begin()
    assert env.txn_manager.first_active_lsn() == NULL_LSN  # nothing logged yet
    second = db.put("b", "2", txn=t2)
    first = db.put("a", "1", txn=t1)
    assert env.txn_manager.first_active_lsn() == second
    t2.commit()
    assert env.txn_manager.first_active_lsn() == first
    t1.abort()
    assert env.txn_manager.first_active_lsn() == NULL_LSN


def test_an_ended_transaction_cannot_be_used():
    _, env = new_env()
    db = env.database("t")
    txn = env.begin()
    db.put("k", "v", txn=txn)
    txn.commit()
    with pytest.raises(TransactionStateError, match="committed"):
        db.put("k", "again", txn=txn)
    with pytest.raises(TransactionStateError):
        txn.abort()


def test_a_read_only_transaction_logs_nothing():
    _, env = new_env()
    db = env.database("t")
    db.put("k", "v")
    end = env.log.end_lsn
    txn = env.begin()
    assert db.get("k", txn=txn) == b"v"
    assert txn.commit() == NULL_LSN
    assert env.log.end_lsn == end


def _full_disk(env, disk):
    disk.capacity = disk._state.total_size() + 100  # the log buffer cannot be written out any more


def _failed_log(env, disk):
    disk.fail_fsyncs(1)
    with pytest.raises(LogError, match="fsync of 00000001.jdb failed"):
        env.sync()  # the log is now failed: no more appends until it is reopened


@pytest.mark.parametrize("damage, cause", [(_full_disk, "disk full"), (_failed_log, "the log must be reopened")])
def test_item9_an_abort_that_cannot_be_logged_still_releases_the_locks(damage, cause):
    disk, env = new_env("abort", buffer_size=64)
    db = env.database("a")
    db.put("k", "old")
    env.sync()
    txn = env.begin()
    db.put("k", "new", txn=txn)
    db.put("j", "x" * 200, txn=txn)  # in the log buffer, not on the disk
    damage(env, disk)
    with pytest.raises(AbortNotLoggedError) as caught:
        txn.abort()
    message = str(caught.value)
    assert message.startswith(f"txn {txn.id} in sim:abort: its Abort could not be logged (")
    assert cause in message and "undone in memory and its locks released" in message
    assert txn.state is TxnState.ABORTED and env.txn_manager.active == {} and len(env.locks) == 0
    assert db.get("k") == b"old" and db.get("j") is None  # readable: no LockConflictError
    assert dict(db.items()) == {b"k": b"old"}
    env.crash()
    disk.capacity = None
    env = reopen(disk)
    assert dict(env.database("a").items()) == {b"k": b"old"}  # recovery undoes it as well
    env.close()


def test_commits_wait_for_their_fsync_outside_the_environment_latch_and_share_one():
    disk = GatedDisk()
    env = Environment.open(disk, small_config())
    db = env.database("t")
    txns = [env.begin() for _ in range(3)]
    for i, txn in enumerate(txns):
        db.put(f"k{i}", "v", txn=txn)
    logged = threading.Semaphore(0)
    env.log.add_listener(lambda lsn, entry_type, vlsn: entry_type is COMMIT and logged.release())
    disk.gated = True
    fsyncs = env.log.stats["nFsyncs"]
    threads = [threading.Thread(target=txn.commit) for txn in txns]
    threads[0].start()
    assert disk.in_fsync.wait(5)  # the first commit's fsync is under way ...
    assert logged.acquire(timeout=5) and txns[0].state is TxnState.COMMITTING
    for thread in threads[1:]:
        thread.start()  # ... and the others log their Commits meanwhile: the latch is free
    assert logged.acquire(timeout=5) and logged.acquire(timeout=5), "a commit held the environment latch"
    disk.gate.set()
    for thread in threads:
        thread.join(5)
        assert not thread.is_alive()
    assert [t.state for t in txns] == [TxnState.COMMITTED] * 3
    assert env.log.stats["nFsyncs"] == fsyncs + 2  # the later two shared one fsync
    assert all(env.log.is_durable(t.end_lsn) for t in txns)
    with pytest.raises(TransactionStateError):
        txns[0].commit()
