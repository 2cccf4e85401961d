"""Waiting threads and Dreadlocks: how the lock manager blocks a request, finds a cycle, and wakes.

A request that cannot be granted at once joins its head's queue and blocks its
thread on a :class:`threading.Condition` of its own, sharing the manager's
mutex, until it is granted, it times out (``timeout`` seconds; None waits
forever), or Dreadlocks makes it a victim (:class:`~.errors.DeadlockVictim`,
raised in the victim's own thread). A failed wait cancels the request: a new
request leaves the queue, a conversion keeps the mode it held.

**Dreadlocks** (:mod:`.dreadlocks`) runs in the blocked threads: a thread
that must block looks for its own fingerprint in the digests of the
transactions it waits for (:meth:`~.queue.LockHead.blockers`); finding it
means a cycle, and the younger of the two transactions is the victim. Every
waiting transaction's digest (its fingerprint ORed with the digests of those
it waits for) is kept exact at each change of the waits
(:meth:`WaitingThreads._refresh_digests`), so the thread whose request closes
a cycle finds it at once; a waiter whose fingerprint appears in a digest it
depends on because of someone else's change is woken to run the test itself.
Worked example: T1 (fingerprint 0b0011) holds a and waits for b; T2
(0b0101) holds b. T1's digest is 0b0111. T2 now asks for a: it finds its own
bits 0b0101 in T1's digest 0b0111, a cycle; T2 is younger, T2 is the victim.

**Watching** (what tests and :mod:`.script` build deterministic interleavings
on): :meth:`~WaitingThreads.watch` waits, without sleeping, until a condition
on the lock table holds, evaluated again whenever a thread blocks, stops
waiting or is poked; :meth:`~WaitingThreads.settled` is the usual condition:
every waiting thread is blocked and has nothing left to recompute. Listeners
(:meth:`~WaitingThreads.add_listener`) hear of each wait, grant after a wait,
deadlock, victim and timeout.

:class:`WaitingThreads` is the part of :class:`~.manager.LockManager` that
runs in the waiting threads; it uses the manager's mutex, its table of
waiters and its :meth:`~.manager.LockManager._after_change`. Locking order:
every method here runs with the manager's mutex held, except :meth:`watch`
and :meth:`poke`, which take it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from minidb.pagestore.lock.dreadlocks import format_bits
from minidb.pagestore.lock.errors import DeadlockVictim, LockTimeout
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import LockMode
from minidb.pagestore.lock.owner import XctLockInfo, holders_text, txn_id_of
from minidb.pagestore.lock.request import CONVERTING, GRANTED, LockRequest
from minidb.pagestore.lock.waitsfor import exact_edges, in_cycle


class WaitingThreads:
    """The lock manager's waiting threads: blocking, Dreadlocks, victims, timeouts, watchers."""

    _mutex: threading.RLock
    _watchers: threading.Condition
    _waiters: dict[LockRequest, None]  # an ordered set, in order of waiting
    _owners: dict[int, XctLockInfo]
    _listeners: list[Callable[[str, int, LockId, LockMode], None]]
    stats: Any
    trace: Any
    _after_change: Callable[..., None]  # the manager's: grant what a changed queue lets in

    def _wait(self, st: XctLockInfo, request: LockRequest, deadline: float | None, timeout: float | None) -> None:
        """Block until ``request`` is granted; raise LockTimeout or DeadlockVictim otherwise."""
        cond = request.cond = threading.Condition(self._mutex)
        # A new wait: a victim's error or a recheck left from an earlier wait that ended in a grant
        # (the grant came first) does not concern this one.
        request.victim = None
        request.recheck = False
        st.waiting = request
        st.digest = st.fingerprint
        self._waiters[request] = None
        self.stats.bump("nWaits")
        lock_id = request.head.lock_id
        if self.trace.enabled:
            blockers = request.head.blockers(request)
            what = (f"{request.mode}->{request.convert_mode}" if request.status is CONVERTING
                    else str(request.mode))
            self.trace.emit("T%d %s %s: waits for %s", st.txn_id, what, lock_id, holders_text(blockers))
        # The first Dreadlocks step, in this thread, before it blocks: a cycle that this request
        # closes is found here, by this thread, at once.
        self._dreadlocks(st, request, first=True)
        self._refresh_digests()
        announced = False
        try:
            while True:
                if request.status is GRANTED:
                    return
                if request.victim is not None:
                    raise self._fail(st, request, request.victim)
                if request.recheck:
                    request.recheck = False
                    self._dreadlocks(st, request, first=False)
                    continue
                remaining = None
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise self._fail(st, request, LockTimeout(
                            f"T{st.txn_id} {request.wanted} on {lock_id}: not granted within {timeout} s: "
                            f"{holders_text(request.head.blockers(request))}"))
                if not announced:
                    announced = True
                    self._notify("wait", st.txn_id, lock_id, request.wanted)
                request.parked = True
                self._watchers.notify_all()
                cond.wait(remaining)
                request.parked = False
        finally:
            request.parked = False
            request.cond = None
            del self._waiters[request]
            st.waiting = None
            st.digest = 0
            self._refresh_digests()
            self._watchers.notify_all()

    def _dreadlocks(self, st: XctLockInfo, request: LockRequest, first: bool) -> None:
        """One Dreadlocks step, in the waiting thread: look for its fingerprint in the digest of each
        transaction it waits for; a hit is a cycle. (Its own digest is kept by :meth:`_refresh_digests`.)"""
        blockers = request.head.blockers(request)
        mine = st.fingerprint
        digest = mine
        hit = None
        for blocker, _reason in blockers:
            other = blocker.owner
            theirs = self._digest_of(other)
            if hit is None and other is not st and theirs & mine == mine:
                hit = (other, theirs)
            digest |= theirs
        if first and self.trace.enabled:
            parts = " | ".join(f"T{b.owner.txn_id} {format_bits(self._digest_of(b.owner))}" for b, _ in blockers)
            self.trace.emit("T%d digest %s = fingerprint %s | %s", st.txn_id, format_bits(digest),
                            format_bits(mine), parts)
        if hit is not None:
            self._deadlock(st, request, hit[0], hit[1])

    def _digest_of(self, st: XctLockInfo) -> int:
        """A waiting transaction's digest; a running one (or a chosen victim, or one whose request was
        just granted) has just its fingerprint."""
        waiting = st.waiting
        if waiting is not None and waiting.victim is None and waiting.status is not GRANTED:
            return st.digest
        return st.fingerprint

    def _refresh_digests(self) -> None:
        """Make every digest exact again after a change: each waiting transaction's digest becomes its
        fingerprint ORed with the digests of those it waits for (the least fixed point, computed
        from the fingerprints up). A waiter that now finds its own fingerprint in a digest it
        depends on is woken to run its Dreadlocks step (a cycle closed by someone else's change).

        Shore lets each blocked thread recompute its digest every 10 ms; between two rounds, stale
        digests can hold the bits of a thread that has since moved on to another transaction, and
        make false victims. Recomputing at every change keeps digests exact, so only shared
        fingerprint bits can still deceive the test."""
        if not self._waiters:
            return
        waiting = [w for w in self._waiters if w.victim is None and w.status is not GRANTED]
        edges = {w.owner: [b.owner for b, _ in w.head.blockers(w)] for w in waiting}
        digests = {owner: owner.fingerprint for owner in edges}
        changed = True
        while changed:
            changed = False
            for owner, blockers in edges.items():
                digest = digests[owner]
                for other in blockers:
                    digest |= digests.get(other, other.fingerprint)
                if digest != digests[owner]:
                    digests[owner] = digest
                    changed = True
        for owner, digest in digests.items():
            owner.digest = digest
        for w in waiting:
            # Only the digests of waiting transactions count here: a hit on a running one is a shared
            # fingerprint, which the waiter's first step has already reported.
            mine = w.owner.fingerprint
            if not w.recheck and any(o is not w.owner and o in digests and digests[o] & mine == mine
                                     for o in edges[w.owner]):
                w.recheck = True
                self._signal(w)

    def _deadlock(self, st: XctLockInfo, request: LockRequest, other: XctLockInfo, theirs: int) -> None:
        """``st`` found its fingerprint in ``other``'s digest: choose the younger as the victim."""
        theirs_waiting = other.waiting
        if theirs_waiting is not None and theirs_waiting.victim is not None:
            return  # this cycle is already being broken
        younger = st if st.txn_id > other.txn_id else other
        found = (f"T{st.txn_id} found its fingerprint {format_bits(st.fingerprint)} in T{other.txn_id}'s "
                 f"digest {format_bits(theirs)}")
        if younger is other and theirs_waiting is None:
            # The younger one runs: it waits for nobody, so no cycle goes through it.
            self.stats.bump("nFalseDeadlocks")
            self.trace.emit("%s, but T%d is not waiting: a false positive, no victim", found, other.txn_id)
            return
        real = in_cycle(exact_edges(list(self._waiters), lambda w: w.head.blockers(w)), st.txn_id)
        self.stats.bump("nDeadlocks")
        if not real:
            self.stats.bump("nFalseDeadlocks")
        note = "" if real else " (a false positive: no cycle in the waits-for graph, fingerprints share bits)"
        self.trace.emit("%s: deadlock%s; the younger, T%d, is the victim", found, note, younger.txn_id)
        self._notify("deadlock", st.txn_id, request.head.lock_id, request.wanted)  # the cycle still stands
        error = DeadlockVictim(f"T{younger.txn_id} is a deadlock victim: {found}{note}", younger.txn_id,
                               (other if younger is st else st).txn_id, false_positive=not real)
        if younger is st:
            self.stats.bump("nVictimSelf")
            request.victim = error
        else:
            self.stats.bump("nVictimOther")
            theirs_waiting.victim = error  # type: ignore[union-attr]
            self._signal(theirs_waiting)  # type: ignore[arg-type]
        self._refresh_digests()  # the victim counts as running now: its digest leaves the others'

    def _fail(self, st: XctLockInfo, request: LockRequest, error: Exception) -> Exception:
        """A wait ends without the lock: cancel the request (a conversion keeps its old mode)."""
        head = request.head
        converting = request.status is CONVERTING
        wanted = request.wanted
        head.cancel(request)
        self._after_change(head, refresh=True)
        lock_id = head.lock_id
        outcome = f"conversion denied, keeps {request.mode}" if converting else "request cancelled"
        if isinstance(error, DeadlockVictim):
            self.trace.emit("T%d %s %s: deadlock victim, %s", st.txn_id, wanted, lock_id, outcome)
            self._notify("victim", st.txn_id, lock_id, wanted)
        else:
            self.stats.bump("nTimeouts")
            self.trace.emit("T%d %s %s: timed out, %s", st.txn_id, wanted, lock_id, outcome)
            self._notify("timeout", st.txn_id, lock_id, wanted)
        return error

    def _signal(self, request: LockRequest) -> None:
        request.parked = False
        if request.cond is not None:
            request.cond.notify()

    def _notify(self, event: str, txn_id: int, lock_id: LockId, mode: LockMode) -> None:
        for listener in self._listeners:
            listener(event, txn_id, lock_id, mode)

    # -- what tests and scripts watch ------------------------------------------------------
    def waiting_on(self, owner: Any) -> LockId | None:
        """The lock ``owner`` is waiting for, or None."""
        with self._mutex:
            st = self._owners.get(txn_id_of(owner))
            return st.waiting.head.lock_id if st is not None and st.waiting is not None else None

    def blocked(self, owner: Any) -> bool:
        """Whether ``owner``'s thread is blocked in the lock manager with nothing left to do."""
        with self._mutex:
            st = self._owners.get(txn_id_of(owner))
            w = st.waiting if st is not None else None
            return w is not None and w.parked and not w.recheck

    def settled(self) -> bool:
        """Whether every waiting thread is blocked, with no Dreadlocks step or wakeup pending."""
        with self._mutex:
            return all(w.parked and not w.recheck for w in self._waiters)

    def watch(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        """Wait until ``predicate()`` (evaluated under the manager's mutex) is true; False on timeout.

        It is evaluated again each time a thread blocks or stops waiting, and at
        each :meth:`poke`: no sleeping, no polling.
        """
        with self._watchers:
            return self._watchers.wait_for(predicate, timeout)

    def poke(self) -> None:
        """Make :meth:`watch` evaluate its predicates again (after a change outside the manager)."""
        with self._watchers:
            self._watchers.notify_all()

    def add_listener(self, listener: Callable[[str, int, LockId, LockMode], None]) -> None:
        """Call ``listener(event, txn_id, lock_id, mode)`` on ``"wait"`` (a thread is about to block,
        its first Dreadlocks step done), ``"granted"`` (after a wait), ``"deadlock"`` (a cycle was
        found: the victim is about to be told; the transaction is the one that found it),
        ``"victim"`` and ``"timeout"``. Called in the thread concerned, with the mutex held: it may
        read the table (:meth:`snapshot`, :meth:`waits_for`), but must not lock, unlock or wait."""
        self._listeners.append(listener)
