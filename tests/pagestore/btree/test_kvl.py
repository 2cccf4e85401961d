"""Key-value locking (ARIES/KVL) in the B+tree: the locks each operation holds, and transactions in threads.

Each scenario runs its transactions in threads of their own through the lock
manager's ``Interleaving``: a step runs until it is done or blocked in the
lock manager, so the order of events is the script's, without sleeps.
"""

import random
import threading

import pytest

from minidb.pagestore import check_tree
from minidb.pagestore.btree import DuplicateKeyError, KeyedPage, KeyNotFoundError
from minidb.pagestore.lock import DeadlockVictim, Interleaving, LockManager, LockTimeout

from tests.pagestore.sm_helpers import new_sm


def locked_index(keys=(10, 20, 30), unique=True, **options):
    lm = LockManager(escalation_threshold=None)
    sm = new_sm(locking=lm, **options)
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4", unique=unique)
        for k in keys:
            sm.index_insert(t, ix, k, b"v%d" % k)
    return sm, lm, ix


def held(sm, lm, t):
    """The locks ``t`` holds, as the lock table prints them (the index's store written S)."""
    (ix,) = sm.indexes.indexes()
    return {sm.indexes.lock_name(lock_id).replace(f"{ix.vol}.{ix.store}", "S"): mode.name
            for lock_id, mode in lm.held(t).items()}


def keys_of(sm, ix):
    return [k for k, _ in sm.indexes.entries(ix)]


READ, WRITE = {"v(1)": "IS", "s(S)": "IS"}, {"v(1)": "IX", "s(S)": "IX"}


@pytest.mark.parametrize("op, locks", [
    (lambda sm, t, ix: sm.index_lookup(t, ix, 20), {**READ, "k(S.20)": "SH"}),
    (lambda sm, t, ix: sm.index_lookup(t, ix, 25), {**READ, "k(S.30)": "SH"}),  # absent: the next key
    (lambda sm, t, ix: sm.index_lookup(t, ix, 40), {**READ, "k(S.EOF)": "SH"}),
    (lambda sm, t, ix: list(sm.index_scan(t, ix, 15, 25)), {**READ, "k(S.20)": "SH", "k(S.30)": "SH"}),
    (lambda sm, t, ix: list(sm.index_scan(t, ix, 15, 25, backward=True)),
     {**READ, "k(S.20)": "SH", "k(S.30)": "SH"}),
    (lambda sm, t, ix: list(sm.index_scan(t, ix, 15, 30, hi_incl=False)),
     {**READ, "k(S.20)": "SH", "k(S.30)": "SH"}),
    (lambda sm, t, ix: list(sm.index_scan(t, ix, 25)), {**READ, "k(S.30)": "SH", "k(S.EOF)": "SH"}),
    (lambda sm, t, ix: sm.index_insert(t, ix, 25, b"x"), {**WRITE, "k(S.25)": "EX"}),  # IX on 30: instant
    (lambda sm, t, ix: sm.index_insert(t, ix, 40, b"x"), {**WRITE, "k(S.40)": "EX"}),
    (lambda sm, t, ix: sm.index_remove(t, ix, 20), {**WRITE, "k(S.20)": "EX", "k(S.30)": "EX"}),
    (lambda sm, t, ix: sm.index_remove(t, ix, 30), {**WRITE, "k(S.30)": "EX", "k(S.EOF)": "EX"}),
    (lambda sm, t, ix: sm.index_update(t, ix, 20, b"new"), {**WRITE, "k(S.20)": "EX", "k(S.30)": "EX"}),
], ids=["lookup", "lookup-absent", "lookup-past-end", "scan", "scan-backward", "scan-exclusive", "scan-to-end",
        "insert", "insert-last", "remove", "remove-last", "update"])
def test_each_operation_holds_its_key_value_locks_until_commit(op, locks):
    sm, lm, ix = locked_index()
    t = sm.begin()
    op(sm, t, ix)
    assert held(sm, lm, t) == locks
    sm.commit(t)
    assert lm.held(t) == {}


