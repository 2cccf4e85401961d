"""The lock step of the update protocol: how transactions ask for locks.

Shore's protocol for applying an operation is **lock, fix EX, apply, log,
unfix dirty**. The transaction manager and the file manager take the first
step through a *locking policy* object with three operations:

- ``lock(xct, target, mode, duration="long", timeout=None)``: wait until
  ``xct`` holds ``target`` in ``mode`` (a lock timeout or a deadlock raises);
- ``try_lock(xct, target, mode, duration="long")``: the same with an
  immediate timeout; False instead of waiting (used while a page is latched,
  where waiting could deadlock a latch against a lock);
- ``release_all(xct)``: at commit and abort (Shore frees locks then; extent
  locks are held to the end of the transaction too);
- ``held(xct)``, ``detach(xct)`` and ``reacquire(xct, locks)``: for
  two-phase commit (:mod:`minidb.pagestore.transactions.prepare`): the locks
  a transaction holds, as {lock id: mode name}, logged when it prepares; the
  prepared transaction leaves its thread (it waits for nothing any more, so
  Dreadlocks must not see the thread in it); at restart its locks are taken
  again, before any new transaction runs, and it is detached again.

Targets are the page store's ids (:mod:`minidb.pagestore.ids`):
``VolumeId``, ``StoreId``, ``PageId``, ``RecordId`` and ``ExtentId``; modes
are Shore's names ``"IS"``, ``"IX"``, ``"SH"``, ``"SIX"``, ``"UD"``,
``"EX"``. Who takes which lock:

=====================================  ===========  ==================
operation                              target       mode, duration
=====================================  ===========  ==================
read a record, scan                    record       SH, long
create, update, append to, free a rec  record       EX, long
create or destroy a file               both stores  EX, long
allocate a page                        extent       IX, long
free a page                            page, extent EX and IX, long
free an extent at commit               extent       EX, immediate
=====================================  ===========  ==================

:class:`ShoreLocking` takes the locks from Shore's lock manager
(:mod:`minidb.pagestore.lock`): the ids become lock ids, the hierarchy adds
the parent locks (EX on ``r(1.3.48.2)`` takes IX on ``p(1.3.48)``, ``s(1.3)``
and ``v(1)``), a conflicting request waits, and a deadlock makes the younger
transaction the victim: its request raises
:class:`~minidb.pagestore.lock.DeadlockVictim`, and the transaction must
abort (``with sm.transaction()`` does so), rolling back with CLRs.
:class:`NoLocking` grants everything at once: a single thread, or a
workload that keeps out of its own way (the crash test's), needs no lock
manager.

Worked example: T1 updates ``r(1.3.12.0)`` (EX) and T2 asks to read it
(SH): T2's thread waits until T1 commits and releases its locks, then reads
T1's committed bytes.
"""

from __future__ import annotations

from typing import Any, Protocol

from minidb.pagestore.lock import BadLockRequest, Duration, LockId, LockManager, LockMode, LockTimeout


class Locking(Protocol):
    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None: ...

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool: ...

    def release_all(self, xct: Any) -> None: ...

    def held(self, xct: Any) -> dict[LockId, str]: ...

    def detach(self, xct: Any) -> None: ...

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None: ...


class NoLocking:
    """Every lock is granted at once; nothing is held."""

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        return None

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        return True

    def release_all(self, xct: Any) -> None:
        return None

    def held(self, xct: Any) -> dict[LockId, str]:
        return {}

    def detach(self, xct: Any) -> None:
        return None

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None:
        return None

    def __repr__(self) -> str:
        return "NoLocking()"


class ShoreLocking:
    """The lock step through Shore's lock manager (see the module documentation)."""

    def __init__(self, manager: LockManager | None = None):
        self.manager = manager if manager is not None else LockManager()

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        self.manager.lock(xct, LockId.of(target), *_mode_and_duration(mode, duration), timeout)

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        try:
            self.manager.lock(xct, LockId.of(target), *_mode_and_duration(mode, duration), 0)
        except LockTimeout:
            return False
        return True

    def release_all(self, xct: Any) -> None:
        self.manager.release_all(xct)

    def held(self, xct: Any) -> dict[LockId, str]:
        return {lid: mode.name for lid, mode in self.manager.held(xct).items()}

    def detach(self, xct: Any) -> None:
        self.manager.detach(xct)

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None:
        """Take ``locks`` (long, without waiting: at restart only other prepared transactions hold locks,
        and they held theirs together with these before the crash)."""
        for lid, mode in sorted(locks.items()):
            self.manager.lock(xct, lid, *_mode_and_duration(mode, "long"), 0)
        self.manager.detach(xct)

    def __repr__(self) -> str:
        return f"ShoreLocking({self.manager!r})"


def _mode_and_duration(mode: str, duration: str) -> tuple[LockMode, Duration]:
    """Shore's names (``"EX"``, ``"long"``) as the lock manager's enums; an unknown name is a BadLockRequest."""
    if not isinstance(mode, str) or mode not in LockMode.__members__:
        raise BadLockRequest(f"not a lock mode: {mode!r} (one of {', '.join(LockMode.__members__)})")
    if not isinstance(duration, str) or duration.upper() not in Duration.__members__:
        raise BadLockRequest(f"not a lock duration: {duration!r} (one of "
                             f"{', '.join(d.lower() for d in Duration.__members__)})")
    return LockMode[mode], Duration[duration.upper()]
