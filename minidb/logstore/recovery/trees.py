"""Recovery's IN passes: the trees as the last checkpoint left them, and the newer INs logged since.

JE's recovery rebuilds every tree from its root down: the mapping tree's root
is named by the CkptEnd, every other database's root by its MapLN. Then the
INs and BINs logged non-provisionally from CkptStart on are placed, each in
log order (:meth:`INReplay.replay`):

- a provisional one is skipped (:func:`~minidb.logstore.checkpoint.provisional.is_provisional`;
  BEFORE_CKPT_END only when the CkptEnd follows it): its parent, logged
  non-provisionally later, names it or a newer version;
- a root replaces the database's root if it is newer;
- any other IN replaces its parent's slot only if the logged LSN is newer
  than the slot's, and only if the logged key range is the slot's: a version
  logged after a split its parent does not know about cannot be placed (the
  LNs redone afterwards cover it).

Utilization: the old versions a logged IN names in its ``obsolete`` field are
obsolete only if the recovered tree uses that logged version or a newer one
(:meth:`INReplay.keep_counted`, right after each IN pass, before anything
splits or logs a node): an IN recovery could not place made nothing obsolete.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.logstore.checkpoint.provisional import is_provisional

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.log import LSN, LogEntry
    from minidb.logstore.recovery.info import RecoveryInfo
    from minidb.logstore.recovery.parts import Parts


class INReplay:
    """Places logged INs in the trees (JE's ``RecoveryManager.replayOneIN``) and keeps what they made obsolete."""

    def __init__(self, parts: Parts, info: RecoveryInfo, say: Callable[..., None]):
        self.parts, self.info, self.say = parts, info, say
        self.replayable: list[LogEntry] = []  # non-provisional INs naming obsolete versions
        self.counted: list[LogEntry] = []  # ... of which the recovered tree uses the version
        self.named = 0

    def replay(self, entry: LogEntry) -> None:
        parts, info = self.parts, self.info
        if is_provisional(entry.lsn, entry.provisional, info.last_ckpt_end):
            info.ins_provisional += 1
            return  # its slots are never decoded
        values = entry.values
        if values["obsolete"]:
            self.replayable.append(entry)
            self.named += 1
        db = parts.db_tree.get_by_id(values["db_id"])
        if db is None:
            info.ins_not_placed += 1
            return
        kind = entry.type_name
        if values["is_root"]:
            if db.root_lsn.is_null or entry.lsn > db.root_lsn:
                self.parts.evictor.forget_subtree(db.root)
                db.root, db.root_lsn = None, entry.lsn
                info.ins_replayed += 1
                self.say("%s %d at %s is the new root of %s", kind, values["node_id"], entry.lsn, db.name)
                parts.db_tree.modify_db_root(db)
            else:
                info.ins_not_newer += 1
            return
        parent, index, high = db.tree.find_parent(values["id_key"], values["level"], values["node_id"])
        logged_high = None if values["high_inf"] else values["high_key"]
        if parent is None or index is None or logged_high != high:
            info.ins_not_placed += 1
            return
        if entry.lsn > parent.lsns[index]:
            self.parts.evictor.forget_subtree(parent.targets[index])
            parent.targets[index] = None
            parent.lsns[index] = entry.lsn
            parent.dirty = True
            info.ins_replayed += 1
            self.say("%s %d at %s replaces its slot in %s", kind, values["node_id"], entry.lsn, parent.describe())
        else:
            info.ins_not_newer += 1

    def keep_counted(self) -> None:
        """Right after an IN pass, before anything splits or logs a node: which replayed INs does the tree use?"""
        for entry in self.replayable:
            version = self.version_in_tree(entry.values)
            if version is not None and version >= entry.lsn:
                self.counted.append(entry)
        self.replayable = []

    def version_in_tree(self, values: dict) -> LSN | None:
        """The LSN of the version of this IN that the recovered tree uses (None: the node is not in it)."""
        db = self.parts.db_tree.get_by_id(values["db_id"])
        if db is None:
            return None
        root = db.tree.root_node()
        if root.node_id == values["node_id"]:
            return None if root.last_logged_lsn.is_null else root.last_logged_lsn
        parent, index, _ = db.tree.find_parent(values["id_key"], values["level"], values["node_id"])
        if parent is None or index is None:
            return None
        return parent.lsns[index]

    def count_obsolete(self) -> int:
        """Count the versions named by the INs the recovered tree uses; how many INs that was."""
        for entry in self.counted:
            for old in entry.values["obsolete"]:
                self.parts.utilization.count_obsolete(old["lsn"])
        return len(self.counted)


__all__ = ["INReplay"]
