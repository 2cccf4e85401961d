"""Scenarios of the page store's lock manager and latches.

- ``lock_calls``: seeded calls by three transactions in one thread (locks of
  every kind of id, mode and duration, a conflict failing at once; unlocks,
  quarks, ``unlock_duration``, ends), with escalation on odd seeds: after
  every call the outcome, the table's dump, the statistics, the new trace
  lines, what each transaction holds, and the books (parents, child counts)
  recounted.
- ``lock_waits``: seeded scripts of four transactions in threads of their own
  (:class:`~minidb.pagestore.lock.Interleaving`): waits, conversions, FIFO
  grants, Dreadlocks victims, unlocks and ends; after every step the same.
- ``escalation_leftovers``: short record locks left below a page that
  escalation released, whose heads and requests are then reused.
- ``latch_requests``: seeded shared, exclusive and conditional requests on a
  latch, and a request that waits until a release wakes it.
- ``btree_with_locks``: the B+tree crash test's seeded workload (concurrent
  transactions under key-value locking, a lock refused at once rolls back)
  on a simulated disk, a crash at a seeded point and the restart after it.
"""

from __future__ import annotations

import random

from minidb.crashtest import btree as btree_crashtest
from minidb.pagestore import PageId, StoreId
from minidb.pagestore.buffer.latch import EX, LATCH, SH
from minidb.pagestore.lock import (
    LOCK_MANAGER,
    BadLockRequest,
    DeadlockVictim,
    Duration,
    Interleaving,
    LockId,
    LockTimeout,
)
from minidb.pagestore.lock.modes import EX as LEX, IS, IX, SH as LSH, SIX, UD

from tests.agreement.scenarios import disk_state, scenario
from tests.pagestore.helpers import wait_for_latch
from tests.pagestore.lock.helpers import P48, P50, S13, S14, V1, X16, Txn, check_bookkeeping, rec, user

MANAGER, LATCH_SPOT = "pagestore.lock.manager.LockManager", "pagestore.buffer.latch.Latch"
INSTANT, SHORT, LONG = Duration.INSTANT, Duration.SHORT, Duration.LONG
IDS = ([rec(s, page) for s in range(4) for page in (48, 50)] + [rec(1, 7, store=4), P48, P50, S13, S14, V1,
       LockId.kvl(StoreId(1, 3), b"k"), LockId.end_of_index(StoreId(1, 3)), X16, user(1), user(2)])


def state(lm, txns, seen: int) -> tuple:
    """What a step left: the table, the statistics, the trace lines since ``seen``, each one's locks."""
    check_bookkeeping(lm)
    return (lm.dump(), lm.stats.as_dict(), lm.trace.lines[seen:], {t.txn_id: lm.held(t) for t in txns})


def one_call(rng: random.Random, lm, txns: list[Txn]):
    """A random call on ``lm``, as a function of nothing (one thread: a conflict fails at once)."""
    txn = rng.choice(txns)
    roll = rng.random()
    if roll < 0.6:
        lock_id, mode = rng.choice(IDS), rng.choice([IS, LSH, IS, LSH, IX, SIX, UD, LEX])
        duration = rng.choice([SHORT, LONG, LONG, INSTANT])
        # A fresh lock id half the time (an equal one, not the same object), as callers make them.
        lock_id = LockId(lock_id.code, tuple(lock_id.numbers), lock_id.key) if rng.random() < 0.5 else lock_id
        return lambda: lm.lock(txn, lock_id, mode, duration, timeout=0)
    if roll < 0.8:
        held = lm.held(txn)
        lock_id = rng.choice(sorted(held)) if held and rng.random() < 0.9 else rng.choice(IDS)
        return lambda: lm.unlock(txn, lock_id)
    if roll < 0.85:
        return lambda: lm.open_quark(txn)
    if roll < 0.88:
        return lambda: lm.close_quark(txn)
    if roll < 0.9:
        return lambda: lm.unlock_duration(txn, SHORT)
    return lambda: lm.release_all(txn)


@scenario(MANAGER)
def lock_calls(seed: int) -> list:
    rng = random.Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=2 if seed % 2 else None, trace=True)
    txns = [Txn(1), Txn(2), Txn(3)]
    steps = []
    for _ in range(400):
        seen = len(lm.trace.lines)
        try:
            outcome = ("ok", one_call(rng, lm, txns)())
        except (BadLockRequest, LockTimeout) as e:
            outcome = (type(e).__name__, str(e))
        steps.append((outcome, *state(lm, txns, seen)))
    return steps


