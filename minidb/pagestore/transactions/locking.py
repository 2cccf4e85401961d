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

and, for the allocation protocol and quarks (optional: a policy without
them behaves as :class:`NoLocking` there, see :func:`optional`):

- ``held_by_other(xct, target)``: whether another transaction holds (or
  waits for) a lock on ``target``: the page search takes only pages nobody
  else has locked, the free-extent search only extents nobody else has;
- ``mark_extent(xct, extent, has_pages)``: the extent lock's "has pages" bit;
- ``upgrade_extent_to_free(xct, extent)``: at commit, EX on the extent if
  nobody else holds it and the bit is clear (True: it may be freed);
- ``open_quark(xct)``, ``close_quark(xct)``: Shore's quarks (the locks taken
  in between are released at the close, extent locks excepted).

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
search a free extent, reserved pages  extent       IX, long, try-lock
allocate a page                        page         IX, long, try-lock
free a page                            page, extent EX and IX, long
free an extent at commit               extent       EX, conversion
=====================================  ===========  ==================

**The allocation protocol** (Shore's volume manager, driven through
:class:`AllocationLocks`, the volume's ``alloc_locks`` hook). Allocating a
page first locks its store IX (waiting, before the volume's mutex); then,
inside the volume, which must never wait for a lock:

1. the reserved-page search try-locks IX each extent with reserved pages
   (one being freed, EX, is skipped) and takes the lowest reserved page that
   no other transaction has locked, try-locking it IX (long: a page that an
   active transaction allocated, or freed, is not handed to another);
2. if no extent has such a page, the free-extent search takes the first free
   extent that no other transaction has locked, and try-locks it IX;
3. the allocation sets the extent lock's "has pages" bit; freeing a page
   clears it when the extent is left with reserved pages only;
4. at commit, each extent in which the transaction freed pages is freed only
   if ``upgrade_extent_to_free`` grants EX: an extent another transaction
   holds (it may allocate there, or take its pages back) is kept.

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

from minidb.pagestore.ids import ExtentId, PageId, StoreId
from minidb.pagestore.lock import LOCK_MANAGER, BadLockRequest, Duration, LockId, LockManager, LockMode, LockTimeout


class Locking(Protocol):
    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None: ...

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool: ...

    def release_all(self, xct: Any) -> None: ...

    def held(self, xct: Any) -> dict[LockId, str]: ...

    def detach(self, xct: Any) -> None: ...

    def reacquire(self, xct: Any, locks: dict[LockId, str]) -> None: ...


class NoLocking:
    """Every lock is granted at once; nothing is held (so every extent may be freed, quarks release nothing)."""

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        return None

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        return True

    def release_all(self, xct: Any) -> None:
        return None

    def held_by_other(self, xct: Any, target: Any) -> bool:
        return False

    def mark_extent(self, xct: Any, xid: ExtentId, has_pages: bool) -> None:
        return None

    def upgrade_extent_to_free(self, xct: Any, xid: ExtentId) -> bool:
        return True

    def open_quark(self, xct: Any) -> int:
        return 0

    def close_quark(self, xct: Any) -> int:
        return 0

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
        self.manager = manager if manager is not None else LOCK_MANAGER.call()

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

    def held_by_other(self, xct: Any, target: Any) -> bool:
        return self.manager.held_by_other(xct, LockId.of(target))

    def mark_extent(self, xct: Any, xid: ExtentId, has_pages: bool) -> None:
        self.manager.mark_extent(xct, xid, has_pages)

    def upgrade_extent_to_free(self, xct: Any, xid: ExtentId) -> bool:
        return self.manager.upgrade_extent_to_free(xct, xid)

    def open_quark(self, xct: Any) -> int:
        return self.manager.open_quark(xct)

    def close_quark(self, xct: Any) -> int:
        return self.manager.close_quark(xct)

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


def optional(locks: Any, name: str) -> Any:
    """``locks``' method ``name`` of the allocation protocol or quarks, or :class:`NoLocking`'s."""
    method = getattr(locks, name, None)
    return method if method is not None else getattr(_NO_LOCKING, name)


_NO_LOCKING = NoLocking()


class AllocationLocks:
    """The volume's side of the allocation protocol (its ``alloc_locks`` hook): steps 1-3 above.

    Every method but :meth:`store` runs inside the volume's mutex and never
    waits. Without a transaction (``xct`` None: formatting, restart's repairs)
    nothing is locked.
    """

    def __init__(self, locks: Locking):
        self.locks = locks
        self.held_by_other = optional(locks, "held_by_other")
        self.mark_extent = optional(locks, "mark_extent")
        self.upgrade_extent_to_free = optional(locks, "upgrade_extent_to_free")

    def store(self, xct: Any, stid: StoreId) -> None:
        """Before the volume's mutex: IX on the store the page is allocated to (may wait)."""
        if xct is not None:
            self.locks.lock(xct, stid, "IX")

    def reserved_extent(self, xct: Any, xid: ExtentId) -> bool:
        """May the reserved-page search look in ``xid``? (IX try-lock: skip an extent being freed.)"""
        return xct is None or self.locks.try_lock(xct, xid, "IX")

    def free_extent(self, xct: Any, xid: ExtentId) -> bool:
        """May the free-extent search take ``xid``? Only if no other transaction has it locked."""
        return xct is None or (not self.held_by_other(xct, xid) and self.locks.try_lock(xct, xid, "IX"))

    def page(self, xct: Any, pid: PageId) -> bool:
        """May ``pid`` be allocated to ``xct``? Only if no other transaction has it locked; IX, long."""
        return xct is None or (not self.held_by_other(xct, pid) and self.locks.try_lock(xct, pid, "IX"))

    def mark(self, xct: Any, xid: ExtentId, has_pages: bool) -> None:
        """Set or clear the "has pages" bit in ``xct``'s IX lock on ``xid`` (already held, as a rule: the
        allocation's search took it, the file manager takes it before freeing a page)."""
        if xct is not None and self.locks.try_lock(xct, xid, "IX"):
            self.mark_extent(xct, xid, has_pages)


def _mode_and_duration(mode: str, duration: str) -> tuple[LockMode, Duration]:
    """Shore's names (``"EX"``, ``"long"``) as the lock manager's enums; an unknown name is a BadLockRequest."""
    if not isinstance(mode, str) or mode not in LockMode.__members__:
        raise BadLockRequest(f"not a lock mode: {mode!r} (one of {', '.join(LockMode.__members__)})")
    if not isinstance(duration, str) or duration.upper() not in Duration.__members__:
        raise BadLockRequest(f"not a lock duration: {duration!r} (one of "
                             f"{', '.join(d.lower() for d in Duration.__members__)})")
    return LockMode[mode], Duration[duration.upper()]
