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
conversions first. A request that must wait blocks its thread on a
:class:`threading.Condition` of its own (sharing the manager's mutex) until
it is granted, it times out (``timeout`` seconds; None waits forever; 0 fails at
once with :class:`~.errors.LockTimeout` and never waits), or Dreadlocks makes
it a victim (:class:`~.errors.DeadlockVictim`, raised in the victim's own
thread). A failed request changes nothing, except that locks on ancestors
taken on the way stay held, as in Shore (the transaction aborts anyway).

**Dreadlocks** (:mod:`.dreadlocks`) runs in the blocked threads: a thread
that must block looks for its own fingerprint in the digests of the
transactions it waits for; finding it means a cycle, and the younger of the
two transactions is the victim. Every waiting transaction's digest (its
fingerprint ORed with the digests of those it waits for) is kept exact at each
change of the waits, so the thread whose request closes a cycle finds it at
once; a waiter whose fingerprint appears in a digest it depends on because of
someone else's change is woken to run the test itself.

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

**Observability.** ``stats`` counts requests, waits, conversions, timeouts,
deadlocks, victims, false positives, fingerprint collisions, escalations;
``trace`` records each step in words. :meth:`snapshot` and :meth:`dump` show
the table, :meth:`waits_for` exports the waits-for graph as data.
:meth:`watch` waits (without sleeping) until a condition on the lock table
holds, re-evaluated whenever a thread blocks, stops waiting or is poked;
:meth:`settled` is the usual condition: every waiting thread is blocked and
has nothing left to recompute. Tests and :mod:`.script` build deterministic
interleavings on it.

**Speed.** Most requests are for a lock nobody else holds, under parents the
transaction already holds. Such a request takes a fast path in :meth:`lock`:
it looks up the parent's request only, and checks the ancestors above it along
the requests' ``parent`` links (a lock's ancestors are held as long as it is,
so no lock id is hashed for them); it is granted alone in a head, with the
bookkeeping inline. Its :meth:`unlock` skips the wakeup (nobody else is in the
queue), and leaves the head and the request to be reused by the next such
grant. ``LockManager(careful=True)`` takes none of these paths: every ancestor
looked up, every grant and release through the queue's methods; a seeded test
runs both on the same calls and compares outcomes, dumps, statistics and
traces.

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

from minidb.pagestore.ids import ExtentId
from minidb.pagestore.lock.dreadlocks import DEFAULT_BITMAP_BITS, DEFAULT_BITS_PER_FINGERPRINT, Fingerprints, format_bits
from minidb.pagestore.lock.errors import BadLockRequest, DeadlockVictim, LockTimeout
from minidb.pagestore.lock.escalation import (
    DEFAULT_ESCALATION_THRESHOLD, ESCALATION_TARGETS, KEEP, EscalationPolicy,
)
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import (
    EX, MODES, NL, SH, SIX, UD, LockMode, covers, escalation_mode, implicitly_covers, parent_mode, supremum,
)
from minidb.pagestore.lock.queue import LockHead
from minidb.pagestore.lock.request import CONVERTING, GRANTED, WAITING, Duration, LockRequest
from minidb.pagestore.lock.snapshot import HeadView, LockTableSnapshot, OwnerView, RequestView
from minidb.pagestore.lock.waitsfor import WaitEdge, WaitNode, WaitsForGraph, exact_edges, in_cycle
from minidb.stats import Stats, Trace

STAT_NAMES = (
    "nRequests",            # calls of lock()
    "nGranted",             # requests granted (new ones, implicit parents included)
    "nImplicitLocks",       # parent locks taken implicitly
    "nCovered",             # requests an ancestor's lock already covered: no lock taken
    "nExtraneous",          # re-requests of a mode already held (Shore's lock_extraneous_req_cnt)
    "nConversions",         # conversions granted
    "nWaits",               # requests that had to wait
    "nTimeouts",            # requests that failed on their timeout (0 included)
    "nDeadlocks",           # cycles Dreadlocks found that chose a victim
    "nVictimSelf",          # ... the detecting thread's own transaction
    "nVictimOther",         # ... the other transaction
    "nFalseDeadlocks",      # detections the exact waits-for graph did not confirm
    "nFingerprintCollisions",  # threads given bits another live thread uses
    "nEscalations",
    "nEscalationsRefused",  # escalations that would have had to wait
    "nReleases",            # locks released
)

