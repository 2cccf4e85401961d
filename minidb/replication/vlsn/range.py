"""The VLSN range (JE's ``VLSNRange``): the contiguous part of the replication stream a node holds.

A node always holds a contiguous portion of the replication stream. The
range names it, with two landmarks that elections and syncup use:

- ``first``, ``last``: the first and last VLSN held;
- ``last_sync``: the last *sync-able* entry, where a replica may end a
  syncup (a Commit, an Abort or a Matchpoint);
- ``last_txn_end``: the last Commit or Abort.

A range is immutable: every change makes a new one, which the tracker
assigns atomically while holding its mutex, and readers read without a mutex
(JE's volatile field). It changes three ways:

- a new mapping (:meth:`get_update_for_new_mapping`): ``last`` moves only
  forward, so a VLSN that arrives out of order does not move the range; the
  tracker guarantees that ``first`` and ``last`` always have mappings;
- log cleaning shortens it from the head (:meth:`shorten_from_head`);
- syncup rollback shortens it from the end (:meth:`shorten_from_end`).

Example: Commit at VLSN 5, LN at 6, Matchpoint at 7, LN at 8 give
``VLSNRange(first=1, last=8, last_sync=7, last_txn_end=5)``; if VLSN 8 was
registered before 7 (puts come after the log write latch), 7 still moves
``last_sync`` but not ``last``.

Stored in the VLSN index's database under key -1 (see :mod:`.vlsn`)::

    offset size  field            (little-endian, struct "<B4Q")
    ------ ----  ------------------------------------------------
       0     1   format           1
       1     8   first            0 = none (an empty range)
       9     8   last
      17     8   last_sync
      25     8   last_txn_end
      33         (33 bytes)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from minidb.replication.errors import VLSNIndexCorruptionError
from minidb.replication.vlsn.allocator import NULL_VLSN

#: Entries where a syncup may end (JE: LogEntryType.isSyncPoint).
SYNC_TYPES = frozenset({"Commit", "Abort", "Matchpoint", "TermStart"})
#: Entries that end a transaction (JE: LogEntryType.isTxnEnd).
TXN_END_TYPES = frozenset({"Commit", "Abort"})

RANGE_FORMAT = 1
_RANGE = struct.Struct("<B4Q")
RANGE_SIZE = _RANGE.size


@dataclass(frozen=True)
class VLSNRange:
    first: int = NULL_VLSN
    last: int = NULL_VLSN
    last_sync: int = NULL_VLSN
    last_txn_end: int = NULL_VLSN

    def __post_init__(self) -> None:
        if (self.first == NULL_VLSN) != (self.last == NULL_VLSN) or self.first > self.last:
            raise ValueError(f"not a range: first {self.first}, last {self.last}")
        for name in ("last_sync", "last_txn_end"):
            value = getattr(self, name)
            if value != NULL_VLSN and not self.first <= value <= self.last:
                raise ValueError(f"{name} {value} lies outside {self.first}..{self.last}")

    @property
    def is_empty(self) -> bool:
        return self.first == NULL_VLSN

    @property
    def size(self) -> int:
        """How many VLSNs the range holds."""
        return 0 if self.is_empty else self.last - self.first + 1

    def contains(self, vlsn: int) -> bool:
        return not self.is_empty and self.first <= vlsn <= self.last

    def get_update_for_new_mapping(self, vlsn: int, type_name: str) -> "VLSNRange":
        """The range after registering ``vlsn`` (an entry of type ``type_name``)."""
        first = vlsn if self.is_empty or vlsn < self.first else self.first
        last = max(self.last, vlsn)
        last_sync = max(self.last_sync, vlsn) if type_name in SYNC_TYPES else self.last_sync
        last_txn_end = max(self.last_txn_end, vlsn) if type_name in TXN_END_TYPES else self.last_txn_end
        return VLSNRange(first, last, last_sync, last_txn_end)

    def shorten_from_head(self, delete_end: int) -> "VLSNRange":
        """The range without the VLSNs up to ``delete_end`` (log cleaning)."""
        if self.is_empty or delete_end < self.first:
            return self
        if delete_end >= self.last:
            raise ValueError(f"cannot delete up to VLSN {delete_end}: the range {self} would be empty")
        keep = lambda v: v if v > delete_end else NULL_VLSN  # noqa: E731
        return VLSNRange(delete_end + 1, self.last, keep(self.last_sync), keep(self.last_txn_end))

    def shorten_from_end(self, delete_start: int, last_sync: int | None = None,
                         last_txn_end: int | None = None) -> "VLSNRange":
        """The range without the VLSNs from ``delete_start`` on (syncup rollback).

        The landmarks, if they were deleted, are whatever the caller found
        before ``delete_start`` (``None``: keep them if still inside, else none).
        """
        if self.is_empty or delete_start > self.last:
            return self
        if delete_start <= self.first:
            return VLSNRange()
        last = delete_start - 1
        fix = lambda old, found: (old if old <= last else NULL_VLSN) if found is None else found  # noqa: E731
        return VLSNRange(self.first, last, fix(self.last_sync, last_sync), fix(self.last_txn_end, last_txn_end))

    def encode(self) -> bytes:
        return _RANGE.pack(RANGE_FORMAT, self.first, self.last, self.last_sync, self.last_txn_end)

    @classmethod
    def decode(cls, data: bytes) -> "VLSNRange":
        if len(data) != RANGE_SIZE or data[0] != RANGE_FORMAT:
            raise VLSNIndexCorruptionError(f"the VLSN range record is not a range (format {data[:1].hex() or 'none'}, "
                                 f"{len(data)} bytes, expected format 1 and {RANGE_SIZE})")
        _, first, last, last_sync, last_txn_end = _RANGE.unpack(data)
        try:
            return cls(first, last, last_sync, last_txn_end)
        except ValueError as e:
            raise VLSNIndexCorruptionError(f"the VLSN range record is inconsistent: {e}") from None

    def __str__(self) -> str:
        if self.is_empty:
            return "empty"
        return f"{self.first}..{self.last} (last_sync {self.last_sync}, last_txn_end {self.last_txn_end})"


EMPTY_RANGE = VLSNRange()

__all__ = ["VLSNRange", "EMPTY_RANGE", "SYNC_TYPES", "TXN_END_TYPES", "RANGE_SIZE"]
