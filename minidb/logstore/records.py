"""Reading and writing records: an LN in the log, then its BIN slot.

A write (JE's ``CursorImpl.put``/``delete``) does, while it "holds the BIN
latch" (here: the environment latch, so no checkpoint step can come in
between, as the JE documentation's non-transactional example requires):

1. lock the record (transactions) or check that no transaction holds it,
   waiting while another does (:mod:`.txn.locks`: the wait releases the
   latch, so this comes before anything is read from the tree);
2. find the BIN; note the slot's current LSN, the version being replaced;
3. log the LN (``LN``/``LN_TX``/``DEL_LN``/``DEL_LN_TX``);
4. point the slot at it (inserting a slot for a new key), making the BIN
   dirty; split the BIN if it overflowed;
5. utilization: without a transaction, the replaced version is obsolete at
   once (and a deletion is obsolete itself); a transaction counts at commit.

A read finds the BIN slot; a known-deleted slot or no slot means no record;
the data comes from the slot's cache or is read from the log (an LN whose
key is not the slot's, or an entry of another type, is a
:class:`~minidb.logstore.errors.TreeError`, never another record's data; an
erased one an :class:`~minidb.logstore.errors.EnvironmentFailureError`, and
one in a deleted file a :class:`~minidb.logstore.errors.LogFileNotFound`;
both invalidate the environment, as in JE: every later operation fails
until it is closed and opened again).

``restore`` puts a record's abort version back (transaction abort, and
recovery's undo). ``write_internal`` is the non-transactional write used by
the mapping tree (MapLN) and the utilization tracker (FileSummaryLN).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from minidb.log import LSN, NULL_LSN
from minidb.logstore.errors import EnvironmentFailureError, LogFileNotFound, TreeError
from minidb.logstore.logdef import USER_LN_TYPES, ln_types_of
from minidb.logstore.tree.ln import AbortInfo, fetch_ln, ln_type, record_of

if TYPE_CHECKING:
    from minidb.log.types import EntryType
    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.locks import LockTable
    from minidb.logstore.txn.txn import Transaction


class _SlotName:
    """How errors name the record in a BIN slot; the text is made only if an error needs it (fetches are many)."""

    def __init__(self, bin_node, index: int):
        self.bin_node, self.index = bin_node, index

    def __str__(self) -> str:
        return f"record {self.bin_node.key_at(self.index)!r} ({self.bin_node.describe()} slot {self.index})"


class RecordOps:
    """Reading and writing records (LNs) in their trees, under record locks."""

    def __init__(self, core: EnvCore, utilization: UtilizationTracker, locks: LockTable):
        self.core = core
        self.utilization = utilization
        self.locks = locks

    def lock_timeout(self, txn: "Transaction | None") -> float:
        """How long ``txn`` (or an operation without one) waits for a record lock."""
        return txn.lock_timeout if txn is not None else self.core.config.lock_timeout

    # -- reading -----------------------------------------------------------------------
    def read(self, db: DatabaseImpl, key: bytes, txn: "Transaction | None") -> Any:
        # Before the search: a wait releases the latch, and the tree may change meanwhile.
        self.locks.check(db.id, db.name, key, txn.id if txn else None, "read", self.lock_timeout(txn))
        bin_node = db.tree.search(key)
        index, exact = bin_node.find(key)  # a BIN fetched from the log decodes only the slots probed
        if not exact or bin_node.deleted_at(index):
            return None
        record = bin_node.records[index]
        return record if record is not None else self.record_at(bin_node, index)

    def record_at(self, bin_node, index: int) -> Any:
        record = bin_node.records[index]
        if record is None:
            what = _SlotName(bin_node, index)
            try:
                entry = fetch_ln(self.core.log, bin_node.lsn_at(index), ln_types_of(bin_node.db_id), what)
            except (EnvironmentFailureError, LogFileNotFound) as e:  # the record is lost: JE invalidates
                self.core.invalidate(str(e))
                raise
            name = entry.type_name
            key = bin_node.key_at(index)
            if name in USER_LN_TYPES and entry.values["key"] != key:
                raise TreeError(f"{bin_node.describe()} slot {index} holds key {key!r}, but its LN at "
                                f"{entry.lsn} is the record of key {entry.values['key']!r}")
            record = record_of(entry, name)
            bin_node.records[index] = record
            self.core.stats.add("nLNsFetched")
        return record

    # -- writing -----------------------------------------------------------------------
    def write(self, db: DatabaseImpl, key: bytes, data: bytes | None, txn: "Transaction | None",
              vlsn: int | None = None) -> LSN | None:
        """Put ``data`` (or delete, when None); the LN's LSN, or None if there was nothing to delete.

        ``vlsn``: the LN's VLSN when given (a replica replaying the master's LN)."""
        core = self.core
        deleted = data is None
        timeout = self.lock_timeout(txn)  # the lock first: a wait releases the latch, the search comes after it
        if txn is not None:
            self.locks.lock_write(db.id, db.name, key, txn.id, timeout)
        else:
            self.locks.check(db.id, db.name, key, None, "write", timeout)
        bin_node = db.tree.search(key)
        index, exact = bin_node.find(key)
        if deleted and (not exact or bin_node.known_deleted[index]):
            return None
        prev = bin_node.lsns[index] if exact else NULL_LSN
        prev_deleted = bin_node.known_deleted[index] if exact else True
        values: dict[str, Any] = {"db_id": db.id, "key": key, "prev_lsn": prev}
        if not deleted:
            values["data"] = data
        abort = None
        if txn is not None:
            abort = txn.abort_info(db.id, key) or AbortInfo(prev, prev_deleted)
            values.update({"txn_id": txn.id, "txn_prev_lsn": txn.last_lsn,
                           "abort_lsn": abort.lsn, "abort_known_deleted": abort.known_deleted})
        replicated = core.config.replicated and db.replicated
        lsn = core.log_entry(ln_type(deleted, txn is not None), values, replicated=replicated, vlsn=vlsn)
        if exact:
            bin_node.update_slot(index, lsn, deleted, data)
        else:
            bin_node.insert_slot(index, key, lsn, deleted, data)
        bin_node.dirty = True
        if txn is not None:
            assert abort is not None
            txn.note_write(db.id, key, lsn, deleted, abort, prev, replicated)
        else:
            if not prev.is_null:
                self.utilization.count_obsolete(prev)
            if deleted:
                self.utilization.count_obsolete(lsn)
        core.stats.add("nDeletes" if deleted else "nPuts")
        if not exact:
            db.tree.split_if_needed(bin_node)
        return lsn

    def write_internal(self, db: DatabaseImpl, key: bytes, entry_type: EntryType, values: dict[str, Any],
                       replicated: bool = False, vlsn: int | None = None, upkeep: bool = False) -> LSN:
        """A non-transactional record of an internal database (MapLN, FileSummaryLN); ``replicated``/``vlsn``:
        a replicated database's creation (:meth:`~minidb.logstore.mapping_tree.DbTree.create`); ``upkeep``: the
        version it replaces is the utilization profile's upkeep (a FileSummaryLN rewritten whole)."""
        core = self.core
        bin_node = db.tree.search(key)
        index, exact = bin_node.find(key)
        prev = bin_node.lsns[index] if exact else NULL_LSN
        values = dict(values, prev_lsn=prev)
        lsn = core.log_entry(entry_type, values, replicated=replicated, vlsn=vlsn)
        if exact:
            bin_node.update_slot(index, lsn, False, values)
        else:
            bin_node.insert_slot(index, key, lsn, False, values)
        bin_node.dirty = True
        if not prev.is_null:
            self.utilization.count_obsolete(prev, upkeep=upkeep)
        if not exact:
            db.tree.split_if_needed(bin_node)
        return lsn

    # -- undo ---------------------------------------------------------------------------
    def restore(self, db: DatabaseImpl, key: bytes, abort: AbortInfo, only_if: LSN | None = None) -> bool:
        """Put the record's abort version back in its slot; False if nothing changed.

        ``only_if``: restore only when the slot holds exactly that LSN (recovery's
        undo: the tree may hold an older version already, or a newer one).
        """
        bin_node = db.tree.search(key)
        index, exact = bin_node.find(key)
        if only_if is not None and (not exact or bin_node.lsns[index] != only_if):
            return False
        if abort.lsn.is_null:
            if exact:
                bin_node.remove_slot(index)
        elif exact:
            bin_node.update_slot(index, abort.lsn, abort.known_deleted, None)
        else:
            bin_node.insert_slot(index, key, abort.lsn, abort.known_deleted, None)
            bin_node.dirty = True
            db.tree.split_if_needed(bin_node)
            return True
        bin_node.dirty = True
        return True


__all__ = ["RecordOps"]