_DEPTH = {"r": 3, "p": 2, "k": 2, "s": 1, "v": 0, "x": 0, "u": 0}
_READ_COVER = (SH, SIX, UD, EX)
_LONG, _INSTANT = Duration.LONG, Duration.INSTANT
_SPARE_HEADS = 64
# For each requested mode, the modes of an ancestor that already grant it; for each parent mode, the
# modes of an ancestor that are enough for it (the tables of modes.implicitly_covers and modes.covers).
# Both are tuples indexed by the modes' table index (``mode._i``), each a tuple of booleans indexed by the
# ancestor's mode: a request reads them for every ancestor, and indexing a tuple costs less than hashing
# an Enum member (whose hash is computed in Python).
_COVERED_BY = tuple(tuple(implicitly_covers(a, m) for a in MODES) for m in MODES)
_ENOUGH_FOR = tuple(tuple(covers(a, m) for a in MODES) for m in MODES)
_PARENT_OF = tuple(parent_mode(m) for m in MODES)


class _LockStats(Stats):
    """The lock manager's statistics: counted under the manager's mutex, so without Stats' own lock
    (``counts``, the values by name, is what the manager increments in place)."""

    def __init__(self, group: str, names: tuple[str, ...]):
        super().__init__(group, names)
        self.counts = self._values

    def bump(self, name: str) -> None:
        self._values[name] += 1


class _Owner:
    """The lock manager's state of one transaction (Shore's ``xct_lock_info_t``)."""

    __slots__ = ("txn_id", "owner", "locks", "waiting", "digest", "fingerprint", "long_children", "quarks",
                 "released_parents")

    def __init__(self, txn_id: int, owner: Any):
        self.txn_id = txn_id
        self.owner = owner
        self.locks: dict[LockId, LockRequest] = {}  # granted (and converting) requests
        self.waiting: LockRequest | None = None
        self.digest = 0  # while waiting
        self.fingerprint = 0  # of the thread that last asked for a lock for it
        self.long_children: dict[LockId, int] = {}  # long ones below pages and stores (escalation)
        self.quarks: list[frozenset[LockId]] = []  # open quarks: the locks held when each opened
        # Escalation releases the long locks below its target and keeps the short ones, so a released
        # request can still have locks below it: it stays their parent (and counts them) until they
        # are released or the lock is granted again, whose new request adopts them (_hold).
        self.released_parents: dict[LockId, LockRequest] = {}


def _txn_id_of(owner: Any) -> int:
    txn_id = getattr(owner, "txn_id", None)
    if type(txn_id) is not int:  # bool and other int subclasses fail too
        raise BadLockRequest(f"a lock owner needs an int attribute txn_id; {owner!r} has {txn_id!r}")
    return txn_id


def _check_request(lock_id: Any, mode: Any, duration: Any, timeout: Any) -> None:
    if timeout is None and type(lock_id) is LockId and type(mode) is LockMode and type(duration) is Duration:
        return  # the usual request, checked by its types alone
    if not isinstance(lock_id, LockId):
        raise BadLockRequest(f"not a lock id: {lock_id!r} (build one with LockId.record(rid), LockId.page(pid), ...)")
    if not isinstance(mode, LockMode):
        raise BadLockRequest(f"not a lock mode: {mode!r} (one of {', '.join(m.name for m in LockMode)})")
    if not isinstance(duration, Duration):
        raise BadLockRequest(f"not a lock duration: {duration!r} (INSTANT, SHORT or LONG)")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or timeout < 0 or timeout != timeout):
        raise BadLockRequest(f"a lock timeout is None (wait forever) or seconds >= 0, not {timeout!r}")


def _label(txn_id: int) -> str:
    return f"T{txn_id}"


def _holders_text(blockers: list[tuple[LockRequest, str]]) -> str:
    return ", ".join(f"{r.describe()} ({reason})" for r, reason in blockers) or "nobody"


