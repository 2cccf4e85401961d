"""Leaf nodes (JE's ``LN``): the records, which exist only as log entries.

A record's versions are LN entries; its BIN slot holds the LSN of the
current one. Which entry type a write logs depends on two things:

=================  ==============  ==============
                   no transaction  transaction
=================  ==============  ==============
put                ``LN``          ``LN_TX``
delete             ``DEL_LN``      ``DEL_LN_TX``
=================  ==============  ==============

Every LN entry carries ``prev_lsn``, the version it replaces (NULL_LSN for a
new key), so the utilization tracker can count that version obsolete, even
when recovery replays the write. A transactional LN also carries its *abort
LSN*: the version before the transaction first wrote the record (NULL_LSN if
the record did not exist) and whether that version was a deletion. Abort,
and recovery's undo of an uncommitted transaction, put that version back in
the slot.

Two internal databases use their own record types: the mapping tree's
``MapLN`` (database name -> id, root) and ``_utilization``'s
``FileSummaryLN``; their records are the entries' field values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minidb.log import LSN, LogEntry
from minidb.log.types import EntryType
from minidb.logstore.logdef import DEL_LN, DEL_LN_TX, DELETED_LN_TYPES, LN, LN_TX, USER_LN_TYPES


def ln_type(deleted: bool, transactional: bool) -> EntryType:
    if deleted:
        return DEL_LN_TX if transactional else DEL_LN
    return LN_TX if transactional else LN


def is_deletion(entry_type_name: str) -> bool:
    return entry_type_name in DELETED_LN_TYPES


def record_of(entry: LogEntry) -> Any:
    """What a slot caches for this LN: the data bytes, None for a deletion, field values for MapLN/FSLN."""
    name = entry.type_name
    if name in DELETED_LN_TYPES:
        return None
    if name in USER_LN_TYPES:
        return entry.values["data"]
    return dict(entry.values)


@dataclass(frozen=True)
class AbortInfo:
    """The version a transaction's abort restores (JE's abortLsn, abortKnownDeleted)."""

    lsn: LSN
    known_deleted: bool


__all__ = ["ln_type", "is_deletion", "record_of", "AbortInfo"]
