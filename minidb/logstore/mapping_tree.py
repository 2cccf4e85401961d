"""The mapping tree: database names -> ids and roots, itself a tree in the log.

JE keeps the databases of an environment in the *mapping tree* (``DbTree``):
an ordinary B+tree (database id 0 here) whose records are ``MapLN`` entries,
one per database: its id, name, flags and the LSN of its root. The mapping
tree's own root is recorded in every CkptEnd, so recovery starts from it.

Two databases always exist:

====  =================  ===========================================
id    name               what
====  =================  ===========================================
0     ``_mapping``       the mapping tree itself; its own MapLN records
                         the environment's kind (see below)
1     ``_utilization``   FileSummaryLNs, several per log file (internal)
2...  user databases     and internal ones made on first use (``_vlsn_index``)
====  =================  ===========================================

Internal databases (names starting with ``_``) are never replicated.

The environment's kind. A replicated environment and a plain one must each
refuse the other: a plain open would log records without VLSNs, and the next
replicated open would then shrink the VLSN range and hand out a VLSN twice.
JE keeps a "replicated" flag in its DbTree; here the mapping tree holds a
MapLN for itself, under the key ``_mapping``, whose ``replicated`` field is
the environment's kind (its ``root_lsn`` stays NULL: the mapping tree's root
is in every CkptEnd). It is logged once, by the first open, and stays live
in the mapping tree like any record. Recovery reads it (:func:`logged_kind`)
before it writes anything and refuses an open of the other kind. An
environment from before the kind was recorded is told by what it logged (a
VLSN, or a user database's MapLN flag) and gets the record at its next open.

When a database's root is logged (by the checkpointer, at the database's
max flush level), its root LSN changes, so its MapLN is logged again
(``modify_db_root``, JE's ``DbTree.modifyDbRoot``), which dirties a BIN of
the mapping tree; the checkpoint flushes the mapping tree after every other
database (JE numbers the mapping tree's levels above all others), so the
CkptEnd names a mapping tree that knows every root the checkpoint logged.

Example: ``env.database("accounts")`` in a new environment logs
``MapLN db_id=2 name=accounts root_lsn=NULL`` and a BIN for the new tree;
the next checkpoint logs the tree's root and ``MapLN db_id=2 ...
root_lsn=0x1/0x5a3``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.errors import UserError, utf8
from minidb.log import LSN, NULL_LSN
from minidb.logstore.errors import DatabaseNotFoundError
from minidb.logstore.logdef import (
    FIRST_USER_DB_ID,
    KIND_KEY,
    MAP_LN,
    MAPPING_DB_ID,
    MAPPING_DB_NAME,
    UTILIZATION_DB_ID,
    UTILIZATION_DB_NAME,
    ln_types_of,
)
from minidb.logstore.tree.cursor import Cursor
from minidb.logstore.tree.ln import fetch_ln
from minidb.logstore.tree.tree import TREE, DatabaseImpl, node_from_entry, read_node_entry

if TYPE_CHECKING:
    from minidb.logstore.checkpoint.dirty_map import DirtyINMap
    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.evictor import Evictor
    from minidb.logstore.records import RecordOps
    from minidb.logstore.tree.node_logger import NodeLogger
    from minidb.logstore.txn.locks import LockTable


class DbTree:
    """The mapping tree and the environment's databases by id and name."""

    def __init__(self, core: EnvCore, records: RecordOps, locks: LockTable, utilization: UtilizationTracker,
                 evictor: Evictor, node_logger: NodeLogger, dirty_map: DirtyINMap):
        self.core = core
        self.records = records
        self.locks = locks
        self.tracker = utilization
        self.evictor = evictor
        self.node_logger = node_logger
        self.dirty_map = dirty_map
        self.last_db_id = FIRST_USER_DB_ID - 1
        self.mapping = self._impl(MAPPING_DB_ID, MAPPING_DB_NAME, True, False, NULL_LSN)
        self.by_id: dict[int, DatabaseImpl] = {MAPPING_DB_ID: self.mapping}
        self.by_name: dict[str, DatabaseImpl] = {}
        self.replicated: bool | None = None  # the kind the mapping tree records (None: not recorded yet)

    def _impl(self, db_id: int, name: str, internal: bool, replicated: bool, root_lsn: LSN) -> DatabaseImpl:
        impl = DatabaseImpl(db_id, name, internal, replicated, root_lsn)
        impl.tree = TREE.call(self.core, impl, self.evictor, self.node_logger, self.dirty_map)
        return impl

    # -- lookups -----------------------------------------------------------------------
    def get(self, name: str) -> DatabaseImpl | None:
        return self.by_name.get(name)

    def get_by_id(self, db_id: int) -> DatabaseImpl | None:
        return self.by_id.get(db_id)

    def require_id(self, db_id: int) -> DatabaseImpl:
        impl = self.by_id.get(db_id)
        if impl is None:
            raise UserError(f"no database with id {db_id} in {self.core.where()}")
        return impl

    def note_db_id(self, db_id: int) -> None:
        """Recovery read a database id: new databases get larger ones."""
        self.last_db_id = max(self.last_db_id, db_id)

    def require(self, name: str) -> DatabaseImpl:
        impl = self.by_name.get(name)
        if impl is None:
            known = ", ".join(sorted(n for n in self.by_name if not n.startswith("_"))) or "none"
            raise DatabaseNotFoundError(f"no database named {name!r} in {self.core.where()} (user databases: {known})")
        return impl

    @property
    def utilization(self) -> DatabaseImpl:
        return self.by_id[UTILIZATION_DB_ID]

    def names(self, internal: bool = False) -> list[str]:
        return sorted(n for n, impl in self.by_name.items() if internal or not impl.internal)

    # -- creating ------------------------------------------------------------------------
    def create(self, name: str, *, internal: bool = False, replicated: bool | None = None,
               db_id: int | None = None, vlsn: int | None = None) -> DatabaseImpl:
        """A new database and its MapLN. In a replicated environment a user database's MapLN is
        replicated: it takes a VLSN (``vlsn``: the master's, when a replica replays the creation), so the
        creation travels in the stream before the database's first record, and a syncup rollback that
        undoes it removes the database (:meth:`remove`)."""
        check_name(name, internal)
        if name in self.by_name:
            raise UserError(f"database {name!r} exists already")
        if db_id is None:
            self.last_db_id += 1
            db_id = self.last_db_id
        replicated = self.core.config.replicated if replicated is None else replicated
        impl = self._impl(db_id, name, internal, replicated and not internal, NULL_LSN)
        self._add(impl)
        impl.tree.create_empty()
        impl.created_lsn = self.write_map_ln(impl, replicated=self.core.config.replicated and impl.replicated,
                                             vlsn=vlsn)
        self.core.trace.emit("created database %s (id %d%s)", name, db_id, ", internal" if internal else "")
        return impl

    def remove(self, impl: DatabaseImpl) -> None:
        """Forget database ``impl``: a syncup rollback undid its creation.

        Its MapLN's slot leaves the mapping tree (whose BIN is dirty: the next
        checkpoint writes it without the database), its nodes leave the cache
        and any checkpoint's dirty map, and its handles refuse every operation.
        Nothing is logged, like the rest of a rollback's undo: until that
        checkpoint, opening the environment undoes the rollback again
        (:mod:`minidb.replication.syncup.rollback`). Everything it logged is
        obsolete now, since no tree reaches it; its id is never handed out again
        (recovery learns the largest id from every MapLN in the log)."""
        key = impl.name.encode("utf-8")
        bin_node = self.mapping.tree.search(key)
        index, exact = bin_node.find(key)
        if exact:
            self.tracker.count_obsolete(bin_node.lsns[index])
            bin_node.remove_slot(index)
            bin_node.dirty = True
        del self.by_id[impl.id], self.by_name[impl.name]
        impl.removed = True
        self.evictor.forget_subtree(impl.root)
        self.dirty_map.forget_database(impl.id)
        self.core.trace.emit("removed database %s (id %d): its creation was rolled back", impl.name, impl.id)

    def _add(self, impl: DatabaseImpl) -> None:
        self.by_id[impl.id] = impl
        self.by_name[impl.name] = impl
        self.last_db_id = max(self.last_db_id, impl.id)

    def record_kind(self, replicated: bool) -> LSN:
        """Log the mapping tree's own MapLN: the environment is replicated or not, for good."""
        self.replicated = replicated
        values = dict(self.mapping.map_values(), root_lsn=NULL_LSN, replicated=replicated)
        return self.records.write_internal(self.mapping, KIND_KEY, MAP_LN, values)

    def write_map_ln(self, impl: DatabaseImpl, replicated: bool = False, vlsn: int | None = None) -> LSN:
        return self.records.write_internal(self.mapping, impl.name.encode("utf-8"), MAP_LN, impl.map_values(),
                                               replicated=replicated, vlsn=vlsn)

    def modify_db_root(self, impl: DatabaseImpl) -> None:
        """The root of ``impl`` was logged: record its new LSN (a MapLN), unless it is the mapping tree."""
        if impl.id == MAPPING_DB_ID:
            return
        self.write_map_ln(impl)
        self.dirty_map.note_map_ln_logged(self.mapping, impl.name.encode("utf-8"))

    # -- loading ---------------------------------------------------------------------------
    def load_from_mapping_tree(self) -> None:
        """Rebuild ``by_id``/``by_name`` from the mapping tree's records (after recovery)."""
        self.by_id = {MAPPING_DB_ID: self.mapping}
        self.by_name = {}
        cursor = Cursor(self.core, self.records, self.locks, self.mapping, None)
        item = cursor.seek(b"")
        while item is not None:
            values = item[1]
            if values["db_id"] == MAPPING_DB_ID:
                self.replicated = values["replicated"]
            else:
                self._add(self._impl(values["db_id"], values["name"], values["internal"], values["replicated"],
                                     values["root_lsn"]))
            item = cursor.next()



