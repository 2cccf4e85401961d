"""The record lock table, with no look-up while nobody holds a lock (twin of
:class:`minidb.logstore.txn.locks.LockTable`).

Every get and every write asks :meth:`LockTable.check` whether another
transaction holds the record. Between transactions the table is empty (every
get and auto-commit put of a workload without transactions), and an empty
table cannot hold the record: the check returns at once, without building the
``(db_id, key)`` tuple and hashing it. While any transaction holds a lock,
each check looks its record up as the reference does.
"""

from __future__ import annotations

from minidb.logstore.txn.locks import LockTable as ReferenceLockTable


class LockTable(ReferenceLockTable):
    def check(self, db_id: int, db_name: str, key: bytes, txn_id: int | None, what: str,
              timeout: float = 0.0) -> bool:
        if not self._owners:  # no transaction holds a lock: nothing to look up, nothing to wait for
            return False
        return super().check(db_id, db_name, key, txn_id, what, timeout)


__all__ = ["LockTable"]
