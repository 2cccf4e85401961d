"""Transactions and record locks of the log store (JE's ``txn`` package: ``Txn``, ``LockManager``).

:mod:`.txn` is the transaction (LNs chained by ``txn_prev_lsn``, each with
its abort LSN; Commit fsynced, Abort undone in memory) and the transaction
manager that keeps firstActiveLSN; :mod:`.locks` is the record lock table a
transaction's writes take and its reads check: a conflict waits (the
environment latch released) until the holder ends, or fails after the lock
timeout, or at once as a deadlock (:mod:`.deadlock`, the waits-for walk).
"""

from minidb.logstore.txn.locks import LOCK_TABLE, LockTable
from minidb.logstore.txn.txn import Transaction, TxnManager, TxnState, WriteRecord

__all__ = ["Transaction", "TxnManager", "TxnState", "WriteRecord", "LockTable", "LOCK_TABLE"]
