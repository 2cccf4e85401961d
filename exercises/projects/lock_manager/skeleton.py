"""Project lock_manager: the page store's lock manager, whole (see README.md).

The engine builds its lock manager through the hot spot ``LOCK_MANAGER``
(transactions, the storage manager, the crash tests, the tour); with
``--impl student --project lock_manager`` it constructs the ``LockManager``
of this file instead. Every method below is one the engine, its scripts or
its pictures call; its docstring is the contract.

The contracts, in one place (Shore's ``lock_m``):

- **Modes and the hierarchy.** Lock ids form a hierarchy: volume ``v(1)``,
  store ``s(1.3)``, page ``p(1.3.48)``, record ``r(1.3.48.2)`` (key locks
  ``k(...)`` sit below their store; extent ``x(...)`` and user ``u(...)``
  locks have no parent). The modes are NL, IS, IX, SH, SIX, UD, EX with
  Shore's compatibility and supremum tables (``minidb.pagestore.lock.modes``).
- **Implicit parent locks.** A lock on a child first holds each ancestor,
  top down, in the parent mode of the child's mode, unless held in a mode that
  covers it; an ancestor held in a mode that implicitly covers the request
  (EX covers everything below; SH, SIX, UD cover reads) grants it without a lock.
- **Queues.** Each lock's requests are granted first come first served, a
  conversion (a holder asking for more) before every new request; a
  compatible new request waits if anyone waits before it.
- **Waiting.** A request that must wait blocks its thread until granted, its
  ``timeout`` passes (``LockTimeout``; 0 fails at once without waiting), or it
  is chosen a deadlock victim (``DeadlockVictim``). Deadlocks are found by
  Dreadlocks: each waiting transaction's digest is the union of its own
  thread's fingerprint and the digests of those it waits for; one that finds
  its own fingerprint in a digest it waits on is in a cycle. A failed request
  changes nothing but the ancestors' locks taken on the way.
- **Durations.** INSTANT, SHORT, LONG (``Duration``); extent locks are always
  long; inside a quark new locks are short. ``release_all`` at commit or abort.
- **Escalation.** After a grant, if a transaction's long locks under a page or
  a store reach that level's threshold, the parent is converted to SH or EX
  without waiting and the children are released.
- **Observability.** ``watch``/``settled``/``blocked`` let tests and
  interleaving scripts wait for threads to block without sleeping.

Given, to build on: the modes' tables, ``LockId``, ``Duration``, the errors,
``Fingerprints`` (the Dreadlocks digests), the snapshot and waits-for records,
``LockStats`` and ``Trace``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minidb.pagestore.ids import ExtentId
from minidb.pagestore.lock.dreadlocks import DEFAULT_BITMAP_BITS, DEFAULT_BITS_PER_FINGERPRINT
from minidb.pagestore.lock.escalation import DEFAULT_ESCALATION_THRESHOLD, KEEP
from minidb.pagestore.lock.lockid import LockId
from minidb.pagestore.lock.modes import LockMode
from minidb.pagestore.lock.request import Duration
from minidb.pagestore.lock.snapshot import LockTableSnapshot
from minidb.pagestore.lock.waitsfor import WaitsForGraph


class LockManager:
    """Shore's lock manager; see the module documentation."""

    def __init__(self, escalation_threshold: int | None = DEFAULT_ESCALATION_THRESHOLD,
                 fingerprint_bits: int = DEFAULT_BITMAP_BITS, *,
                 bits_per_fingerprint: int = DEFAULT_BITS_PER_FINGERPRINT, fingerprint_seed: int = 0,
                 trace: bool = False):
        """``escalation_threshold``: long child locks under a page or store that trigger escalation
        (None: never). ``fingerprint_bits``: the size of the Dreadlocks bitmap; each thread's
        fingerprint is ``bits_per_fingerprint`` of them, chosen with ``fingerprint_seed``.

        Attributes the engine, pictures and tests read: ``stats`` (a ``LockStats("lock", STAT_NAMES)`` of
        :mod:`minidb.pagestore.lock.owner`, counted as the names say) and ``trace`` (a
        ``minidb.stats.Trace(enabled=trace)``, one line per step in words)."""
        raise NotImplementedError("LockManager.__init__")

    def lock(self, owner: Any, lock_id: LockId, mode: LockMode, duration: Duration = Duration.LONG,
             timeout: float | None = None) -> None:
        """Lock ``lock_id`` in ``mode`` for ``owner``, with implicit parent locks; see the module docs."""
        raise NotImplementedError("LockManager.lock")

    def unlock(self, owner: Any, lock_id: LockId) -> None:
        """Release a short-duration lock (before the end of the transaction)."""
        raise NotImplementedError("LockManager.unlock")

    def unlock_duration(self, owner: Any, duration: Duration) -> int:
        """Release every lock of ``owner`` whose duration is at most ``duration``; return how many.

        With ``Duration.SHORT`` this releases the short locks and keeps the long
        ones (Shore's ``unlock_duration``, what closing a quark does).
        """
        raise NotImplementedError("LockManager.unlock_duration")

    def open_quark(self, owner: Any) -> int:
        """Open a quark for ``owner``: its locks from now on are short; return the nesting depth."""
        raise NotImplementedError("LockManager.open_quark")

    def close_quark(self, owner: Any) -> int:
        """Close ``owner``'s innermost quark: release the short locks acquired since it opened."""
        raise NotImplementedError("LockManager.close_quark")

    def quark_depth(self, owner: Any) -> int:
        """How many quarks ``owner`` has open."""
        raise NotImplementedError("LockManager.quark_depth")

    def release_all(self, owner: Any) -> None:
        """Release every lock of ``owner`` (at commit or abort), children before parents."""
        raise NotImplementedError("LockManager.release_all")

    def detach(self, owner: Any) -> None:
        """``owner`` has no thread any more: a prepared transaction (two-phase commit), which holds its
        locks but waits for nothing until it ends. Its fingerprint is cleared, so that a thread that
        ran it and now waits for one of its locks does not find itself in its digest (a false cycle)."""
        raise NotImplementedError("LockManager.detach")

    def held(self, owner: Any) -> dict[LockId, LockMode]:
        """The locks ``owner`` holds (granted modes), in hierarchy order."""
        raise NotImplementedError("LockManager.held")

    def query(self, lock_id: LockId, owner: Any = None) -> LockMode:
        """The mode ``owner`` holds ``lock_id`` in (NL if none); without an owner, the
        supremum of every granted mode (NL: nobody holds it)."""
        raise NotImplementedError("LockManager.query")

    def set_escalation(self, target: Any, threshold: int | None) -> None:
        """Set the escalation threshold of one object (a page or store :class:`LockId`) or of one
        transaction (an owner); 0 or None disables escalation there."""
        raise NotImplementedError("LockManager.set_escalation")

    def set_escalation_thresholds(self, to_page: Any = KEEP, to_store: Any = KEEP,
                                  store: LockId | None = None) -> None:
        """The thresholds per level (Shore's ``set_escalation_thresholds``): ``to_page``, record locks
        under one page; ``to_store``, page and key locks under one store. Of the whole manager, or of
        one ``store`` (its pages and itself). 0 or None disables a level; :data:`KEEP` leaves it."""
        raise NotImplementedError("LockManager.set_escalation_thresholds")

    def escalation_threshold(self, target: LockId, owner: Any = None) -> int | None:
        """The threshold that applies to ``target`` (a page or store) for ``owner`` (None: never)."""
        raise NotImplementedError("LockManager.escalation_threshold")

    def held_by_other(self, owner: Any, lock_id: LockId) -> bool:
        """Whether a transaction other than ``owner`` holds or waits for ``lock_id`` (in any mode)."""
        raise NotImplementedError("LockManager.held_by_other")

    def extents_held(self, owner: Any) -> list[ExtentId]:
        """The extents ``owner`` holds locks on (the candidates for freeing at its commit)."""
        raise NotImplementedError("LockManager.extents_held")

    def mark_extent(self, owner: Any, xid: ExtentId, has_allocated_pages: bool) -> None:
        """Set or clear the extent lock's has-page-allocated bit (the owner must hold the lock)."""
        raise NotImplementedError("LockManager.mark_extent")

    def upgrade_extent_to_free(self, owner: Any, xid: ExtentId) -> bool:
        """At commit: convert ``owner``'s extent lock to EX if it is the only holder and no page of
        the extent is marked allocated; True means the caller may free the extent."""
        raise NotImplementedError("LockManager.upgrade_extent_to_free")

    def snapshot(self) -> LockTableSnapshot:
        """The whole table as data (:mod:`minidb.pagestore.lock.snapshot`): every head with its queue in
        order, every owner with its locks and what it waits for."""
        raise NotImplementedError("LockManager.snapshot")

    def dump(self, names: Callable[[LockId], str] = str) -> str:
        """The lock table as text (see :mod:`.snapshot`); ``names`` prints a lock id."""
        raise NotImplementedError("LockManager.dump")

    def waits_for(self) -> WaitsForGraph:
        """The exact waits-for graph, as data (nodes: every transaction with locks or a wait)."""
        raise NotImplementedError("LockManager.waits_for")

    def waiting_on(self, owner: Any) -> LockId | None:
        """The lock ``owner`` is waiting for, or None."""
        raise NotImplementedError("LockManager.waiting_on")

    def blocked(self, owner: Any) -> bool:
        """Whether ``owner``'s thread is blocked in the lock manager with nothing left to do."""
        raise NotImplementedError("LockManager.blocked")

    def settled(self) -> bool:
        """Whether every waiting thread is blocked, with no Dreadlocks step or wakeup pending."""
        raise NotImplementedError("LockManager.settled")

    def watch(self, predicate: Callable[[], bool], timeout: float | None = None) -> bool:
        """Wait until ``predicate()`` (evaluated under the manager's mutex) is true; False on timeout.

        It is evaluated again each time a thread blocks or stops waiting, and at
        each :meth:`poke`: no sleeping, no polling.
        """
        raise NotImplementedError("LockManager.watch")

    def poke(self) -> None:
        """Make :meth:`watch` evaluate its predicates again (after a change outside the manager)."""
        raise NotImplementedError("LockManager.poke")

    def add_listener(self, listener: Callable[[str, int, LockId, LockMode], None]) -> None:
        """Call ``listener(event, txn_id, lock_id, mode)`` on ``"wait"`` (a thread is about to block,
        its first Dreadlocks step done), ``"granted"`` (after a wait), ``"deadlock"`` (a cycle was
        found: the victim is about to be told; the transaction is the one that found it),
        ``"victim"`` and ``"timeout"``. Called in the thread concerned, with the mutex held: it may
        read the table (:meth:`snapshot`, :meth:`waits_for`), but must not lock, unlock or wait."""
        raise NotImplementedError("LockManager.add_listener")
