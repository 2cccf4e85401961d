"""Transactions and record locks of the log store (JE's ``txn`` package: ``Txn``, ``LockManager``).

:mod:`.txn` is the transaction (LNs chained by ``txn_prev_lsn``, each with
its abort LSN; Commit fsynced, Abort undone in memory) and the transaction
manager that keeps firstActiveLSN; :mod:`.locks` is the record lock table a
transaction's writes take and its reads check (no waiting: a conflict is an
error at once).
"""

from minidb.logstore.txn.locks import LOCK_TABLE, LockTable
from minidb.logstore.txn.txn import Transaction, TxnManager, TxnState, WriteRecord

__all__ = ["Transaction", "TxnManager", "TxnState", "WriteRecord", "LockTable", "LOCK_TABLE"]
