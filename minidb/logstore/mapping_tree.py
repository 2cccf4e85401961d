"""The mapping tree: database names -> ids and roots, itself a tree in the log.

JE keeps the databases of an environment in the *mapping tree* (``DbTree``):
an ordinary B+tree (database id 0 here) whose records are ``MapLN`` entries,
one per database: its id, name, flags and the LSN of its root. The mapping
tree's own root is recorded in every CkptEnd, so recovery starts from it.

Two databases always exist:

====  =================  ===========================================
id    name               what
====  =================  ===========================================
0     ``_mapping``       the mapping tree itself (no MapLN of its own)
1     ``_utilization``   FileSummaryLNs, one per log file (internal)
2...  user databases     and internal ones made on first use (``_vlsn_index``)
====  =================  ===========================================

Internal databases (names starting with ``_``) are never replicated.

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

from minidb.errors import UserError
from minidb.log import LSN, NULL_LSN
from minidb.logstore.database import DatabaseImpl, utf8
from minidb.logstore.errors import DatabaseNotFoundError
from minidb.logstore.logdef import MAP_LN
from minidb.logstore.tree.tree import Tree

if TYPE_CHECKING:
    from minidb.logstore.env import Environment

MAPPING_DB_ID = 0
UTILIZATION_DB_ID = 1
MAPPING_DB_NAME = "_mapping"
UTILIZATION_DB_NAME = "_utilization"
FIRST_USER_DB_ID = 2


class DbTree:
    """The mapping tree and the environment's databases by id and name."""

    def __init__(self, env: "Environment"):
        self.env = env
        self.last_db_id = FIRST_USER_DB_ID - 1
        self.mapping = self._impl(MAPPING_DB_ID, MAPPING_DB_NAME, True, False, NULL_LSN)
        self.by_id: dict[int, DatabaseImpl] = {MAPPING_DB_ID: self.mapping}
        self.by_name: dict[str, DatabaseImpl] = {}

    def _impl(self, db_id: int, name: str, internal: bool, replicated: bool, root_lsn: LSN) -> DatabaseImpl:
        impl = DatabaseImpl(db_id, name, internal, replicated, root_lsn)
        impl.tree = Tree(self.env, impl)
        return impl

    # -- lookups -----------------------------------------------------------------------
    def get(self, name: str) -> DatabaseImpl | None:
        return self.by_name.get(name)

    def get_by_id(self, db_id: int) -> DatabaseImpl | None:
        return self.by_id.get(db_id)

    def require(self, name: str) -> DatabaseImpl:
        impl = self.by_name.get(name)
        if impl is None:
            known = ", ".join(sorted(n for n in self.by_name if not n.startswith("_"))) or "none"
            raise DatabaseNotFoundError(f"no database named {name!r} in {self.env.where()} (user databases: {known})")
        return impl

    @property
    def utilization(self) -> DatabaseImpl:
        return self.by_id[UTILIZATION_DB_ID]

    def names(self, internal: bool = False) -> list[str]:
        return sorted(n for n, impl in self.by_name.items() if internal or not impl.internal)

    # -- creating ------------------------------------------------------------------------
    def create(self, name: str, *, internal: bool = False, replicated: bool | None = None,
               db_id: int | None = None) -> DatabaseImpl:
        check_name(name, internal)
        if name in self.by_name:
            raise UserError(f"database {name!r} exists already")
        if db_id is None:
            self.last_db_id += 1
            db_id = self.last_db_id
        replicated = self.env.config.replicated if replicated is None else replicated
        impl = self._impl(db_id, name, internal, replicated and not internal, NULL_LSN)
        self._add(impl)
        impl.tree.create_empty()
        self.write_map_ln(impl)
        self.env.trace.emit("created database %s (id %d%s)", name, db_id, ", internal" if internal else "")
        return impl

    def _add(self, impl: DatabaseImpl) -> None:
        self.by_id[impl.id] = impl
        self.by_name[impl.name] = impl
        self.last_db_id = max(self.last_db_id, impl.id)

    def write_map_ln(self, impl: DatabaseImpl) -> LSN:
        return self.env.records.write_internal(self.mapping, impl.name.encode("utf-8"), MAP_LN, impl.map_values())

    def modify_db_root(self, impl: DatabaseImpl) -> None:
        """The root of ``impl`` was logged: record its new LSN (a MapLN), unless it is the mapping tree."""
        if impl.id == MAPPING_DB_ID:
            return
        self.write_map_ln(impl)
        self.env.dirty_map.note_map_ln_logged(self.mapping, impl.name.encode("utf-8"))

    # -- loading ---------------------------------------------------------------------------
    def load_from_mapping_tree(self) -> None:
        """Rebuild ``by_id``/``by_name`` from the mapping tree's records (after recovery)."""
        from minidb.logstore.tree.cursor import Cursor

        self.by_id = {MAPPING_DB_ID: self.mapping}
        self.by_name = {}
        cursor = Cursor(self.env, self.mapping, None)
        item = cursor.seek(b"")
        while item is not None:
            values = item[1]
            impl = self._impl(values["db_id"], values["name"], values["internal"], values["replicated"],
                              values["root_lsn"])
            self._add(impl)
            item = cursor.next()

    def refresh_from_map_ln(self, values: dict) -> DatabaseImpl:
        """Recovery replayed a MapLN: create or update that database's record."""
        impl = self.by_id.get(values["db_id"])
        if impl is None:
            impl = self._impl(values["db_id"], values["name"], values["internal"], values["replicated"],
                              values["root_lsn"])
            self._add(impl)
        return impl


def check_name(name: str, internal: bool) -> None:
    if not isinstance(name, str) or not name:
        raise UserError(f"a database name must be a non-empty string, not {name!r}")
    if len(utf8(name, "database name")) > 255:
        raise UserError(f"database name {name[:40]!r}... is longer than 255 bytes")
    if name.startswith("_") != internal:
        which = "internal databases must" if internal else "only internal databases may"
        raise UserError(f"database name {name!r}: {which} start with '_'")


__all__ = ["DbTree", "MAPPING_DB_ID", "UTILIZATION_DB_ID", "MAPPING_DB_NAME", "UTILIZATION_DB_NAME",
           "FIRST_USER_DB_ID", "check_name"]
