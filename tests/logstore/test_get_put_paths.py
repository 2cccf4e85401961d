"""Gets and puts take short cuts; these tests check them against the plain steps.

The short cuts (see ``docs/ARCHITECTURE.md``, "Gets and puts"): ``Tree.search`` walks the
resident nodes in one loop (``Tree.search_by_steps`` is the reference), a lock look-up is
skipped while no transaction holds a lock, and ``after_operation`` calls the evictor and the
checkpointer only when one of them has something to do. A seeded workload of puts, deletes,
transactions and gets, with a small node budget and checkpoints by log growth, must give the
same answers as a dict, keep the cache within its budget, and write the same log bytes and make
the same evictions whichever way the tree is searched.
"""

from __future__ import annotations

import random

import pytest

from minidb.logstore import LockConflictError
from minidb.logstore.tree.tree import Tree
from tests.logstore.helpers import new_env

BUDGET = 14
INTERVAL = 6_000  # checkpoint_bytes_interval: a checkpoint every few dozen operations


def run_workload(seed: int, checks: bool = True):
    """Seeded operations on one database; returns what a second run must reproduce exactly."""
    disk, env = new_env(f"paths{seed}", node_budget=BUDGET, checkpoint_bytes_interval=INTERVAL)
    db = env.database("t")
    tree = db.impl.tree
    rng = random.Random(seed)
    model: dict[bytes, bytes] = {}
    answers = []
    checkpoints = 0
    for step in range(500):
        key = f"k{rng.randrange(120):04d}".encode()
        value = f"v{step}".encode() * rng.randint(1, 4)
        roll = rng.random()
        if roll < 0.45:
            db.put(key, value)
            model[key] = value
        elif roll < 0.55:
            db.delete(key)
            model.pop(key, None)
        elif roll < 0.65:
            with env.begin() as txn:
                db.put(key, value, txn=txn)
                other = f"k{rng.randrange(120):04d}".encode()
                db.delete(other, txn=txn)
            model[key] = value
            model.pop(other, None)
        else:
            got = db.get(key)
            answers.append(got)
            assert got == model.get(key), f"step {step}: get {key!r}"
        if checks:
            # Within the budget after every operation, unless a checkpoint that ran after the eviction
            # fetched nodes (the _utilization tree's BINs) or nothing could be evicted.
            evictor = env.evictor
            over = evictor.resident_count() > BUDGET and any(map(evictor.is_evictable, evictor.resident_nodes()))
            checkpoints, before = env.checkpointer.stats["nCheckpoints"], checkpoints
            assert not over or checkpoints > before, f"step {step}: the cache is over its budget"
            if roll < 0.65:  # a read starts no checkpoint (the log may grow by the dirty nodes it evicts)
                assert env.checkpointer.bytes_since_last_end() < INTERVAL, f"step {step}: no checkpoint by log growth"
        if step % 25 == 0:  # in both runs: a search touches the INList
            for probe in (b"", b"a", b"k0000", key, b"k0060x", b"z"):
                assert tree.search(probe) is tree.search_by_steps(probe), f"step {step}: search {probe!r}"
    assert env.checkpointer.stats["nCheckpoints"] > 2 and env.evictor.stats["nNodesEvicted"] > 20
    assert list(db.items()) == sorted(model.items())
    env.close()
    files = {name: disk.open(name).read(0, disk.size(name)) for name in sorted(disk.list())}
    return answers, list(env.evictor.history), env.stats.as_dict(), files


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_search_agrees_with_the_plain_steps(seed, monkeypatch):
    fast = run_workload(seed)
    monkeypatch.setattr(Tree, "search", Tree.search_by_steps)
    plain = run_workload(seed, checks=False)
    assert fast[0] == plain[0]  # the same answers
    assert fast[1] == plain[1]  # the same evictions, in the same order (the INList is touched alike)
    assert fast[2] == plain[2]  # the same counters
    assert fast[3] == plain[3]  # the same bytes in every file


def test_search_below_every_key_and_of_missing_keys():
    _, env = new_env()
    db = env.database("t")
    for i in range(40):
        db.put(f"m{i:03d}".encode(), b"x")
    tree = db.impl.tree
    for probe in (b"", b"a", b"m", b"m0205", b"m0395", b"m040", b"\xff"):
        assert tree.search(probe) is tree.search_by_steps(probe)
        assert db.get(probe) is None
    env.close()


def test_keys_and_data_of_other_types_take_the_careful_path():
    _, env = new_env()
    db = env.database("t")

    class Key(bytes):
        pass

    db.put(bytearray(b"a"), memoryview(b"1"))
    db.put("b", "2")
    db.put(Key(b"c"), b"3")
    assert [db.get(b"a"), db.get("b"), db.get(Key(b"c")), db.get(bytearray(b"c"))] == [b"1", b"2", b"3", b"3"]
    assert all(type(key) is bytes and type(data) is bytes for key, data in db.items())
    env.close()


def test_a_lock_is_looked_up_once_a_transaction_holds_one():
    _, env = new_env()
    db = env.database("t")
    db.put(b"a", b"1")
    assert db.get(b"a") == b"1"  # no lock held: nothing to look up
    txn = env.begin()
    db.put(b"a", b"2", txn=txn)
    with pytest.raises(LockConflictError):
        db.get(b"a")
    with pytest.raises(LockConflictError):
        db.put(b"a", b"3")
    assert db.get(b"a", txn=txn) == b"2"
    txn.commit()
    assert db.get(b"a") == b"2"
    env.close()