class LockManager:
    """Shore's lock manager; see the module documentation."""

    def __init__(self, escalation_threshold: int | None = DEFAULT_ESCALATION_THRESHOLD,
                 fingerprint_bits: int = DEFAULT_BITMAP_BITS, *,
                 bits_per_fingerprint: int = DEFAULT_BITS_PER_FINGERPRINT, fingerprint_seed: int = 0,
                 trace: bool = False, careful: bool = False):
        """``escalation_threshold``: long child locks under a page or store that trigger escalation
        (None: never). ``fingerprint_bits``: the size of the Dreadlocks bitmap; each thread's
        fingerprint is ``bits_per_fingerprint`` of them, chosen with ``fingerprint_seed``.
        ``careful``: take no fast path (every ancestor looked up, every grant through the queue's
        methods, every unlock a full release): the reference the fast paths are tested against."""
        self._fast = not careful
        self._mutex = threading.RLock()
        self._enter, self._exit = self._mutex.acquire, self._mutex.release
        self._watchers = threading.Condition(self._mutex)
        self._table: dict[LockId, LockHead] = {}
        self._spare_heads: list[LockHead] = []  # empty heads, kept for reuse (at most _SPARE_HEADS)
        self._owners: dict[int, _Owner] = {}
        self._waiters: dict[LockRequest, None] = {}  # an ordered set, in order of waiting
        self._listeners: list[Callable[[str, int, LockId, LockMode], None]] = []
        self.stats = _LockStats("lock", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.fingerprints = Fingerprints(fingerprint_bits, bits_per_fingerprint, fingerprint_seed,
                                         on_collision=lambda: self.stats.add("nFingerprintCollisions"))
        self._thread_holders = self.fingerprints.threads
        self.escalation = EscalationPolicy(escalation_threshold)

    # == the API =========================================================================
    def lock(self, owner: Any, lock_id: LockId, mode: LockMode, duration: Duration = Duration.LONG,
             timeout: float | None = None) -> None:
        """Lock ``lock_id`` in ``mode`` for ``owner``, with implicit parent locks; see the module docs."""
        try:
            txn_id = owner.txn_id
        except AttributeError:
            txn_id = None
        if type(txn_id) is not int:
            txn_id = _txn_id_of(owner)  # raises
        if not (timeout is None and type(lock_id) is LockId and type(mode) is LockMode
                and type(duration) is Duration):  # the usual request passes on its types alone
            _check_request(lock_id, mode, duration, timeout)
        if mode is NL:
            return
        if lock_id.code == "x" and duration is Duration.SHORT:
            duration = _LONG  # extent locks are held to the end of the transaction
        holder = self._thread_holders.holder  # what Fingerprints.current() reads, without a call
        fingerprint = holder.fingerprint if holder is not None else self.fingerprints.current()
        deadline = time.monotonic() + timeout if timeout else None
        self._enter()  # the mutex (cheaper than a with statement on an RLock)
        try:
            st = self._owners.get(txn_id)
            if st is None:
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
            counts = self.stats.counts
            counts["nRequests"] += 1
            locks = st.locks
            ancestors = lock_id.ancestors()
            rank = duration.rank
            fast = self._fast and not st.released_parents
            held = None  # the parent's request, once the chain of ancestors is found held and enough
            if ancestors:
                pmode = _PARENT_OF[mode._i]  # type: ignore[attr-defined]
                covering, enough = _COVERED_BY[mode._i], _ENOUGH_FOR[pmode._i]  # type: ignore[attr-defined]
                if fast:
                    # The parent held: its ancestors are held too (a lock is released after the locks
                    # below it; escalation's short leftovers are the exception, hence released_parents),
                    # each one ``parent`` link up, so the chain is checked without looking a lock id up.
                    # Any other outcome (an ancestor missing, too weak, too short, or one that covers the
                    # request) is left to the careful loop.
                    up = held = locks.get(ancestors[-1])
                    while up is not None:
                        i = up.mode._i
                        if covering[i] or not enough[i] or up.duration.rank < rank:
                            held = None
                            break
                        up = up.parent
            if held is not None or (fast and not ancestors):
                missing: list[LockId] = []
                if duration is not _INSTANT and lock_id not in self._table:
                    # The fast path: the parents are held, and nobody holds or waits for this lock (nor
                    # does the owner: a held lock's head is in the table). What _grant_first does, with
                    # _hold and _count_grant inline (most requests come here): the request alone in a
                    # head, the owner's locks, the parent's child count, the statistics.
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
                    return
            else:
                # The careful way (the reference the fast path is tested against): each ancestor looked up.
                missing = []  # the ancestors not yet held strongly and long enough
                for ancestor in ancestors:
                    up = locks.get(ancestor)
                    if up is None:
                        missing.append(ancestor)
                    elif covering[up.mode._i]:
                        counts["nCovered"] += 1
                        self.trace.emit("T%d %s %s: covered by %s on %s", txn_id, mode, lock_id, up.mode, ancestor)
                        return
                    elif not enough[up.mode._i] or up.duration.rank < rank:
                        missing.append(ancestor)
            undo: list[tuple] = []
            try:
                for ancestor in missing:
                    step = self._acquire(st, ancestor, pmode, duration, timeout, deadline, implicit=True)
                    if step is not None:
                        undo.append(step)
                step = self._acquire(st, lock_id, mode, duration, timeout, deadline)
                if step is not None:
                    undo.append(step)
            finally:
                if duration is _INSTANT:
                    self._undo_instant(st, undo)
            if duration is _LONG and ancestors:
                self._maybe_escalate(st, lock_id, ancestors)
        finally:
            self._exit()

    def _owner_state(self, txn_id: int, owner: Any) -> _Owner:
        st = self._owners.get(txn_id)
        if st is None:
            st = self._owners[txn_id] = _Owner(txn_id, owner)
        return st

    def unlock(self, owner: Any, lock_id: LockId) -> None:
        """Release a short-duration lock (before the end of the transaction)."""
        try:
            txn_id = owner.txn_id
        except AttributeError:
            txn_id = None
        if type(txn_id) is not int:
            txn_id = _txn_id_of(owner)  # raises
        if not isinstance(lock_id, LockId):
            raise BadLockRequest(f"not a lock id: {lock_id!r}")
        self._enter()
        try:
            st = self._owners.get(txn_id)
            request = st.locks.get(lock_id) if st is not None else None
            if request is None:
                if st is not None and any(a in st.locks and st.locks[a].mode in _READ_COVER
                                          for a in lock_id.ancestors()):
                    self.trace.emit("T%d unlock %s: covered by an ancestor, nothing to release", txn_id, lock_id)
                    return
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
            head = request.head
            if len(head.queue) == 1 and self._fast and not head.has_page_alloc and not st.released_parents:
                # The fast path: nobody else holds or waits here, so _release without the wakeup; the lock
                # is short (long ones were refused above), so it is in no long-children count. The head
                # is kept for reuse, and so is the request, left in its queue (see _first_request).
                del st.locks[lock_id]
                parent = request.parent
                if parent is not None:
                    parent.n_children -= 1  # counted when the lock was granted (_hold)
                self.stats.counts["nReleases"] += 1
                del self._table[lock_id]
                if len(self._spare_heads) < _SPARE_HEADS:
                    self._spare_heads.append(head)
                else:
                    head.queue.clear()
            else:
                self._release(st, request)
            if self.trace.enabled:
                self.trace.emit("T%d unlocks %s", txn_id, lock_id)
        finally:
            self._exit()

    def unlock_duration(self, owner: Any, duration: Duration) -> int:
        """Release every lock of ``owner`` whose duration is at most ``duration``; return how many.

        With ``Duration.SHORT`` this releases the short locks and keeps the long
        ones (Shore's ``unlock_duration``, what closing a quark does).
        """
        txn_id = _txn_id_of(owner)
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

    def _release_short(self, st: _Owner, kept: frozenset[LockId], duration: Duration = Duration.SHORT) -> int:
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
        txn_id = _txn_id_of(owner)
        with self._mutex:
            st = self._owner_state(txn_id, owner)
            st.quarks.append(frozenset(st.locks))
            self.trace.emit("T%d opens quark %d (%d locks held)", txn_id, len(st.quarks), len(st.locks))
            return len(st.quarks)

    def close_quark(self, owner: Any) -> int:
        """Close ``owner``'s innermost quark: release the short locks acquired since it opened."""
        txn_id = _txn_id_of(owner)
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
            st = self._owners.get(_txn_id_of(owner))
            return len(st.quarks) if st is not None else 0

    def release_all(self, owner: Any) -> None:
        """Release every lock of ``owner`` (at commit or abort), children before parents."""
        self._release_all(_txn_id_of(owner))

    def detach(self, owner: Any) -> None:
        """``owner`` has no thread any more: a prepared transaction (two-phase commit), which holds its
        locks but waits for nothing until it ends. Its fingerprint is cleared, so that a thread that
        ran it and now waits for one of its locks does not find itself in its digest (a false cycle)."""
        with self._mutex:
            st = self._owners.get(_txn_id_of(owner))
            if st is None:
                return
            if st.waiting is not None:
                raise BadLockRequest(f"T{st.txn_id} is waiting for {st.waiting.head.lock_id}: it cannot be detached")
            st.fingerprint = 0
            if self._waiters:
                self._refresh_digests()

    def held(self, owner: Any) -> dict[LockId, LockMode]:
        """The locks ``owner`` holds (granted modes), in hierarchy order."""
        txn_id = _txn_id_of(owner)
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
                st = self._owners.get(_txn_id_of(owner))
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
            self.escalation.set_owner(_txn_id_of(target), threshold)

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
        return self.escalation.threshold(target, _txn_id_of(owner) if owner is not None else -1)

    def held_by_other(self, owner: Any, lock_id: LockId) -> bool:
        """Whether a transaction other than ``owner`` holds or waits for ``lock_id`` (in any mode)."""
        txn_id = _txn_id_of(owner)
        with self._mutex:
            head = self._table.get(lock_id)
            return head is not None and any(r.owner.txn_id != txn_id for r in head.queue)

    # -- extent locks (commit-time freeing of extents) ----------------------------------
    def extents_held(self, owner: Any) -> list[ExtentId]:
        """The extents ``owner`` holds locks on (the candidates for freeing at its commit)."""
        with self._mutex:
            st = self._owners.get(_txn_id_of(owner))
            if st is None:
                return []
            return [ExtentId(*lid.numbers) for lid in sorted(st.locks) if lid.code == "x"]

    def _held_extent_lock(self, owner: Any, xid: ExtentId):
        """``owner``'s request for the lock on extent ``xid`` (caller holds the mutex)."""
        lock_id = LockId.extent(xid)
        st = self._owners.get(_txn_id_of(owner))
        request = st.locks.get(lock_id) if st is not None else None
        if request is None:
            raise BadLockRequest(f"T{_txn_id_of(owner)} holds no lock on {lock_id}")
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
                self.trace.emit("T%d cannot free %s: %s", _txn_id_of(owner), head.lock_id,
                                f"{others} hold it" if others else "it has allocated pages")
                return False
            if request.mode is not EX:
                self.stats.bump("nConversions")
            request.mode = EX
            self.trace.emit("T%d EX %s: upgraded to free the extent", _txn_id_of(owner), head.lock_id)
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

    def waiting_on(self, owner: Any) -> LockId | None:
        """The lock ``owner`` is waiting for, or None."""
        with self._mutex:
            st = self._owners.get(_txn_id_of(owner))
            return st.waiting.head.lock_id if st is not None and st.waiting is not None else None

    def blocked(self, owner: Any) -> bool:
        """Whether ``owner``'s thread is blocked in the lock manager with nothing left to do."""
        with self._mutex:
            st = self._owners.get(_txn_id_of(owner))
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

    # == acquiring =======================================================================
    def _acquire(self, st: _Owner, lock_id: LockId, mode: LockMode, duration: Duration, timeout: float | None,
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

    def _grant_first(self, st: _Owner, lock_id: LockId, mode: LockMode, duration: Duration,
                     implicit: bool = False, ancestors: tuple[LockId, ...] | None = None) -> LockRequest:
        """Grant the first request on a lock nobody holds (the books and the statistics too)."""
        request = self._first_request(st, lock_id, mode, duration)
        self._hold(st, request, ancestors)
        self._count_grant(st, lock_id, mode, implicit)
        return request

    def _first_request(self, st: _Owner, lock_id: LockId, mode: LockMode, duration: Duration,
                       parent: LockRequest | None = None) -> LockRequest:
        """The granted request of the first transaction on a lock nobody holds: a head (a spare one if there
        is) in the table, with the request alone in its queue; ``parent`` is the owner's request one level
        up, if the caller has it (else :meth:`_hold` finds it).

        A head left by an uncontended unlock still holds, in its queue, the request that was unlocked: that
        request is reused. Nothing else refers to it (it was granted, its owner was not waiting, it had no
        locks below it, and an unlock is no part of a request in progress), so only what describes the new
        request is set again: the flags a wait uses are reset when a wait begins (:meth:`_wait`)."""
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

    def _count_grant(self, st: _Owner, lock_id: LockId, mode: LockMode, implicit: bool) -> None:
        counts = self.stats.counts
        counts["nGranted"] += 1
        if implicit:
            counts["nImplicitLocks"] += 1
        if self.trace.enabled:
            self.trace.emit("T%d %s %s: granted%s", st.txn_id, mode, lock_id, " (implicit)" if implicit else "")

    def _immediate_failure(self, st: _Owner, lock_id: LockId, mode: LockMode,
                           blockers: list[tuple[LockRequest, str]], previous: LockMode | None = None) -> LockTimeout:
        self.stats.bump("nTimeouts")
        what = f"{previous}->{mode}" if previous is not None else str(mode)
        self.trace.emit("T%d %s %s: not granted at once (timeout 0): %s", st.txn_id, what, lock_id,
                        _holders_text(blockers))
        return LockTimeout(f"T{st.txn_id} {what} on {lock_id}: not granted at once (timeout 0): "
                           f"{_holders_text(blockers)}")

    def _hold(self, st: _Owner, request: LockRequest, path: tuple[LockId, ...] | None = None) -> None:
        """Bookkeeping of a newly granted request: the owner's locks and child counts (``path``: the
        lock's ancestors, if the caller has them)."""
        lock_id = request.head.lock_id
        st.locks[lock_id] = request
        if path is None:
            path = lock_id.ancestors()
        if path:
            parent = path[-1]
            # Held: a lock's ancestors are locked before it, and a lock with locks below it is not
            # released before them (unlock refuses, the other releases go children first; escalation
            # may leave short ones, see _Owner.released_parents).
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

    def _lengthen(self, st: _Owner, request: LockRequest, duration: Duration) -> None:
        if duration.rank <= request.duration.rank:
            return
        if duration is _LONG:
            path = request.head.lock_id.ancestors()
            parent = path[-1] if path else None
            if parent is not None and parent.code in ESCALATION_TARGETS:
                st.long_children[parent] = st.long_children.get(parent, 0) + 1
        request.duration = duration

    def _undo_instant(self, st: _Owner, undo: list[tuple]) -> None:
        """An INSTANT request is gone once granted: release what it took, child first."""
        for step in reversed(undo):
            request = step[1]
            if step[0] == "new":
                if request.status is GRANTED and st.locks.get(request.head.lock_id) is request:
                    self._release(st, request)
            elif request.status is GRANTED:
                request.mode = step[2]
                self._after_change(request.head)

    # == waiting and Dreadlocks ==========================================================
    def _wait(self, st: _Owner, request: LockRequest, deadline: float | None, timeout: float | None) -> None:
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
            self.trace.emit("T%d %s %s: waits for %s", st.txn_id, what, lock_id, _holders_text(blockers))
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
                            f"{_holders_text(request.head.blockers(request))}"))
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

    def _dreadlocks(self, st: _Owner, request: LockRequest, first: bool) -> None:
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

    def _digest_of(self, st: _Owner) -> int:
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

    def _deadlock(self, st: _Owner, request: LockRequest, other: _Owner, theirs: int) -> None:
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

    def _fail(self, st: _Owner, request: LockRequest, error: Exception) -> Exception:
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

    def _release(self, st: _Owner, request: LockRequest) -> None:
        head = request.head
        lock_id = head.lock_id
        head.remove(request)
        del st.locks[lock_id]
        if request.n_children:
            st.released_parents[lock_id] = request  # short locks below it stay (escalation)
        parent_request = request.parent
        if parent_request is not None:
            parent_request.n_children -= 1
            parent = lock_id.ancestors()[-1]  # not parent_request.head's: a released request's head is reused
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
            del self._table[head.lock_id]
            if len(self._spare_heads) < _SPARE_HEADS and not head.has_page_alloc:
                self._spare_heads.append(head)  # reused by the next first request on any lock

    # == escalation ======================================================================
    def _maybe_escalate(self, st: _Owner, lock_id: LockId, ancestors: tuple[LockId, ...]) -> None:
        for target in reversed(ancestors):
            count = st.long_children.get(target, 0)
            if not count or target.code not in ESCALATION_TARGETS:
                continue
            threshold = self.escalation.threshold(target, st.txn_id)
            if threshold is not None and count >= threshold:
                self._escalate(st, target, count, threshold)

    def _escalate(self, st: _Owner, target: LockId, count: int, threshold: int) -> None:
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
