"""A transaction's lock state (Shore's ``xct_lock_info_t``), the lock manager's statistics, and the
checks of what a caller asks for.

The lock manager keeps one :class:`XctLockInfo` per transaction that holds or
waits for a lock: the requests it holds by lock id, the one request it waits
for (a transaction waits in one thread at a time), the Dreadlocks fingerprint
of the thread that last asked for a lock for it and, while it waits, its
digest; the count of its long locks below each page and store (what
escalation compares with its thresholds); the markers of its open quarks.

Invariant: ``locks[lid].owner is`` this state, and every request in ``locks``
is in its head's queue. A request that escalation released while short locks
stay below it is in ``released_parents`` until they are released or the lock
is granted again.

A lock owner is anything with an int ``txn_id`` (a larger id is a younger
transaction); :func:`txn_id_of` and :func:`check_request` turn anything else
into a :class:`~.errors.BadLockRequest`, before the table is touched.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.lock.errors import BadLockRequest
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import LockMode
from minidb.pagestore.lock.request import Duration, LockRequest
from minidb.stats import Stats

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



class LockStats(Stats):
    """The lock manager's statistics: counted under the manager's mutex, so without Stats' own lock
    (``counts`` is the values by name)."""

    def __init__(self, group: str, names: tuple[str, ...]):
        super().__init__(group, names)
        self.counts = self._values

    def bump(self, name: str) -> None:
        self._values[name] += 1


class XctLockInfo:
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


def txn_id_of(owner: Any) -> int:
    txn_id = getattr(owner, "txn_id", None)
    if type(txn_id) is not int:  # bool and other int subclasses fail too
        raise BadLockRequest(f"a lock owner needs an int attribute txn_id; {owner!r} has {txn_id!r}")
    return txn_id


def check_request(lock_id: Any, mode: Any, duration: Any, timeout: Any) -> None:
    if not isinstance(lock_id, LockId):
        raise BadLockRequest(f"not a lock id: {lock_id!r} (build one with LockId.record(rid), LockId.page(pid), ...)")
    if not isinstance(mode, LockMode):
        raise BadLockRequest(f"not a lock mode: {mode!r} (one of {', '.join(m.name for m in LockMode)})")
    if not isinstance(duration, Duration):
        raise BadLockRequest(f"not a lock duration: {duration!r} (INSTANT, SHORT or LONG)")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or timeout < 0 or timeout != timeout):
        raise BadLockRequest(f"a lock timeout is None (wait forever) or seconds >= 0, not {timeout!r}")


def holders_text(blockers: list[tuple[LockRequest, str]]) -> str:
    return ", ".join(f"{r.describe()} ({reason})" for r, reason in blockers) or "nobody"
