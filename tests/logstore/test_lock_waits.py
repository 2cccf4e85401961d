"""Record lock waits: a conflict waits for the holder, times out, or is a deadlock (minidb.logstore.txn.locks).

Every interleaving is scripted: each transaction runs in a worker thread that
does one step when told; the environment's clock is a ManualClock, whose
``waiting`` event says that a request has begun to wait (the latch released)
and whose ``advance`` moves time for the timeouts. Nothing sleeps; the only
real-time bound is the guard that turns a hang into a failure.
"""

from __future__ import annotations

import queue
import threading

import pytest

from minidb.io import SimDisk
from minidb.log.groupcommit import ManualClock
from minidb.logstore import (
    DeadlockError,
    Environment,
    EnvironmentClosedError,
    LockConflictError,
    LockTimeoutError,
)
from minidb.logstore.txn.deadlock import Request, waits_for_cycle

from tests.logstore.helpers import reopen, small_config

GUARD = 30  # seconds: only so that a broken wait fails instead of hanging


class Step:
    """One step given to a worker; ``result()`` waits for it to end and returns (or raises) what it did."""

    def __init__(self, fn):
        self.fn, self.done, self.value, self.error = fn, threading.Event(), None, None

    def result(self):
        assert self.done.wait(GUARD), "the step never ended"
        if self.error is not None:
            raise self.error
        return self.value

    @property
    def ended(self) -> bool:
        return self.done.is_set()