def test_a_failed_insert_or_remove_locks_what_it_saw():
    """A duplicate stays there and an absent key stays absent until the transaction ends."""
    sm, lm, ix = locked_index()
    t = sm.begin()
    with pytest.raises(DuplicateKeyError):
        sm.index_insert(t, ix, 20, b"again")
    with pytest.raises(KeyNotFoundError):
        sm.index_remove(t, ix, 25)
    assert held(sm, lm, t) == {**WRITE, "k(S.20)": "SH", "k(S.30)": "SH"}
    sm.commit(t)


def test_a_non_unique_index_locks_key_and_element():
    sm, lm, ix = locked_index(keys=(), unique=False)
    with sm.transaction() as t:
        for el in (b"a", b"b"):
            sm.index_insert(t, ix, 7, el)
        sm.index_insert(t, ix, 9, b"c")
    t = sm.begin()
    assert sm.index_lookup(t, ix, 7) == [b"a", b"b"]
    assert held(sm, lm, t) == {**READ, "k(S.7,b'a')": "SH", "k(S.7,b'b')": "SH", "k(S.9,b'c')": "SH"}
    sm.index_insert(t, ix, 7, b"ab")
    assert held(sm, lm, t)["k(S.7,b'ab')"] == "EX"
    assert f"k({ix.vol}.{ix.store}.7,b'ab')  EX" in sm.lock_table()
    sm.commit(t)


@pytest.mark.parametrize("key", [12, 18])  # next key 15, returned by the scan; next key 25, past its end
def test_an_insert_into_a_scanned_range_waits_for_the_scanner_no_phantom(key):
    sm, lm, ix = locked_index(keys=(10, 15, 25))
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        first = script.run(t1, "scan", lambda: list(sm.index_scan(t1, ix, 10, 20)))
        insert = script.run(t2, f"insert {key}", lambda: sm.index_insert(t2, ix, key, b"new"))
        assert insert.status == "blocked"  # on T1's SH lock of the next key, with no latch held:
        again = script.run(t1, "scan again", lambda: list(sm.index_scan(t1, ix, 10, 20)))
        assert again.result == first.result == [(10, b"v10"), (15, b"v15")]
        script.run(t1, "commit", lambda: sm.commit(t1))
        assert insert.status == "done"
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert keys_of(sm, ix) == sorted([10, 15, 25, key])


def test_a_scan_guards_the_gap_to_the_next_leaf_before_it_leaves_a_leaf():
    """T1 has taken the first leaf's entries of a scan, not yet the next leaf's: an insert between the two
    leaves must wait all the same (its next key, the next leaf's first, is locked already)."""
    sm, lm, ix = locked_index(keys=())
    with sm.transaction() as t:
        for k in range(0, 60, 2):
            sm.index_insert(t, ix, k, b"e" * 40)
    tree = sm.indexes.index(ix).tree(sm.volume)
    page, _ = tree.descend(b"")
    first_leaf = [KeyedPage(page).leaf(i)[0] for i in range(KeyedPage(page).count)]
    sm.bp.unfix(page)
    gap = sm.indexes.index(ix).desc.decode(first_leaf[-1]) + 1
    t1, t2 = sm.begin(), sm.begin()
    scan = sm.index_scan(t1, ix)
    with Interleaving(lm) as script:
        script.run(t1, "first leaf", lambda: [next(scan) for _ in first_leaf])
        insert = script.run(t2, f"insert {gap}", lambda: sm.index_insert(t2, ix, gap, b"t2"))
        assert insert.status == "blocked"
        rest = script.run(t1, "the rest", lambda: list(scan))
        assert gap not in [k for k, _ in rest.result]
        script.run(t1, "commit", lambda: sm.commit(t1))
        assert insert.status == "done"
        script.run(t2, "commit", lambda: sm.commit(t2))


