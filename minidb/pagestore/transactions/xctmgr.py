"""The transaction manager: begin, commit, abort, savepoints, and the transaction table.

The manager hands out transaction ids in increasing order and keeps the
*transaction table* (tid -> :class:`~minidb.pagestore.transactions.xct.Xct`) of the
transactions that have not ended, which a checkpoint logs and restart
rebuilds. It owns the transaction's end:

- **commit** (:meth:`XctManager.commit`): a transaction that loaded LOAD or
  INSERT stores first makes them regular, their pages forced
  (:mod:`minidb.pagestore.transactions.loadstores`). A transaction that logged nothing
  just ends. One with nothing to free logs ``xct_end committed=true``, its
  commit point. One that destroyed stores or freed pages logs
  ``xct_freeing_space`` (its commit point), frees the space
  (:mod:`minidb.pagestore.transactions.freespace`) and logs ``xct_end``. A *durable*
  commit (the default) returns only once the commit point is on stable
  storage (the log's group commit); a non-durable one may be lost by a
  crash, never half-applied;
- **abort**: ``xct_abort``, rollback of every entry with compensation
  entries (:mod:`minidb.pagestore.transactions.rollback`), ``xct_end committed=false``;
- **savepoints**: :meth:`save_point` remembers the last LSN,
  :meth:`rollback_to` undoes what came after it; the transaction goes on.
  A savepoint taken before an unlogged change to a loading store cannot be
  rolled back to (the log cannot undo that change): abort instead;
- locks are released when the transaction ends (:mod:`minidb.pagestore.transactions.locking`);
- **two-phase commit** (:mod:`minidb.pagestore.transactions.prepare`):
  :meth:`prepare` logs the prepare entries and forces them; the PREPARED
  transaction then waits for :meth:`commit_prepared` or
  :meth:`abort_prepared`, by its gtid, which end it like commit and abort;
  :meth:`in_doubt` lists the prepared transactions, and
  :meth:`restore_prepared` gives restart a way to bring one back.

**Several volumes** (:mod:`minidb.pagestore.mounts`). A transaction may
change the pages of several mounted volumes; the log is one for all. Its
rollback undoes each entry on the volume the entry names. At commit, the
space it frees is freed volume by volume: one ``xct_freeing_space`` for
each volume that has some, in volume order, the first being the commit
point (a crash after the first leaves the rest to restart, which removes
the stores still marked for deletion on every volume; an extent left
empty then stays with its store). A transaction that frees space on a
volume other than ``v(1)`` cannot be prepared (the prepare entries name
one volume). :meth:`attach` gives a mounted volume its hooks.

It also answers the volume's questions about space that transactions hold:
a page freed by an active transaction may not be allocated by another
(``is_page_held``), and an extent in which another active transaction
freed pages is not freed at commit. And :meth:`oldest_active` gives space
reservation its horizon: a slot freed by a transaction older than every
active one is free for all.

Ordering with checkpoints: beginning and ending a transaction take the
*table latch*, which the checkpoint also takes while it copies and logs the
table, so an ``xct_end`` lies either before the checkpoint's
``chkpt_xct_tab`` (and the transaction is not in it) or after.

Worked example: ``t = xm.begin()`` gives T1; after an insert, ``sp =
xm.save_point(t)``; two updates; ``xm.rollback_to(t, sp)`` logs two CLRs and
T1 is still active; ``xm.commit(t)`` logs ``xct_end committed=true`` and
syncs the log up to it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ContextManager

from minidb import impl
from minidb.errors import MinidbError, SimulatedCrash
from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import ExtentId, PageId, StoreId, extent_of
from minidb.pagestore.transactions.freespace import free_space
from minidb.pagestore.transactions.loadstores import make_regular
from minidb.pagestore.transactions.locking import AllocationLocks, Locking, NoLocking
from minidb.pagestore.transactions.prepare import GtidError, InDoubt, PreparedInfo, check_gtid, log_prepare
from minidb.pagestore.transactions.rollback import UndoStep, rollback
from minidb.pagestore.transactions.xct import SavePoint, Xct, XctState, log_xct_entry
from minidb.pagestore.wal.logdef import COMPENSATE, XCT_ABORT, XCT_END, XCT_FREEING_SPACE
from minidb.stats import Stats, Trace

STAT_NAMES = ["nBegins", "nCommits", "nDurableCommits", "nAborts", "nReadOnly", "nSavePoints",
              "nRollbacksToSavePoint", "nEntriesUndone", "nFreeingSpace", "nPrepared", "nCommitsPrepared",
              "nAbortsPrepared", "nPreparedRestored"]



# What an end counts (XctManager._end's ``counted``).
_READ_ONLY, _COMMIT, _DURABLE_COMMIT = ("nReadOnly",), ("nCommits",), ("nCommits", "nDurableCommits")


class XctError(BadRequestError):
    """A transaction used in a state that does not allow it (ended, rolling back, unknown)."""


@contextmanager
def transaction_block(manager: Any, durable: bool) -> Iterator[Xct]:
    """A transaction of ``manager`` (anything with begin, commit and abort) lasting one ``with``
    block: committed when the block ends, aborted when it raises (unless already ended)."""
    xct = manager.begin()
    try:
        yield xct
    except BaseException:
        if xct.is_active:
            manager.abort(xct)
        raise
    manager.commit(xct, durable=durable)


TRANSACTION_BLOCK = impl.hot_spot(transaction_block)  # called as TRANSACTION_BLOCK.call(manager, durable)


class all_or_nothing:
    """Make an operation of several entries all-or-nothing: on an error, ``manager`` rolls ``xct`` back to
    where the operation began (a simulated crash, or an error before anything was logged, just passes).

    ``with all_or_nothing(manager, xct):`` around the operation; the operation began at ``point``, the
    transaction's last LSN then."""

    __slots__ = ("manager", "xct", "point")

    def __init__(self, manager: Any, xct: Xct):
        self.manager, self.xct = manager, xct

    def __enter__(self) -> None:
        self.point = self.xct.last_lsn

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> bool:
        if error is None or not isinstance(error, MinidbError) or isinstance(error, SimulatedCrash) \
                or self.xct.last_lsn == self.point:
            return False  # no error, not the engine's, a crash, or nothing logged: it passes as it is
        try:
            self.manager.rollback_to(self.xct, SavePoint(self.xct.txn_id, self.point), unlogged_ok=True)
        except MinidbError:
            pass  # the original error is the one to report
        return False


