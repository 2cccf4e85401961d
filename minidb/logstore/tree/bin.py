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

**Folded and unfolded.** A BIN made in memory (a new tree, a split) keeps
its slots in the parallel lists ``keys``, ``lsns`` and ``known_deleted``. A
BIN read from the log starts *folded*: it keeps the item's bytes
(:class:`~minidb.logstore.tree.slots.SlotBytes`) and has no lists yet. A get
asks only :meth:`BIN.find`, :meth:`BIN.key_at`, :meth:`BIN.lsn_at` and
:meth:`BIN.deleted_at`, which read the few slots they need from the bytes;
anything else that reads the lists (a put, a cursor, the checkpointer
logging it, a picture) *unfolds* it the first time it asks: every slot is
decoded, the keys are checked to be in order and inside the node's range
(:func:`~minidb.logstore.tree.in_node.key_order_problem`; a node that breaks
it is a :class:`~minidb.logstore.errors.TreeError`, never searched), the
lists are made and the bytes dropped. A BIN that stays resident and is
searched again and again (a tree in memory) unfolds at its
``UNFOLD_AFTER_SEARCHES``-th search: searching bytes pays off for the few
searches between a fetch and an eviction, plain lists for many. Unfolding
changes nothing a reader can see: the lists hold what the bytes held. Invariant: a BIN is folded
only while it is exactly its logged version (its first change unfolds it),
so dropping the bytes loses nothing.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from minidb.log import LSN
from minidb.logstore.errors import TreeError
from minidb.logstore.logdef import BIN_ENTRY
from minidb.logstore.tree.in_node import IN, key_order_problem
from minidb.logstore.tree.slots import SlotBytes

#: the slot lists a folded BIN does not have until it unfolds
_COLUMNS = frozenset({"keys", "lsns", "known_deleted"})
#: a folded BIN searched this often while resident unfolds: it is being read again and again (gets on a
#: tree in memory), and one decode of every slot then costs less than more searches over the bytes
UNFOLD_AFTER_SEARCHES = 16


class BIN(IN):
    """A level-1 internal node; see the module documentation."""

    is_bin = True
    entry_type = BIN_ENTRY
    slot_bytes: SlotBytes | None = None  # the logged slots, while folded

    def __init__(self, db_id: int, node_id: int, id_key: bytes = b"", high_key: bytes | None = None):
        super().__init__(db_id, node_id, 1, id_key, high_key)
        self.known_deleted: list[bool] = []
        self.records: list[Any] = []

    # -- folded ---------------------------------------------------------------------------
    def fold(self, slots: SlotBytes) -> None:
        """Take the slots as the log holds them, decoded on demand (a BIN just read from the log)."""
        for name in _COLUMNS:
            self.__dict__.pop(name, None)
        self.slot_bytes = slots
        self.records = [None] * slots.count

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute the instance lacks: the slot lists of a folded BIN.
        if name in _COLUMNS and self.slot_bytes is not None:
            self.unfold()
            return self.__dict__[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def unfold(self) -> None:
        """Decode every slot into the lists (once), checking the keys' order and range."""
        slots = self.slot_bytes
        if slots is None:
            return
        count = range(slots.count)
        keys = [slots.key(i) for i in count]
        problem = key_order_problem(keys, self.id_key, self.high_key)
        if problem is not None:  # a crafted or damaged entry whose checksum is valid: never search it
            raise TreeError(f"{self.describe()} at {self.last_logged_lsn}: {problem}; keys {keys!r}")
        self.keys = keys
        self.lsns = [slots.lsn(i) for i in count]
        self.known_deleted = [slots.known_deleted(i) for i in count]
        self.slot_bytes = None

    @property
    def n_entries(self) -> int:
        slots = self.slot_bytes
        return len(self.keys) if slots is None else slots.count

    # -- slots ------------------------------------------------------------------------------
    def find(self, key: bytes) -> tuple[int, bool]:
        """(index, exact): where ``key`` is or would be inserted."""
        slots = self.slot_bytes
        if slots is not None and slots.searches < UNFOLD_AFTER_SEARCHES:
            index, exact, consistent = slots.search(key, self.id_key, self.high_key)
            if exact and consistent:
                return index, True
        if slots is not None:  # "no such key" (or a probe out of place) is answered only over checked keys
            self.unfold()
        i = bisect_left(self.keys, key)
        return i, i < len(self.keys) and self.keys[i] == key

    def key_at(self, index: int) -> bytes:
        slots = self.slot_bytes
        return self.keys[index] if slots is None else slots.key(index)

    def lsn_at(self, index: int) -> LSN:
        slots = self.slot_bytes
        return self.lsns[index] if slots is None else slots.lsn(index)

    def deleted_at(self, index: int) -> bool:
        slots = self.slot_bytes
        return self.known_deleted[index] if slots is None else slots.known_deleted(index)

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
        self.slot_bytes = None


__all__ = ["BIN"]
