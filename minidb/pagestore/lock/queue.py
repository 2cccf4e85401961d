"""A lock's head and its queue of requests: who is granted, who waits for whom.

Shore keeps one *lock head* per locked object (``lock_head_t``) holding the
queue of requests in arrival order. The rules, Gray & Reuter's:

- **New requests, first come first served.** A new request is granted at
  once only if nobody is waiting or converting on the lock and its mode is
  compatible with every granted request. Otherwise it joins the end of the
  queue, even when it is compatible with the holders: it does not overtake
  the waiters ahead of it (so an EX waiter is not starved by a stream of
  SH readers).
- **Conversions first.** A holder asking for a stronger mode (SH -> EX) does
  not queue behind the waiters: it is granted as soon as its new mode is
  compatible with every *other* granted request. While a conversion is
  pending, no new request is granted.
- **Wakeup** (after a release, a cancelled wait or a conversion, even one
  granted at once: the table is not monotonic, and a holder converting UD to
  SIX lets in an IS request that its UD kept out): first every
  converting request, in queue order, whose new mode is compatible with the
  others' granted modes; then, only if no conversion is still pending, the
  waiting requests in queue order, each compatible with everything granted so
  far, stopping at the first that is not.

Compatibility is checked against each granted request, not against their
supremum (Shore's ``granted_mode``): with the asymmetric UD the two differ.
If T1 holds IS and T2 holds SH, the supremum is SH and ``compatible(UD, SH)``,
but UD conflicts with T1's IS.

**Who waits for whom** (:meth:`LockHead.blockers`, what Dreadlocks ORs
together and what the waits-for graph draws). A converting request waits for
every other holder whose granted mode conflicts with the mode it converts to.
A waiting request waits for every holder whose granted mode conflicts with
its mode, for every pending conversion (conversions first), and for the
waiting request just ahead of it (first come, first served). Worked example,
on one record::

    queue  T1(SH)  T2(SH/EX)  T3(SH*)  T4(IS*)
    T2 waits for T1     (conflicting mode: T1's SH conflicts with EX)
    T3 waits for T2     (conversion first; T2's SH itself is compatible)
    T4 waits for T2, T3 (conversion first; T3 is ahead in the queue)

This module is pure: no threads, no waiting. The lock manager calls it under
its mutex.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import NL, LockMode, compatible, supremum
from minidb.pagestore.lock.request import CONVERTING, GRANTED, WAITING, Duration, LockRequest

HOLDS, CONVERSION, AHEAD = "conflicting mode", "conversion first", "ahead in the queue"


class LockHead:
    """One locked object: its id, its queue, and the extent lock's has-page bit."""

    __slots__ = ("lock_id", "queue", "n_waiting", "has_page_alloc")

    def __init__(self, lock_id: LockId):
        self.lock_id = lock_id
        self.queue: list[LockRequest] = []
        self.n_waiting = 0  # requests WAITING or CONVERTING
        # Extent locks only: some transaction allocated a page in the extent, so
        # it must not be freed at commit (Shore keeps this bit in the lock).
        self.has_page_alloc = False

    # -- reading --------------------------------------------------------------------
    def holders(self) -> Iterator[LockRequest]:
        """Granted requests, converting ones included (they hold their old mode)."""
        return (r for r in self.queue if r.status is not WAITING)

    @property
    def granted_mode(self) -> LockMode:
        """The supremum of the granted modes (what Shore's dump shows)."""
        mode = NL
        for r in self.queue:
            if r.status is not WAITING:
                mode = supremum(mode, r.mode)
        return mode

    def compatible_with_holders(self, mode: LockMode, exclude: LockRequest | None = None) -> bool:
        for r in self.queue:
            if r is not exclude and r.status is not WAITING and not compatible(mode, r.mode):
                return False
        return True

    def can_grant_new(self, mode: LockMode) -> bool:
        """A new request is granted at once: nobody waits, and it is compatible with every holder."""
        return self.n_waiting == 0 and self.compatible_with_holders(mode)

    def can_convert(self, request: LockRequest, mode: LockMode) -> bool:
        """A holder converts at once if ``mode`` is compatible with every other holder."""
        return self.compatible_with_holders(mode, exclude=request)

    def waiters(self) -> list[LockRequest]:
        return [r for r in self.queue if r.status is not GRANTED]

    def find(self, txn_id: int) -> LockRequest | None:
        for r in self.queue:
            if r.owner.txn_id == txn_id:
                return r
        return None

    def blockers(self, request: LockRequest) -> list[tuple[LockRequest, str]]:
        """The requests ``request`` waits for, each with the reason (see the module docstring)."""
        found: list[tuple[LockRequest, str]] = []
        if request.status is CONVERTING:
            wanted = request.convert_mode
            for r in self.queue:
                if r is not request and r.status is not WAITING and not compatible(wanted, r.mode):  # type: ignore[arg-type]
                    found.append((r, HOLDS))
            return found
        if request.status is not WAITING:
            return found
        ahead = None
        before = True
        for r in self.queue:
            if r is request:
                before = False
                continue
            if r.status is WAITING:
                if before:
                    ahead = r
                continue
            if not compatible(request.mode, r.mode):
                found.append((r, HOLDS))
            elif r.status is CONVERTING:
                found.append((r, CONVERSION))
        if ahead is not None:
            found.append((ahead, AHEAD))
        return found

    # -- changing ---------------------------------------------------------------------
    def add(self, request: LockRequest) -> None:
        self.queue.append(request)
        if request.status is not GRANTED:
            self.n_waiting += 1

    def start_conversion(self, request: LockRequest, mode: LockMode) -> None:
        request.status = CONVERTING
        request.convert_mode = mode
        self.n_waiting += 1

    def remove(self, request: LockRequest) -> None:
        """Take a granted request out of the queue (a release)."""
        self.queue.remove(request)
        if request.status is not GRANTED:
            self.n_waiting -= 1

    def cancel(self, request: LockRequest) -> None:
        """A wait that failed (timeout, deadlock victim): a new request leaves the queue;
        a conversion is denied and the request keeps the mode it held."""
        if request.status is CONVERTING:
            request.status = GRANTED
            request.convert_mode = None
            self.n_waiting -= 1
        elif request.status is WAITING:
            self.queue.remove(request)
            self.n_waiting -= 1

    def wakeup(self) -> list[LockRequest]:
        """Grant what can be granted, conversions first; return the requests granted now."""
        if self.n_waiting == 0:
            return []
        granted: list[LockRequest] = []
        pending = False
        for r in self.queue:
            if r.status is CONVERTING:
                if self.compatible_with_holders(r.convert_mode, exclude=r):  # type: ignore[arg-type]
                    r.mode = r.convert_mode  # type: ignore[assignment]
                    r.convert_mode = None
                    r.status = GRANTED
                    self.n_waiting -= 1
                    granted.append(r)
                else:
                    pending = True
        if not pending:
            for r in self.queue:
                if r.status is not WAITING:
                    continue
                if not self.compatible_with_holders(r.mode):
                    break  # first come, first served: nobody behind it overtakes
                r.status = GRANTED
                self.n_waiting -= 1
                granted.append(r)
        return granted

    def describe(self) -> str:
        """Shore's dump line: ``r(1.3.48.2):EX queue: {T1(EX) T2(SH*)}``."""
        body = " ".join(r.describe() for r in self.queue)
        flag = " [has page]" if self.has_page_alloc else ""
        return f"{self.lock_id}:{self.granted_mode.name} queue: {{{body}}}{flag}"

    def __repr__(self) -> str:
        return f"<LockHead {self.describe()}>"


def new_request(owner: Any, head: LockHead, mode: LockMode, duration: Duration = Duration.LONG,
                waiting: bool = False) -> LockRequest:
    """A request appended to ``head``'s queue (granted, or waiting)."""
    request = LockRequest(owner, head, mode, duration, WAITING if waiting else GRANTED)
    head.add(request)
    return request
