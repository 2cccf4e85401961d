"""Recovery's LN passes: which transactions committed, redo of LNs, undo of the losers.

**Transactions.** A transaction whose Commit is in the log (and not rolled
back by a replication syncup: an INVISIBLE Commit never was) committed; every
other transaction with an LN after firstActiveLSN is a *loser*, aborted or
still active at the crash (:func:`find_losers`). The losers' records stay
locked from here until their undo, so that no BIN logged meanwhile (a split,
an eviction) compresses a loser's deleted slot away.

**Redo** (JE's: "Recovery will process LNs between the FirstActiveLSN and the
end of the log"): the LNs of committed transactions, those written without a
transaction, and FileSummaryLNs, one at a time in log order, each with a
search from the root (:func:`redo_ln`): a slot takes the logged LSN if it is
newer; a missing key is inserted, unless the LN is a deletion. The last
version of a key wins because it comes last. Non-transactional LNs between
firstActiveLSN and CkptStart are already in the checkpoint's BINs, but a
deletion among them must be replayed after an older committed write of the
same key that recovery redoes: the checkpoint's BIN may have compressed the
deleted slot away, and the older write would come back. Invisible LNs
(rolled back by a syncup) and those of a database that is gone are skipped;
the versions each LN replaces, and every deletion, are counted obsolete.

**Undo**: the losers' LNs, newest first: a slot holding exactly that LSN goes
back to the LN's abort LSN (:func:`undo_losers`).

A crash during recovery is a crash like any other: the next recovery starts
from the same CkptEnd, and the BINs this one logged (splits, provisional;
evictions) hold only versions that redo puts back anyway.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.logstore.cleaner.utilization import key_of_summary
from minidb.logstore.logdef import FILE_SUMMARY_TYPES
from minidb.logstore.mapping_tree import UTILIZATION_DB_ID
from minidb.logstore.recovery.reading import TXN_LN_CODES, entries_from
from minidb.logstore.tree.ln import AbortInfo, is_deletion, record_of

if TYPE_CHECKING:
    from minidb.log import LogEntry
    from minidb.logstore.recovery.info import RecoveryInfo
    from minidb.logstore.recovery.parts import Parts
    from minidb.logstore.tree.tree import DatabaseImpl

RECOVERY_LOCKER = 0  # transaction ids start at 1: the owner of the losers' locks is recovery itself


def find_losers(parts: Parts, info: RecoveryInfo, lns: list[LogEntry],
                commits: list[LogEntry]) -> dict[int, list[LogEntry]]:
    """``info.committed`` and ``info.losers`` from the Commits and LNs after firstActiveLSN; the losers'
    records locked. Returns each transaction's LNs, in log order."""
    txn_lns: dict[int, list[LogEntry]] = {}
    for entry in entries_from(commits, info.first_active_lsn):
        if not entry.header.invisible:  # a rolled-back Commit never was
            info.committed.add(entry.txn_id)
    for entry in entries_from(lns, info.first_active_lsn):
        if entry.header.type_code in TXN_LN_CODES:
            txn_lns.setdefault(entry.txn_id, []).append(entry)
    info.losers = set(txn_lns) - info.committed
    for txn_id in sorted(info.losers):
        for entry in txn_lns[txn_id]:
            db = parts.db_tree.get_by_id(entry.values["db_id"])
            if db is not None:
                parts.locks.lock_write(db.id, db.name, entry.values["key"], RECOVERY_LOCKER)
    return txn_lns


def redo_ln(parts: Parts, info: RecoveryInfo, db: "DatabaseImpl", key: bytes, entry: LogEntry, record) -> bool:
    """Put the LN in the tree if it is newer than the slot (JE's redo); True if it went in."""
    deleted = is_deletion(entry.type_name)
    bin_node = db.tree.search(key)
    index, exact = bin_node.find(key)
    if exact:
        if entry.lsn <= bin_node.lsns[index]:
            info.lns_not_newer += 1
            return False
        bin_node.update_slot(index, entry.lsn, deleted, record)
    elif deleted:
        return False
    else:
        bin_node.insert_slot(index, key, entry.lsn, False, record)
    bin_node.dirty = True
    if not exact:
        db.tree.split_if_needed(bin_node)
    return True


def redo_lns(parts: Parts, info: RecoveryInfo, lns: list[LogEntry]) -> None:
    """Redo, LN by LN in log order, from firstActiveLSN: committed, non-transactional, FileSummaryLNs."""
    utilization_db = parts.db_tree.get_by_id(UTILIZATION_DB_ID)
    for entry in entries_from(lns, info.first_active_lsn):
        if entry.header.invisible:
            continue  # rolled back by a replication syncup: not part of the database any more
        if entry.header.type_code in TXN_LN_CODES and entry.txn_id not in info.committed:
            continue
        values = entry.values
        if entry.type_name in FILE_SUMMARY_TYPES:
            db, key = utilization_db, key_of_summary(entry.type_name, values)
        else:
            db, key = parts.db_tree.get_by_id(values["db_id"]), values["key"]
        if db is None:
            continue  # a database that is gone
        if redo_ln(parts, info, db, key, entry, record_of(entry)):
            info.lns_redone += 1
        parts.utilization.count_obsolete(values["prev_lsn"])
        if is_deletion(entry.type_name):
            parts.utilization.count_obsolete(entry.lsn)
        parts.evictor.evict_to_budget()


def undo_losers(parts: Parts, info: RecoveryInfo, txn_lns: dict[int, list[LogEntry]]) -> None:
    """The losers' LNs, newest first: a slot holding exactly that LSN goes back to the abort LSN; then
    the losers' locks are released."""
    for entry in sorted((e for txn_id in info.losers for e in txn_lns[txn_id]), key=lambda entry: entry.lsn, reverse=True):
        values = entry.values
        db = parts.db_tree.get_by_id(values["db_id"])
        if db is None:
            continue
        abort = AbortInfo(values["abort_lsn"], values["abort_known_deleted"])
        if parts.records.restore(db, values["key"], abort, only_if=entry.lsn):
            info.lns_undone += 1
        parts.utilization.count_obsolete(entry.lsn)
        if values["prev_lsn"] != values["abort_lsn"]:
            parts.utilization.count_obsolete(values["prev_lsn"])
        parts.evictor.evict_to_budget()
    parts.locks.release_all(RECOVERY_LOCKER)


__all__ = ["RECOVERY_LOCKER", "find_losers", "redo_ln", "redo_lns", "undo_losers"]
