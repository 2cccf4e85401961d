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
  locks are held to the end of the transaction too).

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

:class:`NoLocking` (the default) grants everything at once: a single
thread, or a test that scripts interleavings itself, needs no lock
manager. With a lock manager (:mod:`minidb.pagestore.lock`, Shore's lock
manager with its hierarchy and deadlock detection) the transaction manager
uses it through the same three calls.
"""

from __future__ import annotations

from typing import Any, Protocol


class Locking(Protocol):
    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None: ...

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool: ...

    def release_all(self, xct: Any) -> None: ...


class NoLocking:
    """Every lock is granted at once; nothing is held."""

    def lock(self, xct: Any, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        return None

    def try_lock(self, xct: Any, target: Any, mode: str, duration: str = "long") -> bool:
        return True

    def release_all(self, xct: Any) -> None:
        return None

    def __repr__(self) -> str:
        return "NoLocking()"
