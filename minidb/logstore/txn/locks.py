"""Record locks: which transaction may write (and read) a record.

A simple lock table (JE's ``LockManager``, much reduced): a record, named by
(database id, key), is write-locked by the first transaction that writes it
and stays locked until that transaction commits or aborts. Another
transaction, or a write without a transaction, that touches a locked record
gets a :class:`~minidb.logstore.errors.LockConflictError` at once; nobody
waits, so there are no deadlocks to detect (the page store's lock manager is
where waiting and deadlock detection are taught).

Reads check the table too: a record written by a transaction that has not
ended is visible only to that transaction.

Example::

    txn 7 puts b"alice" in db 2   -> table {(2, b"alice"): 7}
    txn 8 gets b"alice"           -> LockConflictError (locked by txn 7)
    txn 7 commits                 -> table {}

The record lock also decides when a deleted slot may be compressed away: not
while a transaction holds the record's lock (its abort would need the slot).
"""

from __future__ import annotations

from minidb import impl
from minidb.logstore.errors import LockConflictError
from minidb.stats import Stats


class LockTable:
    def __init__(self) -> None:
        self._owners: dict[tuple[int, bytes], int] = {}
        self._held: dict[int, list[tuple[int, bytes]]] = {}
        self.stats = Stats("locks", ["nWriteLocks", "nConflicts"])

    def owner(self, db_id: int, key: bytes) -> int | None:
        return self._owners.get((db_id, key))

    def check(self, db_id: int, db_name: str, key: bytes, txn_id: int | None, what: str) -> None:
        """Raise if the record is locked by a transaction other than ``txn_id``."""
        owner = self._owners.get((db_id, key))
        if owner is not None and owner != txn_id:
            self.stats.add("nConflicts")
            requester = f"txn {txn_id}" if txn_id is not None else "a non-transactional " + what
            raise LockConflictError(db_name, key, owner, requester)

    def lock_write(self, db_id: int, db_name: str, key: bytes, txn_id: int) -> None:
        self.check(db_id, db_name, key, txn_id, "write")
        if (db_id, key) not in self._owners:
            self._owners[(db_id, key)] = txn_id
            self._held.setdefault(txn_id, []).append((db_id, key))
            self.stats.add("nWriteLocks")

    def release_all(self, txn_id: int) -> None:
        for record in self._held.pop(txn_id, []):
            del self._owners[record]

    def held_by(self, txn_id: int) -> list[tuple[int, bytes]]:
        return list(self._held.get(txn_id, []))

    def dump(self) -> list[str]:
        """The table as text, one lock a line, for demonstrations and golden tests."""
        return [f"db {db} key {key!r}: write-locked by txn {owner}" for (db, key), owner in sorted(self._owners.items())]

    def __len__(self) -> int:
        return len(self._owners)


#: the environment's lock table
LOCK_TABLE = impl.hot_spot(LockTable)


__all__ = ["LockTable", "LOCK_TABLE"]
