"""Cursors: records in key order (JE's ``Cursor``, forward only).

A cursor remembers the key it is on. ``next()`` finds the first live record
after it: within the same BIN while that BIN is still resident and unchanged
(its ``version`` counter), otherwise by a fresh search from the root, so a
cursor survives eviction, splits and checkpoints between its steps. At the
end of a BIN it continues at the BIN's high bound, the first key of the next
BIN's range. Known-deleted slots are skipped; a record locked by another
transaction is a :class:`~minidb.logstore.errors.LockConflictError`, as for a
read.

Example::

    cursor = db.cursor()
    cursor.seek(b"b")      # -> (b"bob", b"50"), the first record with key >= b"b"
    cursor.next()          # -> (b"carol", b"75")
    cursor.next()          # -> None: the end
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING

from minidb.errors import as_bytes

if TYPE_CHECKING:
    from minidb.logstore.core import EnvCore
    from minidb.logstore.records import RecordOps
    from minidb.logstore.tree.bin import BIN
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.locks import LockTable
    from minidb.logstore.txn.txn import Transaction


class Cursor:
    def __init__(self, core: EnvCore, records: RecordOps, locks: LockTable, db: DatabaseImpl,
                 txn: "Transaction | None"):
        self.core = core
        self.records = records
        self.locks = locks
        self.db = db
        self.txn = txn
        self.key: bytes | None = None
        self._bin: BIN | None = None
        self._index = 0
        self._version = -1

    def seek(self, key: bytes | str) -> tuple[bytes, bytes] | None:
        """Move to the first record with a key >= ``key``."""
        key = as_bytes(key, "key")
        with self.core.latch:
            self.core.check_usable()
            bin_node = self.db.tree.search(key)
            item = self._scan_from(bin_node, bisect_left(bin_node.keys, key))
            self.core.after_operation(read=True)
            return item

    def first(self) -> tuple[bytes, bytes] | None:
        return self.seek(b"")

    def next(self) -> tuple[bytes, bytes] | None:
        """Move to the next record; None at the end (or before any seek)."""
        if self.key is None:
            return None
        with self.core.latch:
            self.core.check_usable()
            bin_node = self._bin
            if bin_node is not None and bin_node.resident and bin_node.version == self._version:
                start = self._index + 1
            else:
                bin_node = self.db.tree.search(self.key)
                start = bisect_right(bin_node.keys, self.key)
            item = self._scan_from(bin_node, start)
            self.core.after_operation(read=True)
            return item

    def _scan_from(self, bin_node: "BIN", index: int) -> tuple[bytes, bytes] | None:
        db = self.db
        txn_id = self.txn.id if self.txn else None
        while True:
            while index < bin_node.n_entries:
                key = bin_node.keys[index]
                self.locks.check(db.id, db.name, key, txn_id, "read")
                if not bin_node.known_deleted[index]:
                    data = self.records.record_at(bin_node, index)
                    self.key, self._bin, self._index, self._version = key, bin_node, index, bin_node.version
                    self.core.stats.add_held("nCursorSteps")
                    return key, data
                index += 1
            if bin_node.high_key is None:
                self.key, self._bin = None, None
                return None
            high = bin_node.high_key
            bin_node = db.tree.search(high)
            index = bisect_left(bin_node.keys, high)

    def lsn(self):
        """The LSN of the record the cursor is on (None when it is on none)."""
        if self.key is None or self._bin is None:
            return None
        return self._bin.lsns[self._index]

    def __iter__(self):
        item = self.first() if self.key is None else self.next()
        while item is not None:
            yield item
            item = self.next()

    def close(self) -> None:
        self.key, self._bin = None, None


__all__ = ["Cursor"]
