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
from typing import Any

from minidb.log import LSN
from minidb.logstore.logdef import BIN_ENTRY
from minidb.logstore.tree.in_node import IN


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
        return list(zip(self.keys, self.lsns, self.known_deleted, strict=True))

    def load_entries(self, entries: list[dict[str, Any]]) -> None:
        self.keys = [e["key"] for e in entries]
        self.lsns = [e["lsn"] for e in entries]
        self.known_deleted = [e["known_deleted"] for e in entries]
        self.records = [None] * len(entries)


__all__ = ["BIN"]
