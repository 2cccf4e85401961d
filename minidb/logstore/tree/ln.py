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

Every read of an LN through a slot goes through :func:`fetch_ln`, which
checks what the slot expects: an erased entry (the data eraser's
LOG_ERASED) is an :class:`~minidb.logstore.errors.EnvironmentFailureError`
naming the LSN (the record's data is gone), an entry of another type (a
Commit, an IN, another database's kind of LN) a
:class:`~minidb.logstore.errors.TreeError`; neither is ever returned as data; an entry in a log file the cleaner deleted
a :class:`~minidb.logstore.errors.LogFileNotFound` naming the file and LSN
(:func:`read_referenced`, which node fetches use too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minidb.errors import LogError
from minidb.log import LSN, LogEntry
from minidb.log.files import file_name
from minidb.log.types import EntryType
from minidb.logstore.errors import EnvironmentFailureError, LogFileNotFound, TreeError
from minidb.logstore.logdef import DEL_LN, DEL_LN_TX, DELETED_LN_TYPES, LN, LN_TX, USER_LN_TYPES


def ln_type(deleted: bool, transactional: bool) -> EntryType:
    if deleted:
        return DEL_LN_TX if transactional else DEL_LN
    return LN_TX if transactional else LN


def is_deletion(entry_type_name: str) -> bool:
    return entry_type_name in DELETED_LN_TYPES


def record_of(entry: LogEntry, name: str | None = None) -> Any:
    """What a slot caches for this LN: the data bytes, None for a deletion, field values for MapLN/FSLN.

    ``name``: the entry's type name, when the caller has it already."""
    if name is None:
        name = entry.type_name
    if name in DELETED_LN_TYPES:
        return None
    if name in USER_LN_TYPES:
        return entry.values["data"]
    return dict(entry.values)


def read_referenced(log, lsn: LSN, what: str) -> LogEntry:
    """The entry at ``lsn`` that ``what`` refers to: a :class:`LogFileNotFound` if it lies in a file
    the cleaner deleted (below the log head, or from the middle), a :class:`TreeError` if it cannot be read."""
    if log.is_deleted(lsn.file):
        where = (f"the log starts at {file_name(log.head)}" if lsn.file < log.head
                 else "deleted from the middle of the log")
        raise LogFileNotFound(f"{what} refers to {lsn}, in log file {file_name(lsn.file)}, which was deleted "
                              f"({where})")
    try:
        return log.read(lsn)
    except LogError as e:
        raise TreeError(f"cannot fetch {what} at {lsn}: {e}") from None


def fetch_ln(log, lsn: LSN, expected: frozenset[str], what: str) -> LogEntry:
    """The LN at ``lsn`` that ``what`` (a slot) refers to; it must be one of the ``expected`` types."""
    entry = read_referenced(log, lsn, what)
    name = entry.type_name
    if name not in expected:
        if entry.header.erased:
            raise EnvironmentFailureError(f"{what} refers to the erased entry at {lsn}: its data is gone")
        kinds = " or ".join(sorted(expected))
        raise TreeError(f"{what} refers to a {name} entry at {lsn}, not a {kinds}")
    return entry


@dataclass(frozen=True)
class AbortInfo:
    """The version a transaction's abort restores (JE's abortLsn, abortKnownDeleted)."""

    lsn: LSN
    known_deleted: bool


__all__ = ["read_referenced", "fetch_ln", "ln_type", "is_deletion", "record_of", "AbortInfo"]
