"""Free-running threads on a few hot locks: no wait is ever lost, no incompatible locks are ever granted.

Unlike the scripted tests, the threads here run as the scheduler pleases (switching every 10 µs, so
that they really interleave); what is checked holds for every schedule: every transaction ends
(Dreadlocks breaks every cycle, or the 60 s timeout would raise and fail the test); whenever a lock is
granted, every two holders of one lock are compatible (one way or the other: UD may join SH); with
fingerprints of their own (4 threads, 64 bits), no victim is a false positive, because digests are
kept exact at every change; in the end the table is empty. Seeded: the same requests each run.
"""

import itertools
import random
import sys
import threading

import pytest

from minidb.pagestore.lock import LOCK_MANAGER, DeadlockVictim, Interleaving, LockTimeout
from minidb.pagestore.lock.dreadlocks import contains
from minidb.pagestore.lock.modes import EX, IS, IX, SH, SIX, UD, compatible

from tests.pagestore.lock.helpers import Txn, rec, user

THREADS, TXNS, MODES = 4, 40, (IS, IX, SH, SIX, UD, EX)


def incompatible_holders(snapshot):
    bad = []
    for head in snapshot.heads:
        holders = [r for r in head.requests if r.status != "waiting"]
        for a, b in itertools.combinations(holders, 2):
            if not (compatible(a.mode, b.mode) or compatible(b.mode, a.mode)):
                bad.append((str(head.lock_id), a.describe(), b.describe()))
    return bad


@pytest.mark.parametrize("seed", range(3))
def test_random_transactions_on_hot_locks(seed):
    lm = LOCK_MANAGER.call(escalation_threshold=3)
    ids = [user(1), user(2), rec(1), rec(2), rec(3), rec(1, page=50), rec(2, page=50)]
    problems: list = []
    lm.add_listener(lambda event, *_: problems.extend(incompatible_holders(lm.snapshot()))
                    if event == "granted" else None)
    counter = itertools.count(1)
    counter_lock = threading.Lock()
    outcomes = {"committed": 0, "victims": 0}
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def worker(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        start.wait()
        try:
            for _ in range(TXNS):
                with counter_lock:
                    txn = Txn(next(counter))
                try:
                    for _ in range(rng.randint(1, 4)):
                        lm.lock(txn, rng.choice(ids), rng.choice(MODES), timeout=60)
                    outcomes["committed"] += 1
                except DeadlockVictim:
                    outcomes["victims"] += 1
                finally:
                    lm.release_all(txn)
        except (LockTimeout, Exception) as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads), "a thread is stuck: a deadlock was not broken"
    assert errors == [] and problems == []
    assert outcomes["committed"] + outcomes["victims"] == THREADS * TXNS
    assert lm.snapshot().heads == () and lm.snapshot().owners == ()
    assert outcomes["victims"] <= lm.stats["nDeadlocks"]  # (how many waits there were is up to the scheduler)
    assert lm.stats["nFalseDeadlocks"] == 0 and lm.stats["nFingerprintCollisions"] == 0


def check_invariants(lm):
    """After a settled step: holders compatible, no cycle left standing, every digest exact."""
    snapshot, graph = lm.snapshot(), lm.waits_for()
    assert incompatible_holders(snapshot) == []
    assert graph.cycles() == []
    for node in graph.nodes:
        expected = node.fingerprint
        if node.waiting_on is not None:
            for other in graph.successors(node.txn_id):
                expected |= graph.node(other).digest
        assert node.digest == expected, f"T{node.txn_id}'s digest is not exact"
        assert contains(node.digest, node.fingerprint)


@pytest.mark.parametrize("seed", range(8))
def test_random_scripted_interleavings(seed):
    """Four threads take turns on random transactions, one scripted step at a time (a seeded choice
    among the threads that are not blocked): lock a random id in a random mode, or commit. A victim
    aborts and its thread starts a new transaction. Deterministic, and checked after every step."""
    rng = random.Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=3)
    ids = [user(1), user(2), rec(1), rec(2), rec(3), rec(1, page=50), rec(2, page=50)]
    counter = itertools.count(1)
    slots = {thread: Txn(next(counter)) for thread in range(4)}
    victims = commits = 0
    with Interleaving(lm) as script:
        for _ in range(150):
            free = [t for t in slots if not script.busy(t)]
            assert free, "every thread is blocked: a deadlock was not broken"
            thread = rng.choice(free)
            txn = slots[thread]
            if rng.random() < 0.2:
                script.release_all(txn, thread=thread)
                slots[thread] = Txn(next(counter))
                commits += 1
            else:
                step = script.lock(txn, rng.choice(ids), rng.choice(MODES), thread=thread)
                if step.outcome == "DeadlockVictim":
                    script.release_all(txn, thread=thread)
                    slots[thread] = Txn(next(counter))
                    victims += 1
            for done in script.steps:  # a blocked step that ended as a victim later: abort it too
                if done.outcome == "DeadlockVictim" and done.owner in slots.values():
                    holder = next(t for t, o in slots.items() if o is done.owner)
                    script.release_all(done.owner, thread=holder)
                    slots[holder] = Txn(next(counter))
                    victims += 1
            check_invariants(lm)
    assert lm.stats["nWaits"] > 0 and commits > 0 and victims == lm.stats["nDeadlocks"]
    assert lm.stats["nFalseDeadlocks"] == 0 and lm.stats["nFingerprintCollisions"] == 0
    assert lm.snapshot().heads == ()
