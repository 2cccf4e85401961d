"""The transaction manager, accelerated: a transaction that logged nothing begins and ends in a few steps.

A get through the public API is a transaction of its own: ``with
sm.transaction() as t:`` around one lookup. Its begin and its end cost as
much as the lookup's descent, so this twin shortens them, and nothing else:

- **the block as a class** (:class:`transaction_block`): the reference's
  block is a generator under ``contextlib.contextmanager``, which builds a
  generator and a wrapper object per transaction and resumes the generator
  twice. This one is an object with ``__enter__`` and ``__exit__`` doing the
  same: begin, then commit at the end of the block, or abort (if still
  active) when the block raises, the exception passing on.
- **a begin counted in place**: ``nBegins`` is incremented in the stats'
  dict under the table latch (:func:`minidb.fast.held_counts`) instead of by
  :meth:`Stats.add <minidb.stats.Stats.add>` under the stats' own lock too.
- **a read-only commit in one step**: a commit of an ACTIVE transaction of
  this manager that logged nothing and loaded, freed and prepared nothing
  (the reference's ``_commit`` then goes straight to ``_end`` with no entry)
  leaves the table, counts ``nReadOnly`` in place and releases its locks,
  as ``_end`` does (unless the locking policy is ``NoLocking``, which holds
  none); it logs nothing, and syncs nothing, as the reference.
  Any other commit, and any transaction that is not ACTIVE or not this
  manager's, is the reference's code, with its checks and errors.

Safe because ``nBegins`` changes only in :meth:`begin` and ``nReadOnly`` only
in ``_end``, both under the table latch, which this twin holds for them: the
latch orders every change, so no increment is lost, and the counters are
those of the reference (``tests/agreement/scn_btree.py`` compares them with
the lock table and the files). The twin keeps nothing between transactions.
"""

from __future__ import annotations

from typing import Any

from minidb import fast
from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.transactions import xctmgr as reference
from minidb.pagestore.transactions.locking import NoLocking
from minidb.pagestore.transactions.xct import Xct, XctState

_ACTIVE, _ENDED = XctState.ACTIVE, XctState.ENDED


class transaction_block:  # noqa: N801 - the name of the reference's function it stands for
    """:func:`minidb.pagestore.transactions.xctmgr.transaction_block` as a context manager object."""

    __slots__ = ("manager", "durable", "xct")

    def __init__(self, manager: Any, durable: bool):
        self.manager, self.durable = manager, durable

    def __enter__(self) -> Xct:
        self.xct = self.manager.begin()
        return self.xct

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> bool:
        if kind is None:
            self.manager.commit(self.xct, durable=self.durable)
        elif self.xct.is_active:
            self.manager.abort(self.xct)
        return False  # an exception of the block passes on


class XctManager(reference.XctManager):
    """:class:`minidb.pagestore.transactions.xctmgr.XctManager` with a short begin and read-only commit."""

    def __init__(self, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self._counts = fast.held_counts(self.stats)  # nBegins, nReadOnly: changed under the table latch only

    def begin(self) -> Xct:
        latch = self.table_latch
        latch.acquire()
        try:
            tid = self._next_tid
            xct = Xct(tid, manager=self)
            self._next_tid = tid + 1
            self._table[tid] = xct
            self._counts["nBegins"] += 1
        finally:
            latch.release()
        if self.trace.enabled:
            self.trace.emit("T%d begins", tid)
        return xct

    def commit(self, xct: Xct, durable: bool = True) -> LSN:
        if type(xct) is not Xct or xct.manager is not self or xct.state != _ACTIVE or xct.last_lsn != NULL_LSN \
                or xct.load_stores or xct.pages_freed or xct.prepared is not None:
            return super().commit(xct, durable)
        latch = self.table_latch
        latch.acquire()
        try:
            table = self._table
            ended = table.get(xct.txn_id) is xct
            if ended:  # the reference's _end without an entry: ENDED, out of the table, counted
                xct.state = _ENDED
                del table[xct.txn_id]
                self._counts["nReadOnly"] += 1
        finally:
            latch.release()
        if not ended:
            return super().commit(xct, durable)  # not in the table: the reference's check says so
        locks = self.locks
        if type(locks) is not NoLocking:  # which holds nothing to release
            locks.release_all(xct)
        return NULL_LSN