@scenario(MANAGER)
def lock_waits(seed: int) -> list:
    rng = random.Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=None, fingerprint_bits=16, bits_per_fingerprint=2, trace=True)
    txns = [Txn(1), Txn(2), Txn(3), Txn(4)]
    hot = [rec(1), rec(2), rec(3), P50, user(1)]
    steps = []
    with Interleaving(lm) as script:
        for _ in range(40):
            idle = [t for t in txns if not script.busy(t)]
            if not idle:
                break
            txn = rng.choice(idle)
            seen, logged = len(lm.trace.lines), len(script.log)
            roll = rng.random()
            if roll < 0.7:
                mode = rng.choice([IS, LSH, LSH, IX, UD, LEX, LEX])
                timeout = 0 if rng.random() < 0.15 else None
                script.lock(txn, rng.choice(hot), mode, rng.choice([LONG, LONG, SHORT]), timeout)
            elif roll < 0.8 and lm.held(txn):
                script.unlock(txn, rng.choice(sorted(lm.held(txn))))
            else:
                script.release_all(txn)
            steps.append((script.log[logged:], *state(lm, txns, seen)))
        outcomes = [(s.number, s.outcome, str(s.error) if isinstance(s.error, (DeadlockVictim, LockTimeout, BadLockRequest))
                     else None) for s in script.steps]
    return [steps, outcomes, script.log, lm.dump(), lm.stats.as_dict()]


@scenario(MANAGER)
def escalation_leftovers(seed: int) -> list:
    """T1's long IS on three pages of s(1.3) escalates the store and releases them, a short SH on a record
    stays below the released p(1.3.48); then the released heads are taken by other locks, the page is asked
    for again, the record and the page unlocked, in a seeded order."""
    rng = random.Random(seed)
    lm = LOCK_MANAGER.call(escalation_threshold=None, trace=True)
    lm.set_escalation_thresholds(to_page=None, to_store=3)
    T1, T2 = Txn(1), Txn(2)
    P49 = LockId.page(PageId(1, 3, 49))
    for lock_id, duration in [(P48, LONG), (rec(1, 48), SHORT), (P49, LONG), (P50, LONG)]:
        lm.lock(T1, lock_id, IS if lock_id.code == "p" else LSH, duration)
    calls = [lambda: lm.lock(T1, user(7), LEX), lambda: lm.lock(T1, user(8), LEX, SHORT),
             lambda: lm.lock(T2, user(9), LEX, SHORT), lambda: lm.lock(T1, P49, IX, SHORT),
             lambda: lm.lock(T1, P48, IX, SHORT), lambda: lm.unlock(T1, rec(1, 48)), lambda: lm.unlock(T1, P48),
             lambda: lm.unlock(T1, user(8)), lambda: lm.unlock(T2, user(9)), lambda: lm.lock(T2, rec(2, 48), LSH)]
    rng.shuffle(calls)
    steps = []
    for call in calls + [lambda: lm.release_all(T1), lambda: lm.release_all(T2)]:
        seen = len(lm.trace.lines)
        try:
            outcome = ("ok", call())
        except (BadLockRequest, LockTimeout) as e:
            outcome = (type(e).__name__, str(e))
        steps.append((outcome, *state(lm, [T1, T2], seen)))
    return steps


@scenario(LATCH_SPOT)
def latch_requests(seed: int) -> list:
    rng = random.Random(seed)
    latch = LATCH.call()
    held: list = []
    steps = []
    for _ in range(500):
        if held and rng.random() < 0.45:
            steps.append(("release", latch.release() == held.pop()))
        else:
            mode = rng.choice([SH, EX])
            granted = latch.acquire(mode, conditional=rng.random() < 0.8 or bool(held))
            if granted:
                held.append(mode)
            steps.append((mode.name, granted))
        steps.append((latch.mode.name, latch.holders, latch.waiting, latch.exclusive, repr(latch)))
    while held:
        latch.release()
        held.pop()
    # A request that waits: it is counted before it blocks, and a release wakes it.
    first, second = (EX, SH) if seed % 2 else (SH, EX)
    seen, got = wait_for_latch(latch, first, second,
                               lambda: (latch.waiting, latch.mode.name, latch.acquire(EX, conditional=True)))
    steps.append(("woken", seen, got, latch.mode.name, latch.holders, latch.waiting))
    return steps


@scenario(MANAGER, LATCH_SPOT)
def btree_with_locks(seed: int) -> dict:
    workload = btree_crashtest.run_workload(seed, ops=40)
    events = len(workload.disk.events)
    crash_at = random.Random(seed).randrange(workload.created_at + 1, events)
    image = workload.disk.crash_image(crash_at)
    btree_crashtest.open_sm(image).close()  # restart: analysis, redo, undo, then a clean shutdown
    return {"run": disk_state(workload.disk), "commits": workload.commits, "states": workload.states,
            "problems": workload.problems, "crash_at": crash_at, "restarted": disk_state(image)}
