"""Latch coupling under threads: inserters splitting pages while scanners read, with no deadlock.

Without a lock manager (so without key-value locks: test_kvl.py has
those) each inserting thread owns its own keys; the scanners see some prefix of each inserter's keys, always in
order. Every thread must finish (a latch deadlock would leave one waiting)
and the tree must hold every key, soundly structured.
"""

import threading

from minidb.pagestore import check_tree

from tests.pagestore.sm_helpers import new_sm

INSERTERS, KEYS = 3, 150


def test_inserters_and_scanners_in_threads_finish_and_agree():
    sm = new_sm(num_pages=512, frames=48)
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
    errors: list[BaseException] = []
    done = threading.Event()

    def insert(n):
        try:
            with sm.transaction(durable=False) as t:
                for k in range(KEYS):
                    sm.index_insert(t, ix, k * INSERTERS + n, b"x" * 30)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    def scan(backward):
        try:
            while not done.is_set():
                with sm.transaction(durable=False) as t:
                    keys = [k for k, _ in sm.index_scan(t, ix, backward=backward)]
                assert keys == sorted(keys, reverse=backward) and len(set(keys)) == len(keys)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    inserters = [threading.Thread(target=insert, args=(n,)) for n in range(INSERTERS)]
    scanners = [threading.Thread(target=scan, args=(b,)) for b in (False, True)]
    for thread in inserters + scanners:
        thread.start()
    for thread in inserters:
        thread.join(timeout=120)
    done.set()
    for thread in scanners:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in inserters + scanners), "a thread is stuck (latch deadlock?)"
    assert errors == []
    problems, found = check_tree(sm.bp, sm.indexes.index(ix).root, True)
    assert problems == [] and len(found) == INSERTERS * KEYS