class XctManager:
    """The transactions of one volume (see the module documentation)."""

    def __init__(self, volume: Any, locking: Locking | None = None, trace: bool = True):
        self.volume = volume
        self.log = volume.log
        self.locks: Locking = locking if locking is not None else NoLocking()
        self.stats = Stats("xct", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.table_latch = threading.RLock()
        self._table: dict[int, Xct] = {}
        self._next_tid = 1
        self._freed_pages: dict[tuple[int, int], int] = {}  # (vol, page) -> tid of the active freer
        self._loading: dict[StoreId, int] = {}  # LOAD and INSERT store -> tid of its loading transaction
        self._gtids: dict[bytes, Xct] = {}  # gtid -> its transaction (prepared, or being prepared)
        self.log_space: Any = None  # a LogSpace when the log is bounded (its reservations)
        # Rollbacks so far (aborts, restart's losers, rollbacks to a save point), counted once each is done:
        # a cache above the transactions (the accelerated file manager's descriptors, minidb/fast/) drops
        # what it holds when this moves, since a rollback may have undone what it cached (a file's creation).
        self.rollbacks = 0
        volume.is_page_held = self.is_page_held
        self.alloc_locks = volume.alloc_locks = AllocationLocks(self.locks)

    def attach(self, volume: Any) -> None:
        """Give another mounted volume the hooks the first one has (pages held, allocation locks)."""
        volume.is_page_held = lambda page, xct: (volume.vid, page) in self._freed_pages
        volume.alloc_locks = self.alloc_locks

    # -- the table -----------------------------------------------------------------------
    def begin(self) -> Xct:
        with self.table_latch:
            tid = self._next_tid
            xct = Xct(tid, manager=self)
            self._next_tid = tid + 1
            self._table[tid] = xct
            self.stats.add("nBegins")
        if self.trace.enabled:
            self.trace.emit("T%d begins", tid)
        return xct

    def transaction(self, durable: bool = True) -> ContextManager[Xct]:
        """``with xm.transaction() as t:`` commits at the end of the block, aborts on an exception."""
        return TRANSACTION_BLOCK.call(self, durable)

    def active(self) -> list[Xct]:
        """The transactions that have not ended, by tid."""
        with self.table_latch:
            return [self._table[tid] for tid in sorted(self._table)]

    def get(self, tid: int) -> Xct:
        with self.table_latch:
            try:
                return self._table[tid]
            except KeyError:
                raise XctError(f"T{tid}: no such active transaction") from None

    def peek(self, tid: int) -> Xct | None:
        """The transaction ``tid`` if it has not ended, read without the table latch (for the log's
        admission hook, which runs under the log latch; the table latch comes first)."""
        return self._table.get(tid)

    def peek_all(self) -> list[Xct]:
        """The transactions that have not ended, read without the table latch (see :meth:`peek`)."""
        return list(self._table.values())

    def oldest_active(self) -> int:
        with self.table_latch:
            return min(self._table) if self._table else self._next_tid

    @property
    def youngest(self) -> int:
        """The largest tid handed out so far (0 if none)."""
        return self._next_tid - 1

    def adopt(self, tid: int, state: XctState, last_lsn: LSN, undo_nxt: LSN, first_lsn: LSN = NULL_LSN) -> Xct:
        """Put a transaction found by restart's analysis back in the table."""
        with self.table_latch:
            xct = Xct(tid, state, first_lsn, last_lsn, undo_nxt, manager=self)
            self._table[tid] = xct
            self._next_tid = max(self._next_tid, tid + 1)
            return xct

    def set_youngest(self, tid: int) -> None:
        with self.table_latch:
            self._next_tid = max(self._next_tid, tid + 1)

    # -- checks and locks ---------------------------------------------------------------------
    def check_active(self, xct: Xct) -> None:
        if not isinstance(xct, Xct):
            raise XctError(f"not a transaction: {xct!r} (begin one with sm.begin())")
        if xct.manager is not self or self._table.get(xct.txn_id) is not xct:
            raise XctError(f"{xct}: not an active transaction of this manager")
        if xct.state == XctState.ACTIVE:
            return
        if xct.state == XctState.PREPARED:
            raise XctError(f"{xct} is PREPARED (gtid {xct.prepared.gtid!r}): it does no more work; end it with "
                           f"commit_prepared or abort_prepared")
        if xct.state != XctState.ACTIVE:
            raise XctError(f"{xct} is {xct.state.name}, not ACTIVE")

    def lock(self, xct: Xct, target: Any, mode: str, duration: str = "long", timeout: float | None = None) -> None:
        self.locks.lock(xct, target, mode, duration, timeout)

    def try_lock(self, xct: Xct, target: Any, mode: str, duration: str = "long") -> bool:
        return self.locks.try_lock(xct, target, mode, duration)

    # -- space held by transactions -------------------------------------------------------------
    def note_page_freed(self, xct: Xct, pid: PageId) -> None:
        """``xct`` freed ``pid``: hold it for ``xct``, and free its extent at commit if it is empty then."""
        with self.table_latch:
            self._freed_pages[pid.key] = xct.txn_id
        xct.pages_freed.add(pid.key)
        xct.extents_to_free.add((pid.vol, pid.store, extent_of(pid.page, self.volume.of(pid.vol).ext_sz)))

    def note_loading(self, xct: Xct, stid: StoreId) -> None:
        """``xct`` loads ``stid`` (a LOAD or INSERT store): it becomes regular when ``xct`` commits."""
        if stid not in xct.load_stores:
            xct.load_stores.append(stid)
        with self.table_latch:
            self._loading[stid] = xct.txn_id

    def loader(self, stid: StoreId) -> int | None:
        """The tid of the active transaction loading ``stid``, if any."""
        return self._loading.get(stid)

    def note_store_destroyed(self, xct: Xct, stid: StoreId) -> None:
        if stid not in xct.stores_to_free:
            xct.stores_to_free.append(stid)

    def is_page_held(self, page: int, xct: Any) -> bool:
        """Whether page number ``page`` was freed by a transaction that is still active.

        Such a page is not allocated again, not even to the transaction that
        freed it: a rollback must find it free to take it back, and a page
        formatted anew would have lost the slots the rollback puts back.
        """
        return (self.volume.vid, page) in self._freed_pages

    def extent_held_by_other(self, ext: int, xct: Xct, vid: int | None = None) -> bool:
        """Whether another active transaction freed pages in extent ``ext`` (of volume ``vid``, the first
        by default; it may take them back), or ``xct`` cannot upgrade its extent lock to EX (another
        transaction holds the extent, or the lock's "has pages" bit is set): then the extent is not freed
        at ``xct``'s commit."""
        volume = self.volume.of(self.volume.vid if vid is None else vid)
        first = ext * volume.ext_sz
        return (any(self._freed_pages.get((volume.vid, page), xct.txn_id) != xct.txn_id
                    for page in range(first, first + volume.ext_sz))
                or not self.alloc_locks.upgrade_extent_to_free(xct, ExtentId(volume.vid, ext)))

    # -- compensated actions -------------------------------------------------------------------
    def anchor(self, xct: Xct) -> LSN:
        """Grab an anchor: the LSN of ``xct``'s last entry, before a compensated multi-step action."""
        return xct.last_lsn

    def compensate(self, xct: Xct, anchor: LSN) -> LSN:
        """Close a compensated action: rollback will jump from here back to ``anchor``, skipping it."""
        return log_xct_entry(self.log, xct, COMPENSATE, {"undo_nxt": anchor})

    # -- savepoints ----------------------------------------------------------------------------
    def save_point(self, xct: Xct) -> SavePoint:
        self.check_active(xct)
        self.stats.add("nSavePoints")
        return SavePoint(xct.txn_id, xct.last_lsn, xct.unlogged)

    def rollback_to(self, xct: Xct, save_point: SavePoint, unlogged_ok: bool = False) -> list[UndoStep]:
        """Undo what ``xct`` did after ``save_point``; it stays active.

        ``unlogged_ok`` (for an operation undoing its own partial work, whose
        unlogged changes are on pages it allocated, freed by the rollback)
        skips the check for unlogged changes since the savepoint.
        """
        self.check_active(xct)
        if not isinstance(save_point, SavePoint):
            raise XctError(f"rollback_to needs a save point of {xct} (from save_point), not {save_point!r}")
        if save_point.tid != xct.txn_id:
            raise XctError(f"{save_point} does not belong to {xct}")
        if not save_point.lsn.is_null and not xct.last_lsn.is_null and save_point.lsn > xct.last_lsn:
            raise XctError(f"{save_point} lies after {xct}'s last entry {xct.last_lsn}")
        if xct.unlogged > save_point.unlogged and not unlogged_ok:
            raise XctError(f"{xct} cannot roll back to {save_point}: since then it changed pages of the stores it "
                           f"loads ({', '.join(str(s) for s in xct.load_stores)}) without logging; abort instead")
        self.trace.emit("T%d rolls back to %s", xct.txn_id, save_point.lsn)
        steps = rollback(self.volume, xct, save_point.lsn, self.trace)
        self.rollbacks += 1
        self.stats.add("nRollbacksToSavePoint")
        self.stats.add("nEntriesUndone", sum(1 for s in steps if s.action == "undone"))
        return steps

    # -- two-phase commit ----------------------------------------------------------------------
    def prepare(self, xct: Xct, gtid: bytes, coordinator: bytes = b"") -> LSN:
        """Prepare ``xct`` under the global id ``gtid``: log, force, PREPARED; return the prepare point."""
        self.check_active(xct)
        if xct.load_stores or xct.created_tmp:
            what = "changed LOAD or INSERT files without logging" if xct.load_stores else "created a TMP file"
            raise XctError(f"T{xct.txn_id} {what}, so it cannot be prepared (a restart could not bring it back "
                           "as it was): commit or abort it")
        vid = self.volume.vid
        others = sorted(({s.vol for s in xct.stores_to_free} | {e[0] for e in xct.extents_to_free}) - {vid})
        if others:
            raise XctError(f"T{xct.txn_id} frees space on volume{'s' if len(others) > 1 else ''} "
                           f"{', '.join(f'v({n})' for n in others)}, so it cannot be prepared (the prepare "
                           f"entries name the space of v({vid}) only): commit or abort it")
        gtid = check_gtid(gtid)
        coordinator = check_gtid(coordinator, "a coordinator") if coordinator else b""
        with self.table_latch:
            other = self._gtids.get(gtid)
            if other is not None:
                raise GtidError(f"gtid {gtid!r} is already {other}'s; a gtid names one live transaction")
            self._gtids[gtid] = xct
        info = PreparedInfo(gtid, coordinator, self.locks.held(xct), [s.store for s in xct.stores_to_free],
                            sorted((snum, ext) for _, snum, ext in xct.extents_to_free),
                            sorted(page for _, page in xct.pages_freed),
                            rsvd=getattr(xct, "log_space_reserved", 0))
        try:
            lsn = log_prepare(self.log, xct, info, self.volume.vid, self.table_latch)
            self.log.sync(lsn)
        except BaseException:
            if xct.state != XctState.PREPARED:
                with self.table_latch:
                    del self._gtids[gtid]
            raise
        self.locks.detach(xct)
        self.stats.add("nPrepared")
        self.trace.emit("T%d prepared at %s: gtid %r, %d locks", xct.txn_id, lsn, gtid, len(info.locks))
        return lsn

    def prepared(self, gtid: bytes) -> Xct:
        """The prepared transaction named ``gtid`` (a GtidError if none)."""
        gtid = check_gtid(gtid)
        with self.table_latch:
            xct = self._gtids.get(gtid)
            if xct is None or xct.state != XctState.PREPARED:
                known = ", ".join(repr(g) for g, x in sorted(self._gtids.items()) if x.state == XctState.PREPARED)
                raise GtidError(f"no prepared transaction has gtid {gtid!r} (prepared: {known or 'none'})")
            return xct

    def commit_prepared(self, gtid: bytes, durable: bool = True) -> LSN:
        """Phase two, commit: end the prepared transaction ``gtid`` as :meth:`commit` would."""
        xct = self.prepared(gtid)
        self.stats.add("nCommitsPrepared")
        return self._commit(xct, durable)

    def abort_prepared(self, gtid: bytes) -> list[UndoStep]:
        """Phase two, abort: roll the prepared transaction ``gtid`` back, as :meth:`abort` would, and
        force its end to the log (a resolved transaction never comes back in doubt)."""
        xct = self.prepared(gtid)
        self.stats.add("nAbortsPrepared")
        return self._abort(xct, durable=True)

    def in_doubt(self) -> list[InDoubt]:
        """The prepared transactions, by tid: waiting for their coordinator's decision."""
        return [InDoubt(x.prepared.gtid, x.txn_id, x.first_lsn, x.prepared.lsn, dict(x.prepared.locks),
                        x.prepared.coordinator)
                for x in self.active() if x.state == XctState.PREPARED]

    def restore_prepared(self, tid: int, last_lsn: LSN, undo_nxt: LSN, info: PreparedInfo) -> Xct:
        """Restart: bring back prepared transaction ``tid`` as its prepare entries (``info``) describe it:
        its space held, its locks taken again."""
        xct = self.adopt(tid, XctState.PREPARED, last_lsn, undo_nxt, info.first_lsn)
        vid = self.volume.vid
        with self.table_latch:
            xct.prepared = info
            xct.stores_to_free = [StoreId(vid, snum) for snum in info.stores]
            xct.extents_to_free = {(vid, snum, ext) for snum, ext in info.exts}
            xct.pages_freed = {(vid, page) for page in info.pages}
            for key in xct.pages_freed:
                self._freed_pages[key] = tid
            self._gtids[info.gtid] = xct
        if info.rsvd:
            xct.log_space_reserved = info.rsvd
        self.locks.reacquire(xct, info.locks)
        self.stats.add("nPreparedRestored")
        return xct

    # -- ending ----------------------------------------------------------------------------------
    def commit(self, xct: Xct, durable: bool = True) -> LSN:
        """Commit ``xct`` (see the module documentation); return its commit point (NULL if read-only)."""
        self.check_active(xct)
        return self._commit(xct, durable)

    def _commit(self, xct: Xct, durable: bool) -> LSN:
        for vid in sorted({stid.vol for stid in xct.load_stores}):
            stores = [stid for stid in xct.load_stores if stid.vol == vid]
            for line in make_regular(self.volume.of(vid), xct, stores):
                self.trace.emit("T%d commits: %s", xct.txn_id, line)
        if xct.last_lsn.is_null:
            self._end(xct, None, committed=True, counted=_READ_ONLY)
            return NULL_LSN
        counted = _DURABLE_COMMIT if durable else _COMMIT
        if xct.stores_to_free or xct.extents_to_free:
            point = self._enter_freeing_space(xct, durable)
            for vid in self._freeing_volumes(xct):
                free_space(self.volume.of(vid), xct, [s.store for s in xct.stores_to_free if s.vol == vid],
                           [(snum, ext) for vol, snum, ext in xct.extents_to_free if vol == vid],
                           lambda ext, vid=vid: self.extent_held_by_other(ext, xct, vid), self.trace)
            self._end(xct, XCT_END, committed=True, counted=counted)
        else:
            point = self._end(xct, XCT_END, committed=True, durable=durable, counted=counted)
        return point

    @staticmethod
    def _freeing_volumes(xct: Xct) -> list[int]:
        """The volumes on which ``xct`` frees space, in order."""
        return sorted({s.vol for s in xct.stores_to_free} | {vol for vol, _, _ in xct.extents_to_free})

    def _enter_freeing_space(self, xct: Xct, durable: bool) -> LSN:
        """Log ``xct_freeing_space`` for each volume with space to free; the first is the commit point."""
        def committed() -> None:  # with the commit point, under the log latch: a checkpoint sees both or none
            xct.state = XctState.FREEING_SPACE
            xct.undo_nxt = NULL_LSN  # committed: nothing before this is ever undone

        point = NULL_LSN
        for vid in self._freeing_volumes(xct):
            values = {"vol": vid, "stores": [{"snum": s.store} for s in xct.stores_to_free if s.vol == vid],
                      "exts": [{"snum": snum, "ext": ext} for vol, snum, ext in sorted(xct.extents_to_free)
                               if vol == vid]}
            lsn = log_xct_entry(self.log, xct, XCT_FREEING_SPACE, values, then=committed if point.is_null else None)
            if point.is_null:
                point = lsn
        if durable:
            self.log.sync(lsn)
        self.stats.add("nFreeingSpace")
        self.trace.emit("T%d commits at %s: freeing space (stores %s, extents %s)", xct.txn_id, point,
                        [str(s) for s in xct.stores_to_free],
                        [str(ExtentId(v, e)) for v, _, e in sorted(xct.extents_to_free)])
        return point

    def abort(self, xct: Xct) -> list[UndoStep]:
        """Roll ``xct`` back completely and end it."""
        self.check_active(xct)
        return self._abort(xct)

    def _abort(self, xct: Xct, durable: bool = False) -> list[UndoStep]:
        if xct.last_lsn.is_null:
            self._end(xct, None, committed=False)
            self.stats.add("nAborts")
            return []
        log_xct_entry(self.log, xct, XCT_ABORT)
        xct.state = XctState.ABORTING
        self.trace.emit("T%d aborts: rolling back from %s", xct.txn_id, xct.undo_nxt)
        steps = rollback(self.volume, xct, trace=self.trace)
        self.stats.add("nEntriesUndone", sum(1 for s in steps if s.action == "undone"))
        self._end(xct, XCT_END, committed=False, durable=durable)
        self.stats.add("nAborts")
        return steps

    def end_after_restart(self, xct: Xct, committed: bool) -> LSN:
        """Log the end of a transaction that restart rolled back or finished."""
        return self._end(xct, XCT_END, committed=committed)

    def _end(self, xct: Xct, entry_type: Any, committed: bool, durable: bool = False,
             counted: tuple[str, ...] = ()) -> LSN:
        """End ``xct``: log ``entry_type`` (xct_end) if given, leave the table, release the locks;
        ``counted``: the counters this end adds one to, under the table latch."""
        lsn = NULL_LSN
        with self.table_latch:
            if entry_type is not None:
                lsn = log_xct_entry(self.log, xct, entry_type, {"committed": committed})
            xct.state = XctState.ENDED
            self.rollbacks += not committed
            del self._table[xct.txn_id]
            if xct.prepared is not None:
                del self._gtids[xct.prepared.gtid]
            for key in xct.pages_freed:
                if self._freed_pages.get(key) == xct.txn_id:
                    del self._freed_pages[key]
            for stid in xct.load_stores:
                if self._loading.get(stid) == xct.txn_id:
                    del self._loading[stid]
            for name in counted:
                self.stats.add(name)
        if durable:
            self.log.sync(lsn)  # outside the table latch: the group commit lets others in
        self.locks.release_all(xct)
        if entry_type is not None and self.trace.enabled:
            self.trace.emit("T%d ends at %s (%s)", xct.txn_id, lsn, "committed" if committed else "aborted")
        return lsn

    def __repr__(self) -> str:
        return f"XctManager({len(self._table)} active, next tid {self._next_tid})"


XCT_MANAGER = impl.hot_spot(XctManager)  # built as XCT_MANAGER.call(...) by the storage manager
