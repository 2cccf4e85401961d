"""Gets and puts: the answers of a dict, the cache within its budget, checkpoints only by writes.

``after_operation`` calls the evictor and the checkpointer only when one of them has something to
do. A seeded workload of puts, deletes, transactions and gets, with a small node budget and
checkpoints by log growth, must give the same answers as a dict, keep the cache within its budget,
and start no checkpoint on a read. (The twins of the tree's search, the handle's checks and the lock
table are held to the reference by ``tests/agreement/scn_logstore.py``.)
"""

from __future__ import annotations

import random

import pytest

from minidb.logstore import LockConflictError

from tests.logstore.helpers import new_env

BUDGET = 14
INTERVAL = 6_000  # checkpoint_bytes_interval: a checkpoint every few dozen operations


def run_workload(seed: int) -> None:
    """Seeded operations on one database, checked after each."""
    _, env = new_env(f"paths{seed}", node_budget=BUDGET, checkpoint_bytes_interval=INTERVAL)
    db = env.database("t")
    rng = random.Random(seed)
    model: dict[bytes, bytes] = {}
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
            assert got == model.get(key), f"step {step}: get {key!r}"
        # Within the budget after every operation, unless a checkpoint that ran after the eviction
        # fetched nodes (the _utilization tree's BINs) or nothing could be evicted.
        evictor = env.evictor
        over = evictor.resident_count() > BUDGET and any(map(evictor.is_evictable, evictor.resident_nodes()))
        checkpoints, before = env.checkpointer.stats["nCheckpoints"], checkpoints
        assert not over or checkpoints > before, f"step {step}: the cache is over its budget"
        if roll < 0.65:  # a read starts no checkpoint (the log may grow by the dirty nodes it evicts)
            assert env.checkpointer.bytes_since_last_end() < INTERVAL, f"step {step}: no checkpoint by log growth"
    assert env.checkpointer.stats["nCheckpoints"] > 2 and env.evictor.stats["nNodesEvicted"] > 20
    assert list(db.items()) == sorted(model.items())
    env.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_gets_and_puts_answer_as_a_dict_within_the_budget(seed):
    run_workload(seed)


def test_search_below_every_key_and_of_missing_keys():
    _, env = new_env()
    db = env.database("t")
    for i in range(40):
        db.put(f"m{i:03d}".encode(), b"x")
    tree = db.impl.tree
    for probe in (b"", b"a", b"m", b"m0205", b"m0395", b"m040", b"\xff"):
        found = tree.search(probe)
        assert found.id_key <= probe or found.id_key == b"", (probe, found.describe())
        assert found.high_key is None or probe < found.high_key, (probe, found.describe())
        assert db.get(probe) is None
    env.close()


def test_keys_and_data_of_other_types_are_taken_as_bytes():
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


def test_a_record_a_transaction_holds_is_refused_to_others():
    _, env = new_env()
    db = env.database("t")
    db.put(b"a", b"1")
    assert db.get(b"a") == b"1"  # no lock held
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
