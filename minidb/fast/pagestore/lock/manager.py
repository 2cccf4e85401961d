"""The lock manager, accelerated: the uncontended request and unlock inline.

Most requests are for a lock nobody else holds, under parents the transaction
already holds (a record under its page, store and volume). The reference
(:mod:`minidb.pagestore.lock.manager`) looks each ancestor up in the owner's
locks, reads the mode tables through function calls, and grants through
``_acquire``, ``_grant_first``, ``_hold`` and ``_count_grant``; its unlock
goes through ``_release`` and the queue's wakeup. This twin skips, for that
common case only:

- **the ancestors' ids**: a lock id's ancestors (:meth:`LockId.ancestors`,
  three new ids for a record) are computed once and remembered in a table
  of at most ``_ANCESTORS_MAX`` ids (cleared when full). Safe because a lock
  id is an immutable value and its ancestors follow from it alone.
- **the ancestor look-ups**: it looks up the parent's request only and walks
  the ancestors above it along the requests' ``parent`` links. Safe because a
  lock's ancestors are held as long as it is (a lock is released after the
  locks below it); the exception, short locks that escalation leaves below a
  released lock, is recorded in ``released_parents``, and then the twin looks
  each ancestor up, as the reference does.
- **the mode tables by call**: whether an ancestor's mode covers the request or
  is enough for its parent mode is read from tuples indexed by the modes'
  table index (``mode._i``), built once from :func:`~.modes.implicitly_covers`
  and :func:`~.modes.covers`: indexing a tuple costs less than hashing an Enum
  member, whose hash is computed in Python, or calling a function.
- **the INSTANT bookkeeping**: a request of any other duration goes straight
  to ``_acquire`` for each missing ancestor and the lock (``_take`` keeps a
  list of what each step took only so that an INSTANT request can give it
  back).
- **the grant's helpers**: a lock absent from the table (so nobody holds or
  waits for it, the owner included) is granted alone in a head with the books
  kept inline (the owner's locks, the parent's child and long-child counts,
  ``nGranted``), exactly what ``_hold`` and ``_count_grant`` would write.
- **the unlock's wakeup**: a short lock alone in its queue, with no extent bit
  and no released parents, is released without ``_release``: nobody waits
  there, so the wakeup and the digest refresh have nothing to do, and a short
  lock is in no long-child count.
- **allocation**: empty heads are kept (at most ``SPARE_HEADS``) and reused by
  the next first request on any lock, and an uncontended unlock leaves its
  request in the spare head's queue to be reused too. Nothing refers to such a
  request any more (it was granted, its owner was not waiting, it had no locks
  below it), so only what describes the new request is set again; the flags a
  wait uses are reset when a wait begins (``_wait``). A released request's
  parent id is therefore taken from the child's own id, never from the
  parent's head, which may have been reused.
- **the mutex by statement**: it is taken by its bound ``acquire`` and
  ``release`` (cheaper than a ``with`` statement on an ``RLock``), and the
  calling thread's fingerprint is read from the holder inline.

Everything else (conversions, waits, Dreadlocks, escalation, INSTANT
requests, covered requests, locks others hold) is the reference's code,
inherited. ``tests/agreement/scn_locks.py`` runs both on the same seeded calls
and compares outcomes, dumps, statistics and traces after every call.
"""

from __future__ import annotations

import time
from typing import Any

from minidb.pagestore.lock import manager as reference
from minidb.pagestore.lock.escalation import ESCALATION_TARGETS
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import MODES, NL, LockMode, covers, implicitly_covers, parent_mode
from minidb.pagestore.lock.owner import XctLockInfo, check_request, txn_id_of
from minidb.pagestore.lock.queue import LockHead
from minidb.pagestore.lock.request import Duration, LockRequest