def test_an_insert_past_the_last_key_waits_on_the_end_of_index_lock():
    sm, lm, ix = locked_index(keys=(10, 20))
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "scan to the end", lambda: list(sm.index_scan(t1, ix, 15)))
        insert = script.run(t2, "insert 30", lambda: sm.index_insert(t2, ix, 30, b"new"))
        assert insert.status == "blocked" and str(lm.waiting_on(t2)) == f"k({ix.vol}.{ix.store}.EOF)"
        assert script.run(t1, "scan again", lambda: list(sm.index_scan(t1, ix, 15))).result == [(20, b"v20")]
        script.run(t1, "commit", lambda: sm.commit(t1))
        assert insert.status == "done"
        script.run(t2, "commit", lambda: sm.commit(t2))
    assert keys_of(sm, ix) == [10, 20, 30]


def increment(sm, t, ix, key):
    """Read the counter under ``key``, write it back one higher."""
    value = int(sm.index_lookup(t, ix, key)[0])
    sm.index_update(t, ix, key, b"%d" % (value + 1))


def test_two_transactions_updating_one_key_lose_no_update():
    """Both read the counter, then both write it: one waits, the other is the deadlock's victim and retries."""
    sm, lm, ix = locked_index(keys=())
    with sm.transaction() as t:
        sm.index_insert(t, ix, 1, b"0")
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "read", lambda: sm.index_lookup(t1, ix, 1))
        script.run(t2, "read", lambda: sm.index_lookup(t2, ix, 1))
        write1 = script.run(t1, "write", lambda: sm.index_update(t1, ix, 1, b"1"))
        write2 = script.run(t2, "write", lambda: sm.index_update(t2, ix, 1, b"1"))
        assert isinstance(write2.error, DeadlockVictim) and write1.status == "blocked"
        script.run(t2, "abort", lambda: sm.abort(t2))
        assert write1.status == "done"
        script.run(t1, "commit", lambda: sm.commit(t1))
        t3 = sm.begin()  # T2 again
        script.run(t3, "increment", lambda: increment(sm, t3, ix, 1))
        script.run(t3, "commit", lambda: sm.commit(t3))
    assert sm.indexes.entries(ix) == [(1, b"2")]


def test_a_deadlock_on_two_keys_rolls_the_victim_back_logically():
    sm, lm, ix = locked_index(keys=(10, 20, 30))
    t1, t2 = sm.begin(), sm.begin()
    with Interleaving(lm) as script:
        script.run(t1, "insert 5", lambda: sm.index_insert(t1, ix, 5, b"t1"))
        script.run(t2, "insert 50", lambda: sm.index_insert(t2, ix, 50, b"t2"))
        script.run(t2, "remove 20", lambda: sm.index_remove(t2, ix, 20))
        waiting = script.run(t1, "lookup 50", lambda: sm.index_lookup(t1, ix, 50))
        victim = script.run(t2, "lookup 5", lambda: sm.index_lookup(t2, ix, 5))
        assert waiting.status == "blocked" and isinstance(victim.error, DeadlockVictim)  # T2, the younger
        steps = script.run(t2, "abort", lambda: sm.abort(t2)).result
        assert [s.type_name for s in steps] == ["btree_remove", "btree_insert"]
        assert waiting.status == "done" and waiting.result == []  # T2's insert is undone
        script.run(t1, "commit", lambda: sm.commit(t1))
    assert keys_of(sm, ix) == [5, 10, 20, 30] and sm.indexes.check(ix) == []


@pytest.mark.parametrize("what", ["insert the key", "insert into the gap", "scan over it"])
def test_a_removed_key_stays_locked_until_the_remover_ends(what):
    """T1 removes 20 (EX on 20 and on the next key, 30); T2 waits; T1 rolls back and re-inserts 20."""
    sm, lm, ix = locked_index()
    t1, t2 = sm.begin(), sm.begin()
    action = {"insert the key": lambda: sm.index_insert(t2, ix, 20, b"t2"),
              "insert into the gap": lambda: sm.index_insert(t2, ix, 25, b"t2"),
              "scan over it": lambda: list(sm.index_scan(t2, ix, 15, 25))}[what]
    with Interleaving(lm) as script:
        script.run(t1, "remove 20", lambda: sm.index_remove(t1, ix, 20))
        other = script.run(t2, what, action)
        assert other.status == "blocked"
        script.run(t1, "abort", lambda: sm.abort(t1))
        assert other.finished
        script.run(t2, "commit", lambda: sm.commit(t2))
    if what == "insert the key":
        assert isinstance(other.error, DuplicateKeyError)  # 20 is back, T1's
    elif what == "scan over it":
        assert other.result == [(20, b"v20")]
    assert keys_of(sm, ix) == ([10, 20, 25, 30] if what == "insert into the gap" else [10, 20, 30])