def logged_kind(log, root_lsn: LSN):
    """The mapping tree's own MapLN in the tree whose root is at ``root_lsn`` (None: not there).

    Read only: the nodes are read from the log, not attached, so recovery can
    look before it writes anything.
    """
    node = node_from_entry(read_node_entry(log, root_lsn, None, "root of the mapping tree"))
    while not node.is_bin:
        index = node.find_child_index(KIND_KEY)
        what = f"child {node.node_ids[index]} of {node.describe()}"
        node = node_from_entry(read_node_entry(log, node.lsns[index], node.node_ids[index], what))
    index, exact = node.find(KIND_KEY)
    if not exact:
        return None
    return fetch_ln(log, node.lsns[index], ln_types_of(MAPPING_DB_ID), f"{node.describe()} slot {index}")


def check_name(name: str, internal: bool) -> None:
    if not isinstance(name, str) or not name:
        raise UserError(f"a database name must be a non-empty string, not {name!r}")
    if len(utf8(name, "database name")) > 255:
        raise UserError(f"database name {name[:40]!r}... is longer than 255 bytes")
    if name == MAPPING_DB_NAME:
        raise UserError(f"database name {name!r} is reserved: it is the mapping tree's")
    if name.startswith("_") != internal:
        which = "internal databases must" if internal else "only internal databases may"
        raise UserError(f"database name {name!r}: {which} start with '_'")


__all__ = ["DbTree", "MAPPING_DB_ID", "UTILIZATION_DB_ID", "MAPPING_DB_NAME", "UTILIZATION_DB_NAME",
           "FIRST_USER_DB_ID", "KIND_KEY", "ln_types_of", "check_name", "logged_kind"]
