"""Record locks: which transaction may write (and read) a record, and who waits for whom.

A lock table (JE's ``LockManager``, reduced to write locks): a record, named
by (database id, key), is write-locked by the first transaction that writes
it and stays locked until that transaction commits or aborts. Another
transaction, or an operation without a transaction, that touches a locked
record *waits* until the holder ends, or until the lock timeout passes
(JE's lockers):

- the timeout is the transaction's (``env.begin(lock_timeout=...)``) or the
  environment's (``EnvironmentConfig(lock_timeout=...)``, 0.5 s as in JE);
  0 means no waiting: the conflict is a
  :class:`~minidb.logstore.errors.LockConflictError` at once;
- a wait that outlasts it is a :class:`~minidb.logstore.errors.LockTimeoutError`
  naming the record, the holder, the waiter and the time waited;
- a wait that would close a cycle of waits is refused before it starts: a
  :class:`~minidb.logstore.errors.DeadlockError` in the requester, the
  transaction whose request closes the cycle (JE's default victim: the others
  already wait, and the one that asks last is the one still running code that
  can abort). The cycle is found by :func:`~minidb.logstore.txn.deadlock.waits_for_cycle`.

Reads wait too: a record written by a transaction that has not ended is not
read by anyone else until it ends (JE's default isolation, REPEATABLE_READ,
reads only committed data). A read takes no lock of its own here (only write
locks exist), so what a transaction read may be written by another before it
ends: what JE calls READ_COMMITTED.

**The latch is not held while waiting.** Every operation holds the
environment latch; a wait is a ``threading.Condition`` on that latch, whose
``wait`` releases it (all of its levels) and takes it back. So other
threads' operations run meanwhile, and the waiter must take nothing it read
before the wait as still true: the caller asks for the lock before it
searches the tree (records), or searches again after a wait (the cursor).
Time comes from the environment's clock (``config.clock``); a clock object
with a ``wait(cond, timeout)`` method (:class:`minidb.log.groupcommit.ManualClock`)
also decides how the wait waits, so tests move time by hand.

**FIFO per record.** Waiters queue per record. When the holder ends, the
waiters at the head that take no lock (reads, writes without a transaction)
go on, up to the first transactional writer, who is handed the lock then and
there (nobody can take it in between); a request that finds the record
locked again waits again at the head of the queue.

Example (txns 7, 8 and 9 each in their own thread; db 2 is ``'a'``)::

    txn 7 puts b"x"            -> table {(2, b"x"): 7}
    txn 8 puts b"x"            -> waits for txn 7 (the latch released)
    txn 7 commits              -> the lock is handed to txn 8, which goes on: table {(2, b"x"): 8}
    txn 9 puts b"y", then b"x" -> waits for txn 8
    txn 8 puts b"y"            -> DeadlockError in txn 8: "txn 8 waits for txn 9 (db 'a' key b'y'),
                                  txn 9 waits for txn 8 (db 'a' key b'x')"; txn 8 aborts, txn 9 goes on
    txn 9 then gets b"z", write-locked by a txn 10 that never ends -> after 0.5 s,
                                  LockTimeoutError "txn 9 waited 0.500 s for record b'z' ..."

A transaction belongs to the thread that last took a lock for it: a thread
that would wait for a transaction it runs itself waits forever (JE waits out
the lock timeout there), so that is a deadlock too, found at once
(``txn 2 waits for txn 1 (db 'a' key b'k'), txn 1 is run by the same
thread``). So a single thread that uses two transactions at once meets a
conflict immediately, as it did when the table never waited.

Statistics (``env.locks.stats``): ``nWriteLocks`` granted, ``nConflicts``
refused at once (timeout 0), ``nWaits`` begun, ``nTimeouts``, ``nDeadlocks``.

The record lock also decides when a deleted slot may be compressed away: not
while a transaction holds the record's lock (its abort would need the slot).
The log store's own callers (recovery, the cleaner, the eraser, a replica's
rollback) never wait: their timeout is 0.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import TYPE_CHECKING

from minidb import impl
from minidb.logstore.errors import DeadlockError, LockConflictError, LockTimeoutError
from minidb.logstore.txn.deadlock import Request, waits_for_cycle
from minidb.stats import Stats

if TYPE_CHECKING:
    from minidb.logstore.core import EnvCore

Record = tuple[int, bytes]


class LockTable:
    """The record locks of one environment (see the module documentation); without ``core`` nobody waits."""

    def __init__(self, core: EnvCore | None = None) -> None:
        self.core = core
        self._owners: dict[Record, int] = {}
        self._held: dict[int, list[Record]] = {}
        self._queues: dict[Record, deque[Request]] = {}
        self._waiting: dict[int, Request] = {}  # thread ident -> the request it waits with
        self._thread_of: dict[int, int] = {}  # txn id -> the thread that last took a lock for it
        self._cond = threading.Condition(core.latch) if core is not None else None
        self.stats = Stats("locks", ["nWriteLocks", "nConflicts", "nWaits", "nTimeouts", "nDeadlocks"])

    def owner(self, db_id: int, key: bytes) -> int | None:
        return self._owners.get((db_id, key))

    def check(self, db_id: int, db_name: str, key: bytes, txn_id: int | None, what: str,
              timeout: float = 0.0) -> bool:
        """Wait while the record is locked by a transaction other than ``txn_id`` (``timeout`` seconds; 0:
        raise at once). True if it waited: the latch was released, so what the caller read may have changed."""
        owner = self._owners.get((db_id, key))
        if owner is None or owner == txn_id:
            return False
        return self._wait_for(Request(txn_id, what, (db_id, key), db_name, take=False), owner, timeout)

    def lock_write(self, db_id: int, db_name: str, key: bytes, txn_id: int, timeout: float = 0.0) -> bool:
        """Write-lock the record for ``txn_id``, waiting as :meth:`check` does; True if it waited."""
        record = (db_id, key)
        owner = self._owners.get(record)
        if owner == txn_id:
            return False
        if owner is None:
            self._grant(record, txn_id, threading.get_ident())
            return False
        return self._wait_for(Request(txn_id, "write", record, db_name, take=True), owner, timeout)

    def _grant(self, record: Record, txn_id: int, thread: int) -> None:
        self._owners[record] = txn_id
        self._held.setdefault(txn_id, []).append(record)
        self._thread_of[txn_id] = thread
        self.stats.add("nWriteLocks")

    def _wait_for(self, request: Request, owner: int, timeout: float) -> bool:
        db_id, key = request.record
        if timeout <= 0 or self.core is None or self._cond is None:
            self.stats.add("nConflicts")
            raise LockConflictError(request.db_name, key, owner, request.label)
        clock, cond, me = self.core.config.clock, self._cond, threading.get_ident()
        clock_wait = getattr(clock, "wait", None)
        started = clock()
        deadline = started + timeout
        request.thread = me
        queue = self._queues.setdefault(request.record, deque())
        self.stats.add("nWaits")
        try:
            while True:
                owner_now = self._owners.get(request.record)
                if owner_now is None or owner_now == request.locker:  # free, or handed to us
                    if owner_now is None and request.take:
                        self._grant(request.record, request.locker, me)
                    return True
                cycle = waits_for_cycle(request, owner_now, self._owners.get, self._thread_of, self._waiting)
                if cycle is not None:
                    self.stats.add("nDeadlocks")
                    raise DeadlockError(request.db_name, key, owner_now, request.label, cycle)
                now = clock()
                if now >= deadline:
                    self.stats.add("nTimeouts")
                    raise LockTimeoutError(request.db_name, key, owner_now, request.label, now - started, timeout)
                if request not in queue:
                    queue.appendleft(request) if request.woken else queue.append(request)
                self._waiting[me] = request
                if clock_wait is not None:
                    clock_wait(cond, deadline - now)
                else:
                    cond.wait(deadline - now)  # releases the latch, every level of it, and takes it back
                del self._waiting[me]
                self.core.check_usable()  # closed or crashed meanwhile
        finally:
            self._waiting.pop(me, None)
            if request in queue:
                queue.remove(request)
            if not queue:
                self._queues.pop(request.record, None)

    def release_all(self, txn_id: int) -> None:
        """The transaction ended: free its records; the waiters at each head go on (see FIFO per record)."""
        woke = False
        for record in self._held.pop(txn_id, []):
            del self._owners[record]
            queue = self._queues.get(record)
            while queue:
                head = queue.popleft()
                head.woken = woke = True
                if head.take:
                    self._grant(record, head.locker, head.thread)
                    break
        self._thread_of.pop(txn_id, None)
        if woke:
            self.wake_waiters()

    def wake_waiters(self) -> None:
        """Let every waiter look again (a release, or the environment closed or crashed); under the latch."""
        if self._cond is not None and self._waiting:
            self._cond.notify_all()

    def held_by(self, txn_id: int) -> list[Record]:
        return list(self._held.get(txn_id, []))

    def waiters(self) -> list[str]:
        """Who waits for which record, in queue order, for demonstrations and tests."""
        return [f"{r.label} waits for db {db} key {key!r}" for (db, key), queue in sorted(self._queues.items())
                for r in queue]

    def dump(self) -> list[str]:
        """The table as text, one lock a line, for demonstrations and golden tests."""
        return [f"db {db} key {key!r}: write-locked by txn {owner}" for (db, key), owner in sorted(self._owners.items())]

    def __len__(self) -> int:
        return len(self._owners)


#: the environment's lock table
LOCK_TABLE = impl.hot_spot(LockTable)


__all__ = ["LockTable", "LOCK_TABLE"]