class Worker:
    """A thread that runs the steps it is given, one after the other (one transaction's thread)."""

    def __init__(self):
        self.steps: queue.Queue[Step | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while (step := self.steps.get()) is not None:
            try:
                step.value = step.fn()
            except BaseException as e:  # handed to the test thread
                step.error = e
            step.done.set()

    def do(self, fn) -> Step:
        step = Step(fn)
        self.steps.put(step)
        return step

    def stop(self):
        self.steps.put(None)
        self.thread.join(GUARD)


def finish(env: Environment, *workers: Worker) -> None:
    for worker in workers:
        worker.stop()
    env.close()


def waiting_env(lock_timeout: float = 0.5, disk: SimDisk | None = None):
    clock = ManualClock(1_700_000_000.0)
    env = Environment.open(disk or SimDisk("waits"), small_config(clock=clock, lock_timeout=lock_timeout))
    return env, clock


def in_threads(env: Environment, count: int) -> tuple[list[Worker], list]:
    """``count`` workers, each with a transaction it began."""
    workers = [Worker() for _ in range(count)]
    return workers, [w.do(env.begin).result() for w in workers]


def holding(env: Environment, db, key: str, value: str):
    """A worker whose transaction write-locked ``key`` (by a put of ``value``); (worker, transaction)."""
    (worker,), (txn,) = in_threads(env, 1)
    worker.do(lambda: db.put(key, value, txn=txn)).result()
    return worker, txn


def until_waiting(clock: ManualClock, step: Step, env: Environment, waiters: int = 1) -> None:
    """Return once ``step`` waits for a lock (the clock saw a wait and the lock table lists the waiter)."""
    while True:
        assert clock.waiting.wait(GUARD), "nobody began to wait"
        clock.waiting.clear()
        assert not step.ended, f"the step did not wait: {step.error or step.value!r}"
        with env.latch:
            if len(env.locks.waiters()) >= waiters:
                return


def test_a_writer_waits_for_the_holder_and_goes_on_after_its_commit():
    env, clock = waiting_env()
    db = env.database("t")
    db.put("x", "0")
    holder, a = holding(env, db, "x", "a")
    waiter = Worker()
    b = waiter.do(env.begin).result()

    def read_then_write():
        seen = db.get("x", txn=b)  # waits: txn a write-locked x
        db.put("x", seen + b"b", txn=b)
        b.commit()
        return seen

    step = waiter.do(read_then_write)
    until_waiting(clock, step, env)
    assert env.locks.waiters() == [f"txn {b.id} waits for db {db.id} key b'x'"]
    holder.do(a.commit).result()
    assert step.result() == b"a"  # the committed value
    assert db.get("x") == b"ab"
    assert env.locks.stats["nWaits"] == 1 and len(env.locks) == 0
    finish(env, holder, waiter)


def test_the_first_waiter_is_handed_the_lock_and_the_second_waits_on():
    env, clock = waiting_env()
    db = env.database("t")
    workers, txns = in_threads(env, 3)
    workers[0].do(lambda: db.put("x", "0", txn=txns[0])).result()
    first = workers[1].do(lambda: db.put("x", "1", txn=txns[1]))
    until_waiting(clock, first, env)
    second = workers[2].do(lambda: db.put("x", "2", txn=txns[2]))
    until_waiting(clock, second, env, waiters=2)
    workers[0].do(txns[0].commit).result()
    first.result()
    with env.latch:
        assert env.locks.dump() == [f"db {db.id} key b'x': write-locked by txn {txns[1].id}"]
        assert env.locks.waiters() == [f"txn {txns[2].id} waits for db {db.id} key b'x'"]
    workers[1].do(txns[1].commit).result()
    second.result()
    workers[2].do(txns[2].commit).result()
    assert db.get("x") == b"2"
    finish(env, *workers)


def test_a_wait_times_out_after_the_environments_lock_timeout():
    env, clock = waiting_env(lock_timeout=2)
    db = env.database("t")
    holder, a = holding(env, db, "x", "a")
    waiter = Worker()
    b = waiter.do(env.begin).result()
    step = waiter.do(lambda: db.put("x", "b", txn=b))
    until_waiting(clock, step, env)
    clock.advance(1.5)  # not yet: it waits on
    until_waiting(clock, step, env)
    clock.advance(0.5)
    with pytest.raises(LockTimeoutError) as caught:
        step.result()
    assert str(caught.value) == (f"txn {b.id} waited 2.000 s for record b'x' of database 't', write-locked by "
                                 f"txn {a.id}: lock timeout (2 s)")
    assert caught.value.waited == 2 and isinstance(caught.value, LockConflictError)
    assert clock.waits == [2, 0.5]
    with env.latch:
        assert env.locks.waiters() == [] and env.locks.stats["nTimeouts"] == 1
    waiter.do(b.abort).result()
    holder.do(a.commit).result()
    finish(env, holder, waiter)


def test_a_transactions_lock_timeout_overrides_the_environments():
    env, clock = waiting_env(lock_timeout=100)
    db = env.database("t")
    holder, a = holding(env, db, "x", "a")
    waiter = Worker()
    b = waiter.do(lambda: env.begin(lock_timeout=1)).result()
    step = waiter.do(lambda: db.get("x", txn=b))  # a read waits too
    until_waiting(clock, step, env)
    clock.advance(1)
    with pytest.raises(LockTimeoutError, match=rf"txn {b.id} waited 1.000 s .* write-locked by txn {a.id}"):
        step.result()
    c = waiter.do(lambda: env.begin(lock_timeout=0)).result()
    with pytest.raises(LockConflictError) as caught:  # 0: no waiting, the error at once
        waiter.do(lambda: db.put("x", "c", txn=c)).result()
    assert type(caught.value) is LockConflictError
    assert clock.waits == [1]
    for txn in (b, c):
        waiter.do(txn.abort).result()
    holder.do(a.commit).result()
    finish(env, holder, waiter)


def test_a_two_transaction_deadlock_has_one_victim_and_the_other_goes_on():
    env, clock = waiting_env()
    db = env.database("a")
    (one, two), (t1, t2) = in_threads(env, 2)
    one.do(lambda: db.put("x", "1", txn=t1)).result()
    two.do(lambda: db.put("y", "2", txn=t2)).result()
    waits = one.do(lambda: db.put("y", "1", txn=t1))
    until_waiting(clock, waits, env)
    with pytest.raises(DeadlockError) as caught:
        two.do(lambda: db.put("x", "2", txn=t2)).result()
    assert caught.value.cycle == [f"txn {t2.id} waits for txn {t1.id} (db 'a' key b'x')",
                                  f"txn {t1.id} waits for txn {t2.id} (db 'a' key b'y')"]
    assert str(caught.value).endswith(f"; txn {t2.id} is the victim (abort it)")
    assert not waits.ended  # the other still waits, for the victim to abort
    two.do(t2.abort).result()
    waits.result()
    one.do(t1.commit).result()
    assert dict(db.items()) == {b"x": b"1", b"y": b"1"}
    assert env.locks.stats["nDeadlocks"] == 1
    finish(env, one, two)


def test_a_three_transaction_cycle_is_found_by_the_request_that_closes_it():
    env, clock = waiting_env()
    db = env.database("a")
    workers, txns = in_threads(env, 3)
    for w, txn, key in zip(workers, txns, "xyz", strict=True):
        w.do(lambda txn=txn, key=key: db.put(key, "held", txn=txn)).result()
    first = workers[0].do(lambda: db.put("y", "0", txn=txns[0]))
    until_waiting(clock, first, env)
    second = workers[1].do(lambda: db.put("z", "1", txn=txns[1]))
    until_waiting(clock, second, env, waiters=2)
    with pytest.raises(DeadlockError) as caught:
        workers[2].do(lambda: db.put("x", "2", txn=txns[2])).result()
    ids = [t.id for t in txns]
    assert caught.value.cycle == [f"txn {ids[2]} waits for txn {ids[0]} (db 'a' key b'x')",
                                  f"txn {ids[0]} waits for txn {ids[1]} (db 'a' key b'y')",
                                  f"txn {ids[1]} waits for txn {ids[2]} (db 'a' key b'z')"]
    workers[2].do(txns[2].abort).result()
    second.result()
    workers[1].do(txns[1].commit).result()
    first.result()
    workers[0].do(txns[0].commit).result()
    assert dict(db.items()) == {b"x": b"held", b"y": b"0", b"z": b"1"}
    finish(env, *workers)


def test_a_thread_waiting_for_a_transaction_it_runs_itself_is_a_deadlock_at_once():
    env, _ = waiting_env()  # the clock never moves: a wait here would never end
    db = env.database("a")
    t1, t2 = env.begin(), env.begin()
    db.put("k", "1", txn=t1)
    for attempt, who in ((lambda: db.put("k", "2", txn=t2), f"txn {t2.id}"),
                         (lambda: db.get("k"), "a non-transactional read")):
        with pytest.raises(DeadlockError) as caught:
            attempt()
        assert caught.value.cycle == [f"{who} waits for txn {t1.id} (db 'a' key b'k')",
                                      f"txn {t1.id} is run by the same thread"]
    t2.abort()
    t1.commit()
    env.close()


def test_the_latch_is_not_held_while_waiting():
    env, clock = waiting_env()
    db = env.database("t")
    holder, a = holding(env, db, "x", "a")
    waiter, other = Worker(), Worker()
    step = waiter.do(lambda: db.put("x", "b"))  # a write without a transaction waits too
    until_waiting(clock, step, env)
    assert other.do(lambda: (db.put("unrelated", "u"), db.get("unrelated"))[1]).result() == b"u"
    assert not step.ended
    holder.do(a.abort).result()
    step.result()
    assert db.get("x") == b"b"
    finish(env, holder, waiter, other)


def test_a_cursor_that_waited_searches_again_for_its_key():
    env, clock = waiting_env()
    db = env.database("t")
    for key in ("a", "b", "c"):
        db.put(key, key.upper())
    holder, a = holding(env, db, "b", "B2")
    reader, writer = Worker(), Worker()
    step = reader.do(lambda: list(db.items()))
    until_waiting(clock, step, env)
    # Meanwhile keys land before b"b" in the BIN the cursor was in, which splits (4-slot nodes): the slot the
    # cursor stopped at now holds another key, in another node, so it must search for its key again.
    writer.do(lambda: [db.put(f"a{i}", "n") for i in range(6)]).result()
    holder.do(a.commit).result()
    assert step.result() == [(b"a", b"A"), (b"b", b"B2"), (b"c", b"C")]  # a0..a5 came behind the cursor
    finish(env, holder, reader, writer)


def test_a_crash_while_a_transaction_waits_loses_nothing_committed():
    disk = SimDisk("crash-waits")
    env, clock = waiting_env(disk=disk)
    db = env.database("t")
    with env.begin() as committed:
        db.put("kept", "yes", txn=committed)
    holder, _ = holding(env, db, "x", "uncommitted")
    waiter = Worker()
    b = waiter.do(env.begin).result()
    step = waiter.do(lambda: db.put("x", "b", txn=b))
    until_waiting(clock, step, env)
    env.crash()
    with pytest.raises(EnvironmentClosedError):
        step.result()
    finish(env, holder, waiter)  # crashed: closing it is nothing more
    env = reopen(disk)
    assert dict(env.database("t").items()) == {b"kept": b"yes"}
    env.close()


def test_the_waits_for_walk_stops_where_a_holder_runs():
    owners = {(1, b"x"): 5, (1, b"y"): 3}
    request = Request(3, "write", (1, b"x"), "a", take=True, thread=100)
    five_waits = Request(5, "write", (1, b"y"), "a", take=True, thread=200)
    assert waits_for_cycle(request, 5, owners.get, {3: 100, 5: 200}, {}) is None  # txn 5 runs
    assert waits_for_cycle(request, 5, owners.get, {3: 100, 5: 200}, {200: five_waits}) == [
        "txn 3 waits for txn 5 (db 'a' key b'x')", "txn 5 waits for txn 3 (db 'a' key b'y')"]
    owners[(1, b"y")] = 5  # handed to txn 5 already: its wait is over
    assert waits_for_cycle(request, 5, owners.get, {3: 100, 5: 200}, {200: five_waits}) is None


def test_lock_timeouts_are_checked():
    for bad in (-1, "1", True, float("inf")):
        with pytest.raises(Exception, match="lock_timeout"):
            small_config(lock_timeout=bad)
    env, _ = waiting_env()
    with pytest.raises(Exception, match="lock_timeout"):
        env.begin(lock_timeout=-0.5)
    env.close()
