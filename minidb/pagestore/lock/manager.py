"""The lock manager (Shore's ``lock_m``): hierarchical locks, durations, waiting, Dreadlocks.

A transaction (any object with an int ``txn_id``; a larger id is a younger
transaction) calls :meth:`LockManager.lock` with a :class:`~.lockid.LockId`,
a :class:`~.modes.LockMode`, a :class:`~.request.Duration` and a timeout.

**Implicit parent locks.** Before a lock on a child, each ancestor in the
hierarchy is locked from the top down in the parent mode of the child's mode
(IS for IS/SH, IX for IX/SIX/UD/EX), unless already held in a mode that
covers it. If an ancestor is held in a mode that *implicitly* covers the
request (EX covers everything below; SH, SIX, UD cover IS and SH below), the
request is granted without taking any lock. Example: T1 asks EX on
r(1.3.48.2) and holds nothing: it gets IX on v(1), IX on s(1.3), IX on
p(1.3.48), then EX on r(1.3.48.2) - four locks.

**Granting** follows :mod:`.queue`: first come first served for new requests,
conversions first. For each lock on the way (the ancestors missing, then the
lock itself) :meth:`LockManager.lock` does one of three things: *grant at
once* (a lock nobody holds gets a new head with the request alone in its
queue; a lock others hold, if nobody waits and the mode is compatible with
every holder), *convert* (the transaction holds the lock: it asks for the
supremum of what it holds and what it wants, at once if compatible with the
other holders), or *wait in the queue*. A request that must wait blocks its
thread until it is granted, it times out (``timeout`` seconds; None waits
forever; 0 fails at once with :class:`~.errors.LockTimeout` and never waits),
or Dreadlocks makes it a victim: see :mod:`.waiting`, the part of the manager
that runs in waiting threads. A failed request changes nothing, except that
locks on ancestors taken on the way stay held, as in Shore (the transaction
aborts anyway).

**Durations and release.** :meth:`unlock` releases a short lock (refused for
long locks, extent locks, and locks with locks held below them);
:meth:`release_all` releases everything at commit or abort, children before
parents; a lock with locks below it stays held until they are released, so every
granted request can keep the owner's request one level up (``parent``) and
count the owner's locks directly below it (``n_children``: what :meth:`unlock`
refuses on, and what a release decrements) without looking a lock id up;
:meth:`detach` leaves a prepared transaction's locks without a thread;
:meth:`unlock_duration` releases every lock of at most a duration (Shore's
``unlock_duration``). Extent locks are held to the end of the transaction
whatever the requested duration.

**Quarks** (Shore's ``sm_quark_t``): :meth:`open_quark` puts a marker in the
list of locks a transaction holds; while a quark is open its new locks are
*short* (extent locks excepted: page allocation and freeing need them to the
end of the transaction), and :meth:`close_quark` releases every short lock
acquired since the marker, children first. Quarks nest: closing the inner one
releases only what was acquired since it opened.

**Escalation** (:mod:`.escalation`): after a grant, if a transaction's long
locks under a page or a store reach the threshold of that level, the parent is
converted to SH or EX (without waiting) and the children are released.

**Extent locks** carry Shore's "has pages" bit (:meth:`mark_extent`): set
when a page of the extent is allocated, cleared when its last page is freed.
At commit, :meth:`upgrade_extent_to_free` converts the transaction's extent
lock to EX only if nobody else holds or waits for it and the bit is clear; it
never waits (the transaction has already committed).

**Observability.** ``stats`` (names in :mod:`.owner`) counts requests,
waits, conversions, timeouts, deadlocks, victims, false positives, fingerprint
collisions, escalations; ``trace`` records each step in words.
:meth:`snapshot` and :meth:`dump` show the table, :meth:`waits_for` exports
the waits-for graph as data; :meth:`~.waiting.WaitingThreads.watch` and
:meth:`~.waiting.WaitingThreads.settled` let tests and :mod:`.script` build
deterministic interleavings.

Locking order: one mutex (re-entrant) guards the whole table, every head,
every request and every transaction's state; waiting threads release it in
``Condition.wait``. Listeners are called with it held: they may read the table
(the mutex is re-entrant) but must not lock, unlock or wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from minidb import impl
from minidb.pagestore.ids import ExtentId
from minidb.pagestore.lock.dreadlocks import DEFAULT_BITMAP_BITS, DEFAULT_BITS_PER_FINGERPRINT, Fingerprints
from minidb.pagestore.lock.errors import BadLockRequest, LockTimeout
from minidb.pagestore.lock.escalation import (
    DEFAULT_ESCALATION_THRESHOLD,
    ESCALATION_TARGETS,
    KEEP,
    EscalationPolicy,
)
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import (
    EX,
    NL,
    SH,
    SIX,
    UD,
    LockMode,
    covers,
    escalation_mode,
    implicitly_covers,
    parent_mode,
    supremum,
)
from minidb.pagestore.lock.owner import STAT_NAMES, LockStats, XctLockInfo, check_request, holders_text, txn_id_of
from minidb.pagestore.lock.queue import LockHead
from minidb.pagestore.lock.request import GRANTED, WAITING, Duration, LockRequest
from minidb.pagestore.lock.snapshot import HeadView, LockTableSnapshot, OwnerView, RequestView
from minidb.pagestore.lock.waiting import WaitingThreads
from minidb.pagestore.lock.waitsfor import WaitEdge, WaitNode, WaitsForGraph
from minidb.stats import Trace

_DEPTH = {"r": 3, "p": 2, "k": 2, "s": 1, "v": 0, "x": 0, "u": 0}
_READ_COVER = (SH, SIX, UD, EX)
_LONG, _INSTANT = Duration.LONG, Duration.INSTANT


class LockManager(WaitingThreads):
    """Shore's lock manager; see the module documentation."""

    def __init__(self, escalation_threshold: int | None = DEFAULT_ESCALATION_THRESHOLD,
                 fingerprint_bits: int = DEFAULT_BITMAP_BITS, *,
                 bits_per_fingerprint: int = DEFAULT_BITS_PER_FINGERPRINT, fingerprint_seed: int = 0,
                 trace: bool = False):
        """``escalation_threshold``: long child locks under a page or store that trigger escalation
        (None: never). ``fingerprint_bits``: the size of the Dreadlocks bitmap; each thread's
        fingerprint is ``bits_per_fingerprint`` of them, chosen with ``fingerprint_seed``."""
        self._mutex = threading.RLock()
        self._watchers = threading.Condition(self._mutex)
        self._table: dict[LockId, LockHead] = {}
        self._owners: dict[int, XctLockInfo] = {}
        self._waiters: dict[LockRequest, None] = {}  # an ordered set, in order of waiting
        self._listeners: list[Callable[[str, int, LockId, LockMode], None]] = []
        self.stats = LockStats("lock", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.fingerprints = Fingerprints(fingerprint_bits, bits_per_fingerprint, fingerprint_seed,
                                         on_collision=lambda: self.stats.add("nFingerprintCollisions"))
        self.escalation = EscalationPolicy(escalation_threshold)

    # == the API =========================================================================
    def lock(self, owner: Any, lock_id: LockId, mode: LockMode, duration: Duration = Duration.LONG,
             timeout: float | None = None) -> None:
        """Lock ``lock_id`` in ``mode`` for ``owner``, with implicit parent locks; see the module docs."""
        txn_id = txn_id_of(owner)
        check_request(lock_id, mode, duration, timeout)
        if mode is NL:
            return
        if lock_id.code == "x" and duration is Duration.SHORT:
            duration = _LONG  # extent locks are held to the end of the transaction
        fingerprint = self.fingerprints.current()
        deadline = time.monotonic() + timeout if timeout else None
        with self._mutex:
            st, duration = self._start_request(txn_id, owner, lock_id, duration, fingerprint)
            missing = self._missing_ancestors(st, lock_id, mode, duration)
            if missing is not None:
                self._take(st, lock_id, mode, missing, duration, timeout, deadline)

    def _start_request(self, txn_id: int, owner: Any, lock_id: LockId, duration: Duration,
                       fingerprint: int) -> tuple[XctLockInfo, Duration]:
        """The transaction's state for a new request, and the duration the request gets (short inside a
        quark); its thread's fingerprint noted, the request counted (caller holds the mutex)."""
        st = self._owner_state(txn_id, owner)
        if st.quarks and duration is _LONG and lock_id.code != "x":
            duration = Duration.SHORT  # inside a quark: released when it closes
        if st.waiting is not None:
            raise BadLockRequest(f"T{txn_id} already waits for {st.waiting.head.lock_id}: one thread of a "
                                 f"transaction may wait at a time")
        if st.fingerprint != fingerprint:
            st.fingerprint = fingerprint  # the transaction's thread: a new one, or another one
            if self._waiters:
                self._refresh_digests()  # digests that hold the old thread's bits are stale now
        self.stats.bump("nRequests")
        return st, duration

    def _missing_ancestors(self, st: XctLockInfo, lock_id: LockId, mode: LockMode,
                           duration: Duration) -> list[LockId] | None:
        """The ancestors of ``lock_id`` that ``st`` does not yet hold strongly and long enough for ``mode``,
        top down; None if an ancestor's lock already covers the request (nothing to lock)."""
        pmode = parent_mode(mode)
        missing = []
        for ancestor in lock_id.ancestors():
            up = st.locks.get(ancestor)
            if up is None:
                missing.append(ancestor)
            elif implicitly_covers(up.mode, mode):
                self.stats.bump("nCovered")
                self.trace.emit("T%d %s %s: covered by %s on %s", st.txn_id, mode, lock_id, up.mode, ancestor)
                return None
            elif not covers(up.mode, pmode) or up.duration.rank < duration.rank:
                missing.append(ancestor)
        return missing

    def _take(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, missing: list[LockId], duration: Duration,
              timeout: float | None, deadline: float | None) -> None:
        """Lock the ``missing`` ancestors in the parent mode, top down, then ``lock_id`` in ``mode`` (each
        granted at once, converted or waited for); an INSTANT request gives back what it took; a LONG one
        may escalate."""
        undo: list[tuple] = []
        try:
            for ancestor in missing:
                step = self._acquire(st, ancestor, parent_mode(mode), duration, timeout, deadline, implicit=True)
                if step is not None:
                    undo.append(step)
            step = self._acquire(st, lock_id, mode, duration, timeout, deadline)
            if step is not None:
                undo.append(step)
        finally:
            if duration is _INSTANT:
                self._undo_instant(st, undo)
        ancestors = lock_id.ancestors()
        if duration is _LONG and ancestors:
            self._maybe_escalate(st, lock_id, ancestors)

    def _owner_state(self, txn_id: int, owner: Any) -> XctLockInfo:
        st = self._owners.get(txn_id)
        if st is None:
            st = self._owners[txn_id] = XctLockInfo(txn_id, owner)
        return st

    def unlock(self, owner: Any, lock_id: LockId) -> None:
        """Release a short-duration lock (before the end of the transaction)."""
        txn_id = txn_id_of(owner)
        if not isinstance(lock_id, LockId):
            raise BadLockRequest(f"not a lock id: {lock_id!r}")
        with self._mutex:
            request = self._unlockable(txn_id, lock_id)
            if request is not None:
                self._release(request.owner, request)
                self.trace.emit("T%d unlocks %s", txn_id, lock_id)

    def _unlockable(self, txn_id: int, lock_id: LockId) -> LockRequest | None:
        """``txn_id``'s request on ``lock_id`` if :meth:`unlock` may release it; None if an ancestor's lock
        covers it (nothing to release); BadLockRequest if it may not (caller holds the mutex)."""
        st = self._owners.get(txn_id)
        request = st.locks.get(lock_id) if st is not None else None
        if request is None:
            if st is not None and any(a in st.locks and st.locks[a].mode in _READ_COVER
                                      for a in lock_id.ancestors()):
                self.trace.emit("T%d unlock %s: covered by an ancestor, nothing to release", txn_id, lock_id)
                return None
            raise BadLockRequest(f"T{txn_id} holds no lock on {lock_id}")
        if st.waiting is not None:
            raise BadLockRequest(f"T{txn_id} is waiting for {st.waiting.head.lock_id}; unlock after its "
                                 f"request returns")
        if request.duration is _LONG:
            if lock_id.code == "x":
                raise BadLockRequest(f"T{txn_id} cannot unlock {lock_id}: extent locks are held to the end "
                                     f"of the transaction")
            raise BadLockRequest(f"T{txn_id}'s lock on {lock_id} has long duration: it is released at "
                                 f"commit or abort (release_all)")
        below = request.n_children
        if below:
            raise BadLockRequest(f"T{txn_id} cannot unlock {lock_id}: it still holds {below} lock"
                                 f"{'s' if below > 1 else ''} below it")
        return request

    def unlock_duration(self, owner: Any, duration: Duration) -> int:
        """Release every lock of ``owner`` whose duration is at most ``duration``; return how many.

        With ``Duration.SHORT`` this releases the short locks and keeps the long
        ones (Shore's ``unlock_duration``, what closing a quark does).
        """
        txn_id = txn_id_of(owner)
        if not isinstance(duration, Duration):
            raise BadLockRequest(f"not a lock duration: {duration!r}")
        if duration is _LONG:
            return self._release_all(txn_id)
        with self._mutex:
            st = self._owners.get(txn_id)
            if st is None:
                return 0
            chosen = self._release_short(st, frozenset(), duration)
            self.trace.emit("T%d releases its %d %s locks", txn_id, chosen, duration)
            return chosen

    def _release_short(self, st: XctLockInfo, kept: frozenset[LockId], duration: Duration = Duration.SHORT) -> int:
        """Release ``st``'s locks of at most ``duration`` except those in ``kept``, children first."""
        if st.waiting is not None:
            raise BadLockRequest(f"T{st.txn_id} is waiting for {st.waiting.head.lock_id}")
        chosen = [r for lid, r in st.locks.items() if r.duration.rank <= duration.rank and lid not in kept]
        chosen.sort(key=lambda r: -_DEPTH[r.head.lock_id.code])
        for request in chosen:
            self._release(st, request)
        return len(chosen)

    # -- quarks -----------------------------------------------------------------------------
    def open_quark(self, owner: Any) -> int:
        """Open a quark for ``owner``: its locks from now on are short; return the nesting depth."""
        txn_id = txn_id_of(owner)
        with self._mutex:
            st = self._owner_state(txn_id, owner)
            st.quarks.append(frozenset(st.locks))
            self.trace.emit("T%d opens quark %d (%d locks held)", txn_id, len(st.quarks), len(st.locks))
            return len(st.quarks)

    def close_quark(self, owner: Any) -> int:
        """Close ``owner``'s innermost quark: release the short locks acquired since it opened."""
        txn_id = txn_id_of(owner)
        with self._mutex:
            st = self._owners.get(txn_id)
            if st is None or not st.quarks:
                raise BadLockRequest(f"T{txn_id} has no open quark (its locks were all released at its end, "
                                     f"or the quark was closed already)")
            released = self._release_short(st, st.quarks[-1])
            depth = len(st.quarks)
            st.quarks.pop()
            self.trace.emit("T%d closes quark %d: released %d locks", txn_id, depth, released)
            return released

    def quark_depth(self, owner: Any) -> int:
        """How many quarks ``owner`` has open."""
        with self._mutex:
            st = self._owners.get(txn_id_of(owner))
            return len(st.quarks) if st is not None else 0

    def release_all(self, owner: Any) -> None:
        """Release every lock of ``owner`` (at commit or abort), children before parents."""
        self._release_all(txn_id_of(owner))

    def detach(self, owner: Any) -> None:
        """``owner`` has no thread any more: a prepared transaction (two-phase commit), which holds its
        locks but waits for nothing until it ends. Its fingerprint is cleared, so that a thread that
        ran it and now waits for one of its locks does not find itself in its digest (a false cycle)."""
        with self._mutex:
            st = self._owners.get(txn_id_of(owner))
            if st is None:
                return
            if st.waiting is not None:
                raise BadLockRequest(f"T{st.txn_id} is waiting for {st.waiting.head.lock_id}: it cannot be detached")
            st.fingerprint = 0
            if self._waiters:
                self._refresh_digests()

    def held(self, owner: Any) -> dict[LockId, LockMode]:
        """The locks ``owner`` holds (granted modes), in hierarchy order."""
        txn_id = txn_id_of(owner)
        with self._mutex:
            st = self._owners.get(txn_id)
            if st is None:
                return {}
            return {lid: st.locks[lid].mode for lid in sorted(st.locks)}

    def query(self, lock_id: LockId, owner: Any = None) -> LockMode:
        """The mode ``owner`` holds ``lock_id`` in (NL if none); without an owner, the
        supremum of every granted mode (NL: nobody holds it)."""
        with self._mutex:
            if owner is not None:
                st = self._owners.get(txn_id_of(owner))
                request = st.locks.get(lock_id) if st is not None else None
                return request.mode if request is not None else NL
            head = self._table.get(lock_id)
            return head.granted_mode if head is not None else NL

    def set_escalation(self, target: Any, threshold: int | None) -> None:
        """Set the escalation threshold of one object (a page or store :class:`LockId`) or of one
        transaction (an owner); 0 or None disables escalation there."""
        if isinstance(target, LockId):
            _escalation_target(target, ESCALATION_TARGETS)
            self.escalation.set_object(target, threshold)
        else:
            self.escalation.set_owner(txn_id_of(target), threshold)

    def set_escalation_thresholds(self, to_page: Any = KEEP, to_store: Any = KEEP,
                                  store: LockId | None = None) -> None:
        """The thresholds per level (Shore's ``set_escalation_thresholds``): ``to_page``, record locks
        under one page; ``to_store``, page and key locks under one store. Of the whole manager, or of
        one ``store`` (its pages and itself). 0 or None disables a level; :data:`KEEP` leaves it."""
        if store is not None:
            _escalation_target(store, ("s",))
        with self._mutex:
            self.escalation.set_levels(to_page, to_store, store)

    def escalation_threshold(self, target: LockId, owner: Any = None) -> int | None:
        """The threshold that applies to ``target`` (a page or store) for ``owner`` (None: never)."""
        _escalation_target(target, ESCALATION_TARGETS)
        return self.escalation.threshold(target, txn_id_of(owner) if owner is not None else -1)

    def held_by_other(self, owner: Any, lock_id: LockId) -> bool:
        """Whether a transaction other than ``owner`` holds or waits for ``lock_id`` (in any mode)."""
        txn_id = txn_id_of(owner)
        with self._mutex:
            head = self._table.get(lock_id)
            return head is not None and any(r.owner.txn_id != txn_id for r in head.queue)

    # -- extent locks (commit-time freeing of extents) ----------------------------------
    def extents_held(self, owner: Any) -> list[ExtentId]:
        """The extents ``owner`` holds locks on (the candidates for freeing at its commit)."""
        with self._mutex:
            st = self._owners.get(txn_id_of(owner))
            if st is None:
                return []
            return [ExtentId(*lid.numbers) for lid in sorted(st.locks) if lid.code == "x"]

    def _held_extent_lock(self, owner: Any, xid: ExtentId):
        """``owner``'s request for the lock on extent ``xid`` (caller holds the mutex)."""
        lock_id = LockId.extent(xid)
        st = self._owners.get(txn_id_of(owner))
        request = st.locks.get(lock_id) if st is not None else None
        if request is None:
            raise BadLockRequest(f"T{txn_id_of(owner)} holds no lock on {lock_id}")
        return request

    def mark_extent(self, owner: Any, xid: ExtentId, has_allocated_pages: bool) -> None:
        """Set or clear the extent lock's has-page-allocated bit (the owner must hold the lock)."""
        with self._mutex:
            request = self._held_extent_lock(owner, xid)
            request.head.has_page_alloc = bool(has_allocated_pages)

    def upgrade_extent_to_free(self, owner: Any, xid: ExtentId) -> bool:
        """At commit: convert ``owner``'s extent lock to EX if it is the only holder and no page of
        the extent is marked allocated; True means the caller may free the extent."""
        with self._mutex:
            request = self._held_extent_lock(owner, xid)
            head = request.head
            if head.has_page_alloc or len(head.queue) > 1:
                others = " ".join(r.describe() for r in head.queue if r is not request)
                self.trace.emit("T%d cannot free %s: %s", txn_id_of(owner), head.lock_id,
                                f"{others} hold it" if others else "it has allocated pages")
                return False
            if request.mode is not EX:
                self.stats.bump("nConversions")
            request.mode = EX
            self.trace.emit("T%d EX %s: upgraded to free the extent", txn_id_of(owner), head.lock_id)
            return True

    # -- observing ------------------------------------------------------------------------
    def snapshot(self) -> LockTableSnapshot:
        with self._mutex:
            heads = []
            for lid in sorted(self._table):
                head = self._table[lid]
                heads.append(HeadView(lid, head.granted_mode, tuple(
                    RequestView(r.owner.txn_id, r.mode, r.convert_mode, r.status.value, r.duration)
                    for r in head.queue), head.has_page_alloc))
            owners = []
            for txn_id in sorted(self._owners):
                st = self._owners[txn_id]
                waiting = st.waiting
                owners.append(OwnerView(
                    txn_id, tuple((lid, st.locks[lid].mode, st.locks[lid].duration) for lid in sorted(st.locks)),
                    waiting.head.lock_id if waiting is not None else None,
                    waiting.wanted if waiting is not None else None,
                    st.fingerprint, self._digest_of(st)))
            return LockTableSnapshot(tuple(heads), tuple(owners), self.fingerprints.bitmap_bits)

    def dump(self, names: Callable[[LockId], str] = str) -> str:
        """The lock table as text (see :mod:`.snapshot`); ``names`` prints a lock id."""
        return self.snapshot().dump(names)

    def waits_for(self) -> WaitsForGraph:
        """The exact waits-for graph, as data (nodes: every transaction with locks or a wait)."""
        with self._mutex:
            nodes = []
            for txn_id in sorted(self._owners):
                st = self._owners[txn_id]
                w = st.waiting
                nodes.append(WaitNode(txn_id, w.head.lock_id if w else None, w.wanted if w else None,
                                      st.fingerprint, self._digest_of(st) if w else st.fingerprint,
                                      w is not None and w.victim is not None))
            edges = []
            for request in self._waiters:
                for blocker, reason in request.head.blockers(request):
                    edges.append(WaitEdge(request.owner.txn_id, blocker.owner.txn_id, request.head.lock_id,
                                          blocker.mode, reason))
            return WaitsForGraph(tuple(nodes), tuple(edges), self.fingerprints.bitmap_bits)

    # == acquiring =======================================================================
    def _acquire(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, duration: Duration, timeout: float | None,
                 deadline: float | None, implicit: bool = False) -> tuple | None:
        """Grant ``mode`` on one lock (waiting if need be); return how to undo it for INSTANT, or None."""
        request = st.locks.get(lock_id)
        if request is not None:
            new = supremum(request.mode, mode)
            previous = request.mode
            if new is previous:
                if not implicit:
                    self.stats.bump("nExtraneous")
                self._lengthen(st, request, duration)
                return None
            head = request.head
            if head.can_convert(request, new):
                request.mode = new
                self.stats.bump("nConversions")
                self.trace.emit("T%d %s->%s %s: converted", st.txn_id, previous, new, lock_id)
                if head.n_waiting:
                    # The waiters here may now wait for this stronger mode (the digests change), or be
                    # let in by it: the table is not monotonic, a held UD keeps a new IS out and the SIX
                    # it converts to does not. Nothing else would wake such a waiter.
                    self._after_change(head)
            else:
                if timeout == 0:
                    head.start_conversion(request, new)
                    blockers = head.blockers(request)
                    head.cancel(request)
                    raise self._immediate_failure(st, lock_id, new, blockers, previous)
                head.start_conversion(request, new)
                self._wait(st, request, deadline, timeout)
                self.stats.bump("nConversions")
            self._lengthen(st, request, duration)
            return ("convert", request, previous)
        head = self._table.get(lock_id)
        if head is None:
            return ("new", self._grant_first(st, lock_id, mode, duration, implicit))
        if head.can_grant_new(mode):
            request = LockRequest(st, head, mode, duration)
            head.add(request)
            self._hold(st, request)
            self._count_grant(st, lock_id, mode, implicit)
            return ("new", request)
        request = LockRequest(st, head, mode, duration, WAITING)
        head.add(request)
        if timeout == 0:
            blockers = head.blockers(request)
            head.cancel(request)
            if not head.queue:
                del self._table[lock_id]
            raise self._immediate_failure(st, lock_id, mode, blockers)
        self._wait(st, request, deadline, timeout)
        return ("new", request)

    def _grant_first(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, duration: Duration,
                     implicit: bool = False) -> LockRequest:
        """Grant the first request on a lock nobody holds: a new head in the table, the request alone in
        its queue (the books and the statistics too)."""
        head = self._table[lock_id] = LockHead(lock_id)
        request = LockRequest(st, head, mode, duration)
        head.add(request)
        self._hold(st, request)
        self._count_grant(st, lock_id, mode, implicit)
        return request

    def _count_grant(self, st: XctLockInfo, lock_id: LockId, mode: LockMode, implicit: bool) -> None:
        self.stats.bump("nGranted")
        if implicit:
            self.stats.bump("nImplicitLocks")
        self.trace.emit("T%d %s %s: granted%s", st.txn_id, mode, lock_id, " (implicit)" if implicit else "")

    def _immediate_failure(self, st: XctLockInfo, lock_id: LockId, mode: LockMode,
                           blockers: list[tuple[LockRequest, str]], previous: LockMode | None = None) -> LockTimeout:
        self.stats.bump("nTimeouts")
        what = f"{previous}->{mode}" if previous is not None else str(mode)
        self.trace.emit("T%d %s %s: not granted at once (timeout 0): %s", st.txn_id, what, lock_id,
                        holders_text(blockers))
        return LockTimeout(f"T{st.txn_id} {what} on {lock_id}: not granted at once (timeout 0): "
                           f"{holders_text(blockers)}")

    def _hold(self, st: XctLockInfo, request: LockRequest) -> None:
        """Bookkeeping of a newly granted request: the owner's locks and child counts."""
        lock_id = request.head.lock_id
        st.locks[lock_id] = request
        path = lock_id.ancestors()
        if path:
            parent = path[-1]
            # Held: a lock's ancestors are locked before it, and a lock with locks below it is not
            # released before them (unlock refuses, the other releases go children first; escalation
            # may leave short ones, see XctLockInfo.released_parents).
            parent_request = request.parent = st.locks[parent]  # kept for the release
            parent_request.n_children += 1
            if request.duration is _LONG and parent.code in ESCALATION_TARGETS:
                st.long_children[parent] = st.long_children.get(parent, 0) + 1
        if st.released_parents:
            adopted = st.released_parents.pop(lock_id, None)
            if adopted is not None:  # locks left below an escalated lock: this request is their parent now
                request.n_children = adopted.n_children
                for child in st.locks.values():
                    if child.parent is adopted:
                        child.parent = request

    def _lengthen(self, st: XctLockInfo, request: LockRequest, duration: Duration) -> None:
        if duration.rank <= request.duration.rank:
            return
        if duration is _LONG:
            path = request.head.lock_id.ancestors()
            parent = path[-1] if path else None
            if parent is not None and parent.code in ESCALATION_TARGETS:
                st.long_children[parent] = st.long_children.get(parent, 0) + 1
        request.duration = duration

    def _undo_instant(self, st: XctLockInfo, undo: list[tuple]) -> None:
        """An INSTANT request is gone once granted: release what it took, child first."""
        for step in reversed(undo):
            request = step[1]
            if step[0] == "new":
                if request.status is GRANTED and st.locks.get(request.head.lock_id) is request:
                    self._release(st, request)
            elif request.status is GRANTED:
                request.mode = step[2]
                self._after_change(request.head)

    # == releasing =======================================================================
    def _release_all(self, txn_id: int) -> int:
        with self._mutex:
            st = self._owners.get(txn_id)
            if st is None:
                self.escalation.forget_owner(txn_id)
                return 0
            if st.waiting is not None:
                raise BadLockRequest(f"T{txn_id} is waiting for {st.waiting.head.lock_id}; release its locks "
                                     f"after its request returns")
            del self._owners[txn_id]
            self.escalation.forget_owner(txn_id)
            requests = sorted(st.locks.values(), key=lambda r: -_DEPTH[r.head.lock_id.code])
            for request in requests:
                self._release(st, request)
            self.trace.emit("T%d releases all its locks (%d)", txn_id, len(requests))
            return len(requests)

    def _release(self, st: XctLockInfo, request: LockRequest) -> None:
        head = request.head
        lock_id = head.lock_id
        head.remove(request)
        del st.locks[lock_id]
        if request.n_children:
            st.released_parents[lock_id] = request  # short locks below it stay (escalation)
        parent_request = request.parent
        if parent_request is not None:
            parent_request.n_children -= 1
            parent = lock_id.ancestors()[-1]  # the child's id names it, even once the parent is released
            if not parent_request.n_children and st.released_parents.get(parent) is parent_request:
                del st.released_parents[parent]
            if request.duration is _LONG and parent.code in ESCALATION_TARGETS:
                _decrement(st.long_children, parent)
        self.stats.bump("nReleases")
        self._after_change(head)

    def _after_change(self, head: LockHead, refresh: bool = False) -> None:
        """A head's queue changed: grant what can be granted; if anyone waited here, the digests change."""
        refresh = refresh or head.n_waiting > 0
        for request in head.wakeup():
            st = request.owner
            if st.locks.get(head.lock_id) is not request:
                self._hold(st, request)
                self.stats.bump("nGranted")
                self.trace.emit("T%d %s %s: granted after waiting", st.txn_id, request.mode, head.lock_id)
            else:
                self.trace.emit("T%d %s %s: conversion granted after waiting", st.txn_id, request.mode,
                                head.lock_id)
            self._notify("granted", st.txn_id, head.lock_id, request.mode)
            self._signal(request)
        if refresh:
            self._refresh_digests()
        if not head.queue and self._table.get(head.lock_id) is head:
            self._drop(head)

    def _drop(self, head: LockHead) -> None:
        """An empty head leaves the table (nobody holds or waits for its lock any more)."""
        del self._table[head.lock_id]

    # == escalation ======================================================================
    def _maybe_escalate(self, st: XctLockInfo, lock_id: LockId, ancestors: tuple[LockId, ...]) -> None:
        for target in reversed(ancestors):
            count = st.long_children.get(target, 0)
            if not count or target.code not in ESCALATION_TARGETS:
                continue
            threshold = self.escalation.threshold(target, st.txn_id)
            if threshold is not None and count >= threshold:
                self._escalate(st, target, count, threshold)

    def _escalate(self, st: XctLockInfo, target: LockId, count: int, threshold: int) -> None:
        parent = st.locks.get(target)
        if parent is None or parent.status is not GRANTED:
            return
        new = supremum(parent.mode, escalation_mode(parent.mode))
        head = parent.head
        if new is not parent.mode and not head.can_convert(parent, new):
            self.stats.bump("nEscalationsRefused")
            others = [r.describe() for r in head.queue if r is not parent and r.status is not WAITING]
            self.trace.emit("T%d escalation to %s on %s refused: %s hold it", st.txn_id, new, target,
                            " ".join(others))
            return
        previous = parent.mode
        parent.mode = new
        self._lengthen(st, parent, _LONG)
        below = [r for lid, r in st.locks.items() if r.duration is _LONG and target.is_ancestor_of(lid)]
        below.sort(key=lambda r: -_DEPTH[r.head.lock_id.code])
        for request in below:
            self._release(st, request)
        self.stats.bump("nEscalations")
        self.trace.emit("T%d escalates %s->%s on %s: %d locks below reached the threshold %d; released %d",
                        st.txn_id, previous, new, target, count, threshold, len(below))
        if new is not previous:
            self._after_change(head)


LOCK_MANAGER = impl.hot_spot(LockManager, project="lock_manager")  # built only here: a project's class runs in its place


def _escalation_target(target: Any, codes: tuple[str, ...]) -> None:
    if not isinstance(target, LockId) or target.code not in codes:
        if codes == ("s",):
            raise BadLockRequest(f"{target!r} is not a store's lock id (LockId.store(sid))")
        raise BadLockRequest(f"{target} is not an escalation target: only pages and stores are")


def _decrement(counts: dict[LockId, int], key: LockId) -> None:
    value = counts.get(key, 0) - 1
    if value > 0:
        counts[key] = value
    else:
        counts.pop(key, None)