def test_a_lock_timeout_leaves_the_index_as_it_was():
    """With a lock timeout of 0 the waiting request fails at once; the operation changes nothing."""
    sm, lm, ix = locked_index()
    sm.indexes.lock_timeout = 0
    t1, t2 = sm.begin(), sm.begin()
    list(sm.index_scan(t1, ix, 10, 20))
    with pytest.raises(LockTimeout):
        sm.index_insert(t2, ix, 15, b"t2")
    sm.index_insert(t2, ix, 35, b"t2")  # no latch was left held
    sm.commit(t2)
    sm.commit(t1)
    assert keys_of(sm, ix) == [10, 20, 30, 35]


# -- a seeded randomized stress ------------------------------------------------------------------------------
THREADS, TXNS, OPS, KEYS = 4, 12, 5, 40


def test_threads_inserting_removing_and_scanning_agree_with_a_model():
    """Threads run short transactions of inserts, removes and repeated scans on a small key space; some
    abort, deadlock victims retry. Each scan seen twice in a transaction is the same (no phantom), and the
    final index holds exactly the entries of the committed transactions, soundly structured."""
    sm, lm, ix = locked_index(keys=range(0, KEYS, 3), num_pages=512, frames=48)
    model = {k: b"v%d" % k for k in range(0, KEYS, 3)}
    model_lock = threading.Lock()
    errors: list[BaseException] = []
    counts = {"victims": 0, "commits": 0}

    def transaction(rng, ops):
        t = sm.begin()
        writes = {}
        try:
            for op, key, arg in ops:
                if op == "insert":
                    try:
                        sm.index_insert(t, ix, key, arg)
                        writes[key] = arg
                    except DuplicateKeyError:
                        pass
                elif op == "remove":
                    try:
                        sm.index_remove(t, ix, key)
                        writes[key] = None
                    except KeyNotFoundError:
                        pass
                else:
                    first = list(sm.index_scan(t, ix, key, arg, backward=rng.random() < 0.5))
                    again = list(sm.index_scan(t, ix, key, arg))
                    assert sorted(first) == again, f"T{t.txn_id} scanned {first}, then {again}"
        except DeadlockVictim:
            sm.abort(t)
            return False
        except BaseException:
            sm.abort(t)  # its locks must not keep the other threads waiting
            raise
        if rng.random() < 0.2:
            sm.abort(t)
        else:
            with model_lock:  # while T still holds its locks: no one else has written these keys
                for key, el in writes.items():
                    if el is None:
                        model.pop(key, None)
                    else:
                        model[key] = el
                counts["commits"] += 1
            sm.commit(t, durable=False)
        return True

    def worker(n):
        rng = random.Random(1000 + n)
        try:
            for _ in range(TXNS):
                ops = []
                for _ in range(OPS):
                    op, key = rng.choice(["insert", "insert", "remove", "scan"]), rng.randrange(KEYS)
                    ops.append((op, key, key + rng.randrange(1, 8) if op == "scan" else b"t%d" % n * 5))
                while not transaction(rng, ops):
                    with model_lock:
                        counts["victims"] += 1
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck"
    assert errors == []
    assert counts["commits"] > THREADS * TXNS // 2
    problems, found = check_tree(sm.bp, sm.indexes.index(ix).root, True)
    assert problems == []
    assert sm.indexes.entries(ix) == sorted(model.items())
