"""The page store's lock manager (Shore's ``lock_m``): modes, hierarchies, Dreadlocks.

Modules, bottom up::

    modes.py       NL IS IX SH SIX UD EX; the compatibility table (not symmetric at
                   SH/UD) and the supremum table; parent modes; implicit coverage
    lockid.py      lock ids v(1) s(1.3) p(1.3.48) r(1.3.48.2) k(1.3.'key') k(1.3.EOF) x(1.6) u(7);
                   the hierarchies volume-store-page-record and volume-store-key
    request.py     a transaction's request on a lock; durations instant/short/long
    queue.py       a lock head and its queue: FIFO granting, conversions first, who
                   waits for whom
    dreadlocks.py  fingerprints of a few bits per thread, digests, the cycle test
    escalation.py  thresholds per object, per store, per transaction and per level
    waitsfor.py    the exact waits-for graph, as data (cycles, false positives)
    snapshot.py    a consistent copy of the table and its text dump
    owner.py       a transaction's lock state (xct_lock_info_t), the statistics, the checks
    waiting.py     waiting threads: blocking, Dreadlocks, victims, timeouts, watchers
    manager.py     LockManager: lock (parents, grant, convert, wait), unlock, release_all,
                   quarks, escalation, the extent lock's has-pages bit and EX upgrade
    script.py      Interleaving: scripted multi-thread scenarios, without sleeps

Public surface::

    LockManager, LOCK_MANAGER (its hot spot), LockMode, LockId, LockSpace, Duration, LockTimeout,
    DeadlockVictim, BadLockRequest, LockError, compatible, supremum, parent_mode, Interleaving, KEEP

Example::

    lm = LOCK_MANAGER.call()   # LockManager(), or its twin under --impl fast
    lm.lock(txn, LockId.record(RecordId(1, 3, 48, 2)), LockMode.EX)
    lm.held(txn)   # {v(1): IX, s(1.3): IX, p(1.3.48): IX, r(1.3.48.2): EX}
    lm.release_all(txn)
"""

from minidb.pagestore.lock.errors import BadLockRequest, DeadlockVictim, LockError, LockTimeout
from minidb.pagestore.lock.escalation import KEEP
from minidb.pagestore.lock.lockid import LockId, LockSpace
from minidb.pagestore.lock.manager import LOCK_MANAGER, LockManager
from minidb.pagestore.lock.modes import LockMode, compatible, covers, parent_mode, supremum
from minidb.pagestore.lock.request import Duration
from minidb.pagestore.lock.script import Interleaving, Step
from minidb.pagestore.lock.snapshot import LockTableSnapshot
from minidb.pagestore.lock.waitsfor import WaitsForGraph

__all__ = [
    "LockManager", "LOCK_MANAGER", "LockMode", "LockId", "LockSpace", "Duration", "LockTimeout", "DeadlockVictim",
    "BadLockRequest", "LockError", "compatible", "supremum", "covers", "parent_mode", "Interleaving", "Step",
    "LockTableSnapshot", "WaitsForGraph", "KEEP",
]
