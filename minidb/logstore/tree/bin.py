"""A bottom internal node (JE's ``BIN``): the level-1 node whose slots point at records.

A BIN slot is ``(key, lsn, known_deleted)``: the record's key, the LSN of its
current version (an LN entry), and whether that version is a deletion. A
deleted record keeps its slot (known deleted) while a transaction may still
abort the deletion; when the BIN is next logged and no transaction holds the
record's lock, the slot is compressed away (JE's INCompressor, done here as
the BIN is logged).

``records[i]`` caches the record's data while the BIN is resident (JE keeps
LNs attached to their BIN the same way); it is None when the record has to
be read from the log. Evicting the BIN drops the cache with it.

Example (max 4 entries): put k3, k1, k2, then delete k2::

    BIN 1  k1 -> 0x1/0x5c   k2 -> 0x1/0x9a (known deleted)   k3 -> 0x1/0x40
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
from operator import itemgetter
from typing import Any

from minidb.log import LSN
from minidb.logstore.logdef import BIN_ENTRY
from minidb.logstore.tree.in_node import IN


_slot_key = itemgetter(1)  # an (index, key, ...) slot's key: no two slots of a node have the same


class BIN(IN):
    """A level-1 internal node; see the module documentation."""

    is_bin = True
    entry_type = BIN_ENTRY

    def __init__(self, db_id: int, node_id: int, id_key: bytes = b"", high_key: bytes | None = None):
        super().__init__(db_id, node_id, 1, id_key, high_key)
        self.known_deleted: list[bool] = []
        self.records: list[Any] = []

    def find(self, key: bytes) -> tuple[int, bool]:
        """(index, exact): where ``key`` is or would be inserted."""
        i = bisect_left(self.keys, key)
        return i, i < len(self.keys) and self.keys[i] == key

    def insert_slot(self, index: int, key: bytes, lsn: LSN, known_deleted: bool, record: Any) -> None:
        self.keys.insert(index, key)
        self.lsns.insert(index, lsn)
        self.known_deleted.insert(index, known_deleted)
        self.records.insert(index, record)
        self.version += 1

    def insert_slots(self, inserts: list[tuple[int, bytes, LSN, bool, Any]]) -> None:
        """:meth:`insert_slot` for many new keys found against the slots as they were.

        ``inserts``: ``(index, key, lsn, known_deleted, record)`` in key order, each ``index`` where
        :meth:`find` placed the key *before* any of them went in. Inserting them from the last to the
        first keeps every index right (an insertion moves only the slots after it); the slots end as
        inserting them one by one in key order, each found again, would leave them. Many keys into a
        small node (a BIN that redo fills from empty) are merged into its lists in one sort instead:
        two sorted runs, which Python's sort merges in one pass.
        """
        if len(inserts) <= len(self.keys):
            for index, key, lsn, known_deleted, record in reversed(inserts):
                self.insert_slot(index, key, lsn, known_deleted, record)
            return
        merged = sorted([*zip(repeat(0), self.keys, self.lsns, self.known_deleted, self.records), *inserts],
                        key=_slot_key)
        columns = zip(*merged)
        next(columns)  # the indexes
        for column, values in zip((self.keys, self.lsns, self.known_deleted, self.records), columns):
            column[:] = values
        self.version += len(inserts)

    def append_slots(self, keys: list[bytes], lsns: list[LSN], known_deleted: list[bool], records: list[Any]) -> None:
        """New slots after the last one, given column by column: ``keys`` sorted, all above the current
        keys (what :meth:`insert_slots` would do with them, without looking for their places)."""
        if keys and self.keys and keys[0] <= self.keys[-1]:
            raise ValueError(f"append_slots: {keys[0]!r} is not above the last slot {self.keys[-1]!r}")
        self.keys += keys
        self.lsns += lsns
        self.known_deleted += known_deleted
        self.records += records
        self.version += len(keys)

    def update_slot(self, index: int, lsn: LSN, known_deleted: bool, record: Any) -> None:
        self.lsns[index] = lsn
        self.known_deleted[index] = known_deleted
        self.records[index] = record
        self.version += 1

    def remove_slot(self, index: int) -> None:
        del self.keys[index], self.lsns[index], self.known_deleted[index], self.records[index]
        self.version += 1

    def has_resident_children(self) -> bool:
        return False

    def resident_children(self) -> list[IN]:
        return []

    def move_upper_half(self, sibling: IN, mid: int) -> None:
        assert isinstance(sibling, BIN)
        sibling.keys = self.keys[mid:]
        sibling.lsns = self.lsns[mid:]
        sibling.known_deleted = self.known_deleted[mid:]
        sibling.records = self.records[mid:]
        del self.keys[mid:], self.lsns[mid:], self.known_deleted[mid:], self.records[mid:]
        self.version += 1
        sibling.version += 1

    def log_entries(self) -> list[tuple[bytes, LSN, bool]]:
        """The slots as the entry's ``entries`` list: ``(key, lsn, known_deleted)`` rows, in field order."""
        return list(zip(self.keys, self.lsns, self.known_deleted))

    def load_entries(self, entries: list[dict[str, Any]]) -> None:
        self.keys = [e["key"] for e in entries]
        self.lsns = [e["lsn"] for e in entries]
        self.known_deleted = [e["known_deleted"] for e in entries]
        self.records = [None] * len(entries)


__all__ = ["BIN"]