SPARE_HEADS = 64
_LONG, _INSTANT, _SHORT = Duration.LONG, Duration.INSTANT, Duration.SHORT
# For each requested mode, the modes of an ancestor that already grant it; for each parent mode, the
# modes of an ancestor that are enough for it: tuples of booleans indexed by the ancestor's mode._i.
_COVERED_BY = tuple(tuple(implicitly_covers(a, m) for a in MODES) for m in MODES)
_ENOUGH_FOR = tuple(tuple(covers(a, m) for a in MODES) for m in MODES)
_PARENT_OF = tuple(parent_mode(m) for m in MODES)
_ANCESTORS: dict[LockId, tuple[LockId, ...]] = {}  # lock id -> its ancestors (LockId.ancestors), remembered
_ANCESTORS_MAX = 1 << 16


def _ancestors(lock_id: LockId) -> tuple[LockId, ...]:
    """``lock_id.ancestors()``, remembered for the next request of the same lock (bounded: cleared when full)."""
    found = _ANCESTORS[lock_id] = lock_id.ancestors()
    if len(_ANCESTORS) > _ANCESTORS_MAX:
        _ANCESTORS.clear()
    return found


class LockManager(reference.LockManager):
    """The reference lock manager with the uncontended request and unlock inline."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._enter, self._exit = self._mutex.acquire, self._mutex.release
        self._spare_heads: list[LockHead] = []  # empty heads, kept for reuse (at most SPARE_HEADS)
        self._thread_holders = self.fingerprints.threads

    def lock(self, owner: Any, lock_id: LockId, mode: LockMode, duration: Duration = Duration.LONG,
             timeout: float | None = None) -> None:
        txn_id = getattr(owner, "txn_id", None)
        if type(txn_id) is not int:
            txn_id = txn_id_of(owner)  # raises
        if not (timeout is None and type(lock_id) is LockId and type(mode) is LockMode
                and type(duration) is Duration):  # the usual request passes on its types alone
            check_request(lock_id, mode, duration, timeout)
        if mode is NL:
            return
        if duration is _SHORT and lock_id.code == "x":
            duration = _LONG  # extent locks are held to the end of the transaction
        holder = self._thread_holders.holder  # what Fingerprints.current() reads, without a call
        fingerprint = holder.fingerprint if holder is not None else self.fingerprints.current()
        deadline = time.monotonic() + timeout if timeout else None
        self._enter()
        try:
            st = self._owners.get(txn_id)
            counts = self.stats.counts
            if st is not None and not st.quarks and st.waiting is None and st.fingerprint == fingerprint:
                counts["nRequests"] += 1
            else:
                st, duration = self._start_request(txn_id, owner, lock_id, duration, fingerprint)
            locks = st.locks
            ancestors = _ANCESTORS.get(lock_id)
            if ancestors is None:
                ancestors = _ancestors(lock_id)
            rank = duration.rank
            fast = not st.released_parents
            held = None  # the parent's request, once the chain of ancestors is found held and enough
            missing: list[LockId] = []
            if ancestors:
                covering, enough = _COVERED_BY[mode._i], _ENOUGH_FOR[_PARENT_OF[mode._i]._i]  # type: ignore
                if fast:
                    # The parent held and enough: its ancestors are held too, each one parent link up.
                    up = held = locks.get(ancestors[-1])
                    while up is not None:
                        i = up.mode._i
                        if covering[i] or not enough[i] or up.duration.rank < rank:
                            held = None
                            break
                        up = up.parent
                if held is None:
                    # What _missing_ancestors does, with the tables read by index.
                    for ancestor in ancestors:
                        up = locks.get(ancestor)
                        if up is None:
                            missing.append(ancestor)
                        elif covering[up.mode._i]:
                            counts["nCovered"] += 1
                            self.trace.emit("T%d %s %s: covered by %s on %s", txn_id, mode, lock_id, up.mode,
                                            ancestor)
                            return
                        elif not enough[up.mode._i] or up.duration.rank < rank:
                            missing.append(ancestor)
            if duration is _INSTANT:
                self._take(st, lock_id, mode, missing, duration, timeout, deadline)
                return
            if held is None and (ancestors or not fast) or lock_id in self._table:
                # What _take does, without the undo list that only an INSTANT request needs.
                pmode = _PARENT_OF[mode._i]  # type: ignore[attr-defined]
                for ancestor in missing:
                    self._acquire(st, ancestor, pmode, duration, timeout, deadline, True)
                self._acquire(st, lock_id, mode, duration, timeout, deadline)
                if duration is _LONG and ancestors:
                    self._maybe_escalate(st, lock_id, ancestors)
                return
            # Granted alone in a head: what _grant_first does, with _hold and _count_grant inline.
            request = self._first_request(st, lock_id, mode, duration, held)
            locks[lock_id] = request
            counts["nGranted"] += 1
            if self.trace.enabled:
                self.trace.emit("T%d %s %s: granted", txn_id, mode, lock_id)
            if held is not None:
                held.n_children += 1
                if duration is _LONG:
                    parent = ancestors[-1]
                    if parent.code in ESCALATION_TARGETS:
                        st.long_children[parent] = st.long_children.get(parent, 0) + 1
                    self._maybe_escalate(st, lock_id, ancestors)
        finally:
            self._exit()

    def unlock(self, owner: Any, lock_id: LockId) -> None:
        txn_id = getattr(owner, "txn_id", None)
        if type(txn_id) is not int:
            txn_id = txn_id_of(owner)  # raises
        if not isinstance(lock_id, LockId):
            reference.LockManager.unlock(self, owner, lock_id)  # raises
        self._enter()
        try:
            st = self._owners.get(txn_id)
            request = st.locks.get(lock_id) if st is not None else None
            if request is None or st.waiting is not None or request.duration is _LONG or request.n_children:
                self._unlockable(txn_id, lock_id)  # raises BadLockRequest, or an ancestor's lock covers it
                return
            head = request.head
            if len(head.queue) == 1 and not head.has_page_alloc and not st.released_parents:
                # Nobody else holds or waits here: _release without the wakeup. The head is kept for
                # reuse, and so is the request, left in its queue (see _first_request).
                del st.locks[lock_id]
                parent = request.parent
                if parent is not None:
                    parent.n_children -= 1  # counted when the lock was granted
                self.stats.counts["nReleases"] += 1
                del self._table[lock_id]
                if len(self._spare_heads) < SPARE_HEADS:
                    self._spare_heads.append(head)
                else:
                    head.queue.clear()
            else:
                self._release(st, request)
            if self.trace.enabled:
                self.trace.emit("T%d unlocks %s", txn_id, lock_id)
        finally:
            self._exit()

    def _grant_first(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, duration: Duration,
                     implicit: bool = False) -> LockRequest:
        request = self._first_request(st, lock_id, mode, duration)
        self._hold(st, request)
        self._count_grant(st, lock_id, mode, implicit)
        return request

    def _first_request(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, duration: Duration,
                       parent: LockRequest | None = None) -> LockRequest:
        """The granted request of the first transaction on a lock nobody holds, in a spare head if there
        is one (reusing the request an uncontended unlock left in it); ``parent``: the owner's request one
        level up, if the caller has it (else ``_hold`` finds it)."""
        spare = self._spare_heads
        head = spare.pop() if spare else LockHead(lock_id)
        head.lock_id = lock_id
        self._table[lock_id] = head
        queue = head.queue
        if queue:
            request = queue[0]
            request.owner = st
            request.mode = mode
            request.duration = duration
            request.parent = parent
        else:
            request = LockRequest(st, head, mode, duration)
            request.parent = parent
            queue.append(request)
        return request

    def _drop(self, head: LockHead) -> None:
        del self._table[head.lock_id]
        if len(self._spare_heads) < SPARE_HEADS and not head.has_page_alloc:
            self._spare_heads.append(head)  # reused by the next first request on any lock
