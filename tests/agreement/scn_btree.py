"""The page store's B+trees: inserts, lookups, removes, updates and scans in three indexes, some rolled
back, a crash with a transaction in flight, and the restart after it.

What the tree's twin could get wrong shows up here: a search that finds
another position than the reference's (an entry logged at another slot, a
wrong answer), a lookup, insert or remove that takes other key-value locks
or takes them in another order (the lock table dumped after each
transaction's last step differs), a descent that fixes other pages (the
pool is small, so which page is evicted and written when changes the disk's
events). Keys are few and pages small (512 bytes), so duplicates, absent
keys, leaf splits and the root growing all happen; the index of bytes keys
holds keys of different lengths, zero bytes (escaped in the encoded key)
and keys that are prefixes of others. The index's descriptor
remembered across a rollback is also exercised: an index created in a
transaction that aborts, and one destroyed in a rollback to a save point.
"""

from __future__ import annotations

import random
from typing import Any

from minidb.errors import MinidbError
from minidb.io import CrashMode
from minidb.pagestore.lock import LockManager
from minidb.pagestore.sm import StorageManager

from tests.agreement.scenarios import disk_state, scenario
from tests.pagestore.sm_helpers import OPTIONS, new_sm

TREE = "pagestore.btree.btree.Tree"
INDEX_MANAGER = "pagestore.btree.index.IndexManager"
NUM_PAGES, FRAMES = 160, 24  # the pool holds a part of the volume: pages are evicted and written
BYTES_INDEXES: set = set()  # the scenario's index of bytes keys (the others' keys are i4)


def as_bytes(n: int) -> bytes:
    """A bytes key for number ``n``: one to three bytes, zeros among them, some a prefix of others."""
    return str(n).encode().replace(b"1", b"\x00")


def step(sm: StorageManager, rng: random.Random, t: Any, ix: Any, unique: bool, answers: list) -> None:
    """One seeded operation on ``ix`` (keys of the bytes index made by :func:`as_bytes`), its answer (or its
    error's name) appended to ``answers``."""
    key = rng.randrange(200)
    el = bytes([rng.randrange(256)]) * rng.randrange(1, 30)
    what = rng.choice(["insert", "insert", "insert", "lookup", "remove", "update", "scan"])
    key_of = as_bytes if ix in BYTES_INDEXES else int
    try:
        if what == "insert":
            answers.append((what, key, sm.index_insert(t, ix, key_of(key), el)))
        elif what == "lookup":
            answers.append((what, key, sm.index_lookup(t, ix, key_of(key))))
        elif what == "remove":
            found = sm.index_lookup(t, ix, key_of(key))
            old = None if unique or not found else found[0]
            answers.append((what, key, sm.index_remove(t, ix, key_of(key), old)))
        elif what == "update":
            found = sm.index_lookup(t, ix, key_of(key))
            old = None if unique or not found else found[0]
            answers.append((what, key, sm.index_update(t, ix, key_of(key), el, old)))
        else:
            lo, hi = sorted([key_of(key), key_of(key + rng.randrange(40))])
            answers.append((what, key, list(sm.index_scan(t, ix, lo, hi, backward=rng.random() < 0.3))))
    except MinidbError as e:
        answers.append((what, key, type(e).__name__))


def contents(sm: StorageManager, indexes: list) -> list:
    return [sm.indexes.entries(ix) for ix, _ in indexes]


@scenario(TREE, INDEX_MANAGER)
def indexes_rollbacks_crash_and_restart(seed: int) -> dict[str, Any]:
    """Seeded transactions on a unique and a non-unique index of i4 keys and a unique one of bytes (some
    aborted, some rolled back in part), an index created and aborted, one destroyed and brought back, a loser
    at the crash, the restart, more."""
    rng = random.Random(seed)
    locks = LockManager(escalation_threshold=None)
    sm = new_sm(f"btree{seed}", num_pages=NUM_PAGES, frames=FRAMES, locking=locks)
    with sm.transaction() as t:
        indexes = [(sm.create_index(t, "i4"), True), (sm.create_index(t, "i4", unique=False), False),
                   (sm.create_index(t, "bytes"), True)]
    BYTES_INDEXES.clear()
    BYTES_INDEXES.add(indexes[2][0])
    answers: list = []
    for n in range(30):
        t = sm.begin()
        for _ in range(rng.randrange(1, 8)):
            ix, unique = rng.choice(indexes)
            step(sm, rng, t, ix, unique, answers)
        if n % 7 == 3:  # an index destroyed, then the destroy rolled back: the same index, read again
            point = sm.save_point(t)
            sm.destroy_index(t, indexes[0][0])
            step(sm, rng, t, indexes[0][0], True, answers)
            sm.rollback_to(t, point)
            step(sm, rng, t, indexes[0][0], True, answers)
        if n % 9 == 4:  # an index created in a transaction that aborts
            gone = sm.create_index(t, "i4")
            step(sm, rng, t, gone, True, answers)
        answers.append(locks.dump(sm.indexes.lock_name))
        if rng.random() < 0.25 or n % 9 == 4:
            sm.abort(t)
            if n % 9 == 4:
                with sm.transaction() as t2:
                    step(sm, rng, t2, gone, True, answers)
        else:
            sm.commit(t, durable=rng.random() < 0.3)
    answers.append(contents(sm, indexes))
    counters = {"xct": sm.xcts.stats.as_dict(), "locks": locks.stats.as_dict()}
    loser = sm.begin()
    for _ in range(6):
        ix, unique = rng.choice(indexes)
        step(sm, rng, loser, ix, unique, answers)
    if rng.random() < 0.5:
        sm.log.sync()  # the loser's entries durable: restart must undo them
    disk = sm.disk
    disk.crash(CrashMode.nothing())
    sm = StorageManager.open(disk, frames=FRAMES, **OPTIONS)
    answers.append(contents(sm, indexes))
    for _ in range(5):
        with sm.transaction() as t:
            for _ in range(rng.randrange(1, 6)):
                ix, unique = rng.choice(indexes)
                step(sm, rng, t, ix, unique, answers)
    answers.append(contents(sm, indexes))
    sm.close()
    return {"disk": disk_state(disk), "answers": answers, "counters": counters}
