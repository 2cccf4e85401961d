"""Transactions: LNs logged with a transaction id, ended by Commit or Abort.

A transaction (JE's ``Txn``) write-locks every record it writes and logs
transactional LNs (``LN_TX``, ``DEL_LN_TX``), chained by ``txn_prev_lsn``.
Each LN carries the record's *abort LSN*: the version before the
transaction's first write of it. The transaction remembers, per record, that
abort version and the LSNs it logged.

- **commit** logs a ``Commit`` entry and, with Durability.SYNC (the default),
  fsyncs the log before returning; the versions the transaction replaced,
  and its own deletions, become obsolete; the locks are released. The fsync
  is waited for *outside* the environment latch (the transaction is
  ``COMMITTING`` meanwhile, its locks still held), so concurrent transactions
  log their own Commits and share one fsync through the log's group commit.
- **abort** logs an ``Abort`` entry, then *undoes*: each record's slot goes
  back to its abort version (or disappears if the record did not exist).
  The transaction stays registered as active until the undo is done, so a
  checkpoint that starts in between still has its first LSN as
  firstActiveLSN and recovery will replay the abort (the JE documentation's "Example:
  Abort"). Its own LNs become obsolete. If the Abort cannot be logged (a
  full disk, a failed log), the undo, which is in memory only, is done all
  the same and the locks are released, so other readers are not blocked;
  abort then raises :class:`~minidb.logstore.errors.AbortNotLoggedError`
  naming the failure. Nothing is lost: the transaction never committed, so
  recovery undoes its LNs whether or not an Abort follows them.

The transaction manager keeps the active transactions; the smallest first
LSN among them is *firstActiveLSN*, from which recovery reads LNs. Example::

    txn 5 first logs at 0x1/0x200, txn 6 at 0x1/0x340 -> firstActiveLSN 0x1/0x200
    txn 5 commits                                      -> firstActiveLSN 0x1/0x340
    txn 6 aborts                                       -> no active txn (NULL_LSN)

Transactions are also context managers: commit when the block ends, abort
when it raises.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb.errors import DiskError, LogError, UserError
from minidb.log import LSN, NULL_LSN
from minidb.logstore.config import Durability
from minidb.logstore.errors import AbortNotLoggedError, TransactionStateError
from minidb.logstore.logdef import ABORT, COMMIT

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.records import RecordOps
    from minidb.logstore.tree.ln import AbortInfo
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.locks import LockTable


class TxnState(enum.Enum):
    OPEN = "open"
    COMMITTING = "committing"  # Commit logged, waiting (outside the environment latch) for its fsync
    COMMITTED = "committed"
    ABORTED = "aborted"


@dataclass
class WriteRecord:
    """What a transaction wrote to one record."""

    db_id: int
    key: bytes
    abort: AbortInfo
    lsns: list[tuple[LSN, bool]] = field(default_factory=list)  # (lsn, is a deletion)


class Transaction:
    """One transaction of an environment (see the module documentation)."""

    def __init__(self, manager: "TxnManager", txn_id: int, durability: Durability):
        self.manager = manager
        self.core = manager.core
        self.id = txn_id
        self.durability = durability
        self.state = TxnState.OPEN
        self.first_lsn: LSN = NULL_LSN
        self.last_lsn: LSN = NULL_LSN
        self.writes: dict[tuple[int, bytes], WriteRecord] = {}
        self.order: list[tuple[int, bytes]] = []
        self.replicated = False
        self.end_lsn: LSN = NULL_LSN

    # -- used by the record operations ---------------------------------------------
    def check_open(self) -> None:
        if self.state is not TxnState.OPEN:
            raise TransactionStateError(f"txn {self.id} is {self.state.value}; it cannot be used any more")

    def abort_info(self, db_id: int, key: bytes) -> AbortInfo | None:
        record = self.writes.get((db_id, key))
        return record.abort if record else None

    def note_write(self, db_id: int, key: bytes, lsn: LSN, deleted: bool, abort: AbortInfo, prev: LSN,
                   replicated: bool) -> None:
        record = self.writes.get((db_id, key))
        if record is None:
            record = self.writes[(db_id, key)] = WriteRecord(db_id, key, abort)
            self.order.append((db_id, key))
        elif record.lsns and not prev.is_null and prev == record.lsns[-1][0]:
            # Overwriting our own version: no abort can return to it, so it is obsolete now.
            self.manager.utilization.count_obsolete(prev)
        record.lsns.append((lsn, deleted))
        if self.first_lsn.is_null:
            self.first_lsn = lsn
        self.last_lsn = lsn
        self.replicated = self.replicated or replicated

    # -- ending ----------------------------------------------------------------------------
    def commit(self, vlsn: int | None = None, time_ms: int | None = None) -> LSN:
        """Commit; returns the Commit entry's LSN (NULL_LSN if nothing was written).

        ``vlsn``: the Commit's VLSN, given (a replica replaying the master's Commit) rather than allocated;
        ``time_ms``: the master's commit time, logged as is (default: now), so both logs hold the same entry.
        """
        core, utilization = self.core, self.manager.utilization
        with core.latch:
            core.check_usable()
            self.check_open()
            if not self.writes:
                return self._finish_commit()
            lsn = core.log_entry(COMMIT, {"txn_id": self.id, "txn_prev_lsn": self.last_lsn,
                                         "time_ms": core.now_ms() if time_ms is None else time_ms},
                                replicated=self.replicated, vlsn=vlsn)
            self.end_lsn = lsn
            if self.durability is Durability.WRITE_NO_SYNC:
                core.log.flush()
            self.state = TxnState.COMMITTING
        if self.durability is Durability.SYNC:
            # Outside the environment latch: other transactions go on meanwhile, and their commits
            # share this fsync (the log's group commit). Locks are held until the Commit is durable.
            core.log.sync(lsn)
        with core.latch:
            for record in self.writes.values():
                if not record.abort.lsn.is_null:
                    utilization.count_obsolete(record.abort.lsn)
                for ln_lsn, deleted in record.lsns:
                    if deleted:
                        utilization.count_obsolete(ln_lsn)
            core.stats.add("nCommits")
            core.trace.emit("txn %d committed at %s (%d records)", self.id, lsn, len(self.writes))
            return self._finish_commit()

    def _finish_commit(self) -> LSN:
        self._end(TxnState.COMMITTED)
        self.core.after_operation()
        return self.end_lsn

    def abort(self, vlsn: int | None = None, time_ms: int | None = None) -> LSN:
        """Abort: log Abort, undo every write, then unregister (``vlsn``, ``time_ms`` as for :meth:`commit`)."""
        core, manager = self.core, self.manager
        with core.latch:
            core.check_usable()
            self.check_open()
            failure: LogError | DiskError | None = None
            if self.writes:
                try:
                    self.end_lsn = core.log_entry(ABORT, {"txn_id": self.id, "txn_prev_lsn": self.last_lsn,
                                                         "time_ms": core.now_ms() if time_ms is None else time_ms},
                                                 replicated=self.replicated,
                                               vlsn=vlsn)
                except (LogError, DiskError) as e:  # a full disk, a failed log; not a (simulated) crash
                    failure = e
                for db_id, key in reversed(self.order):
                    record = self.writes[(db_id, key)]
                    manager.records.restore(manager.database_of(db_id), key, record.abort)
                for record in self.writes.values():
                    for ln_lsn, _ in record.lsns:
                        manager.utilization.count_obsolete(ln_lsn)
                core.stats.add("nAborts")
                core.trace.emit("txn %d aborted at %s; undid %d records", self.id, self.end_lsn, len(self.writes))
            self._end(TxnState.ABORTED)
            if failure is not None:
                raise AbortNotLoggedError(f"txn {self.id} in {core.where()}: its Abort could not be logged ({failure}); "
                                          f"its {len(self.writes)} records were undone in memory and its locks "
                                          "released; recovery undoes it too, as it never committed") from failure
            core.after_operation()
            return self.end_lsn

    def _end(self, state: TxnState) -> None:
        self.state = state
        self.manager.locks.release_all(self.id)
        self.manager.unregister(self)

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        if self.state is not TxnState.OPEN or self.core.closed:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def __repr__(self) -> str:
        return f"Transaction({self.id}, {self.state.value}, first={self.first_lsn})"


class TxnManager:
    """The active transactions and the next transaction id (JE's ``TxnManager``).

    Ids: one counter, ``last_txn_id`` (kept in CkptEnd, and recovery continues after the largest id it
    sees). Ordinary transactions take its next value; *internal* ones (writing only internal databases,
    such as the VLSN index's flush) take the next value negated, so they never share an id with a
    replicated transaction (JE gives local transactions negative ids). A replica's replay begins
    transactions with the master's ids (``txn_id``), which moves the counter past them.
    """

    def __init__(self, core: EnvCore, utilization: UtilizationTracker, locks: LockTable, records: "RecordOps",
                 database_of: Callable[[int], DatabaseImpl]):
        self.core = core
        self.utilization = utilization
        self.locks = locks
        self.records = records
        self.database_of = database_of
        self.last_txn_id = 0
        self.active: dict[int, Transaction] = {}

    def begin(self, durability: Durability | None = None, *, internal: bool = False,
              txn_id: int | None = None) -> Transaction:
        if durability is not None and not isinstance(durability, Durability):
            # Anything else would commit like NO_SYNC, silently weaker than asked.
            names = ", ".join(f"Durability.{d.name}" for d in Durability)
            raise UserError(f"cannot begin a transaction in {self.core.where()}: durability {durability!r} "
                            f"is not one of {names}")
        if txn_id is not None:
            if isinstance(txn_id, bool) or not isinstance(txn_id, int) or txn_id < 1 or txn_id in self.active:
                raise UserError(f"cannot begin a transaction in {self.core.where()} with id {txn_id!r}: a given id "
                                "is a positive integer that no active transaction has")
            self.last_txn_id = max(self.last_txn_id, txn_id)
        else:
            self.last_txn_id += 1
            txn_id = -self.last_txn_id if internal else self.last_txn_id
        txn = Transaction(self, txn_id, durability or self.core.config.durability)
        self.active[txn.id] = txn
        return txn

    def note_txn_id(self, txn_id: int) -> None:
        """Recovery read a transaction id: new transactions get larger ones (an internal one's is negative)."""
        self.last_txn_id = max(self.last_txn_id, abs(txn_id))

    def unregister(self, txn: Transaction) -> None:
        self.active.pop(txn.id, None)

    def first_active_lsn(self) -> LSN:
        """The first LSN of the oldest active transaction that has logged (NULL_LSN if none)."""
        firsts = [t.first_lsn for t in self.active.values() if not t.first_lsn.is_null]
        return min(firsts) if firsts else NULL_LSN


__all__ = ["Transaction", "TxnManager", "TxnState", "WriteRecord"]
