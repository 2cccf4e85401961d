"""Logging an IN or BIN: a new version at the end of the log (JE's ``IN.log``).

Everyone who writes a node goes through :meth:`NodeLogger.log_in`: the
checkpointer, the evictor, splits. It

1. compresses a BIN (drops the slots of committed deletions, which no
   transaction can bring back any more: JE's INCompressor);
2. logs the node with the given Provisional value;
3. points the parent's slot at the new LSN, which dirties the parent;
4. if the node is its database's root, records the new root in the
   mapping tree (a MapLN; JE's ``DbTree.modifyDbRoot``);
5. keeps the utilization tracker accurate:

   - logged non-provisionally (NO or BEFORE_CKPT_END): the node's previous
     version is obsolete now, and so are the old versions of children that
     were logged provisionally under it since its last non-provisional
     logging (its ``provisional_obsolete`` list). The entry lists them in
     its ``obsolete`` field, so recovery can count them again. For a node of
     ``_utilization`` they are the profile's upkeep, whose files' records may
     wait (:mod:`minidb.logstore.cleaner.utilization`);
   - logged with Provisional.YES: nothing is obsolete yet, because recovery
     will not replay this version; the previous version (and the node's
     list) moves to the parent's list, and counts when an ancestor is
     logged non-provisionally.

Example: BIN 4 at 0x1/0x100 logged YES at 0x1/0x300 by a split: 0x1/0x100
goes on IN 3's list; IN 3 logged NO at 0x1/0x500 by the next checkpoint
counts 0x1/0x100 obsolete and writes ``obsolete=[<IN 3's old version>,
0x1/0x100]`` in its entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log import LSN, Provisional
from minidb.logstore.errors import TreeError
from minidb.logstore.logdef import UTILIZATION_DB_ID

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.locks import LockTable


class NodeLogger:
    """Logs INs and BINs. Given by the environment: ``database_of(db_id)``; ``migrate_marked(bin)``, the
    cleaner's lazy migration of the BIN's marked LNs; ``root_logged(db)``, the mapping tree's record of a
    database's new root (a MapLN)."""

    def __init__(self, core: EnvCore, utilization: UtilizationTracker, locks: LockTable,
                 database_of: Callable[[int], DatabaseImpl], migrate_marked: Callable[[IN], None],
                 root_logged: Callable[[DatabaseImpl], None]):
        self.core = core
        self.utilization = utilization
        self.locks = locks
        self.database_of = database_of
        self.migrate_marked = migrate_marked
        self.root_logged = root_logged

    def log_in(self, node: IN, provisional: Provisional, *, reason: str) -> LSN:
        core = self.core
        db = self.database_of(node.db_id)
        is_root = db.root is node
        if node.is_bin:
            self.migrate_marked(node)  # lazy migration: the marked LNs go before their BIN
            self.compress(node)
        elif any(lsn.is_null for lsn in node.lsns):
            raise TreeError(f"{node.describe()} has a child that was never logged")
        prev = node.last_logged_lsn
        obsolete: list[LSN] = []
        if provisional is not Provisional.YES:
            obsolete = ([prev] if not prev.is_null else []) + node.provisional_obsolete
        values = {
            "db_id": node.db_id,
            "node_id": node.node_id,
            "level": node.level,
            "is_root": is_root,
            "id_key": node.id_key,
            "high_inf": node.high_key is None,
            "high_key": node.high_key or b"",
            "prev_lsn": prev,
            "obsolete": [{"lsn": lsn} for lsn in obsolete],
            "entries": node.log_entries(),
        }
        lsn = core.log_entry(node.entry_type, values, provisional=provisional)
        if provisional is Provisional.YES:
            carried = ([prev] if not prev.is_null else []) + node.provisional_obsolete
            node.provisional_obsolete = []
            holder = node.parent if node.parent is not None else node
            holder.provisional_obsolete.extend(carried)
        else:
            node.provisional_obsolete = []
            upkeep = node.db_id == UTILIZATION_DB_ID  # the profile's own nodes: their files' records may wait
            for old in obsolete:
                self.utilization.count_obsolete(old, upkeep=upkeep)
        node.last_logged_lsn = lsn
        node.last_logged_provisional = provisional
        node.dirty = False
        parent = node.parent
        if parent is not None:
            index = parent.index_of_child(node.node_id)
            if index is None:
                raise TreeError(f"{node.describe()} is not in its parent {parent.describe()}")
            parent.lsns[index] = lsn
            parent.dirty = True
        core.stats.add("nINsLogged")
        core.trace.emit("logged %s at %s provisional=%s (%s)", node.describe(), lsn, provisional.name, reason)
        if is_root:
            db.root_lsn = lsn
            self.root_logged(db)
        return lsn

    def compress(self, bin_node: IN) -> int:
        """Remove known-deleted slots that no transaction holds a lock on."""
        if not any(bin_node.known_deleted):
            return 0  # nothing to look at (the usual BIN)
        removed = 0
        i = 0
        while i < bin_node.n_entries:
            if bin_node.known_deleted[i] and self.locks.owner(bin_node.db_id, bin_node.keys[i]) is None:
                bin_node.remove_slot(i)
                removed += 1
            else:
                i += 1
        if removed:
            self.core.stats.add("nSlotsCompressed", removed)
        return removed


__all__ = ["NodeLogger"]
