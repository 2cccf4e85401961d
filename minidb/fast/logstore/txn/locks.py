"""The record lock table, with no look-up while nobody holds a lock (twin of
:class:`minidb.logstore.txn.locks.LockTable`).

Every get and every write asks :meth:`LockTable.check` whether another
transaction holds the record. Between transactions the table is empty (every
get and auto-commit put of a workload without transactions), and an empty
table cannot hold the record: the check returns at once, without building the
``(db_id, key)`` tuple and hashing it. While any transaction holds a lock,
each check looks its record up as the reference does.

A write lock granted at once (the record free) is taken in place, its
``nWriteLocks`` counted in the stats' dict (:func:`minidb.fast.held_counts`):
every caller of ``lock_write`` holds the environment latch (a write of the
record operations, recovery's redo, syncup's rollback), which orders every
change of the table and its counters. A lock held by another transaction
goes the reference's way (wait, time out or find a deadlock).
"""

from __future__ import annotations

from threading import get_ident
from typing import Any

from minidb import fast
from minidb.logstore.txn.locks import LockTable as ReferenceLockTable


class LockTable(ReferenceLockTable):
    def __init__(self, *args: Any, **options: Any):
        super().__init__(*args, **options)
        self._counts = fast.held_counts(self.stats)  # nWriteLocks: changed under the environment latch only

    def check(self, db_id: int, db_name: str, key: bytes, txn_id: int | None, what: str,
              timeout: float = 0.0) -> bool:
        if not self._owners:  # no transaction holds a lock: nothing to look up, nothing to wait for
            return False
        return super().check(db_id, db_name, key, txn_id, what, timeout)

    def lock_write(self, db_id: int, db_name: str, key: bytes, txn_id: int, timeout: float = 0.0) -> bool:
        record = (db_id, key)
        owner = self._owners.get(record)
        if owner == txn_id:
            return False
        if owner is not None:  # held by another: wait as the reference does
            return super().lock_write(db_id, db_name, key, txn_id, timeout)
        self._owners[record] = txn_id  # the reference's _grant
        held = self._held.get(txn_id)
        if held is None:
            self._held[txn_id] = [record]
        else:
            held.append(record)
        self._thread_of[txn_id] = get_ident()
        self._counts["nWriteLocks"] += 1
        return False


__all__ = ["LockTable"]
