"""A database's B+tree: search, fetch from the log, insert slots, split.

The tree of a database is reached from its root. The root's current version
is recorded in the database's MapLN (``root_lsn``, see
:mod:`minidb.logstore.mapping_tree`); a node that is not resident is read
from the log at its parent's slot LSN (*fetched*) and attached to the parent.
The root is always an upper IN (level 2 or more) and is never evicted; a new
database starts as a root IN over one empty BIN.

Splits. When a node holds more than ``node_max_entries`` slots it splits: the
upper half moves to a new right sibling, whose first key becomes the
separator inserted into the parent; the parent may overflow and split in
turn, up to the root, which then gets a new root above it (the tree grows a
level). Both halves of every split are logged at once with
Provisional.YES, so a parent never holds a slot without an LSN; the parent
stays dirty and records the split when it is itself logged. A split during
a checkpoint is coordinated with it (:mod:`minidb.logstore.checkpoint.dirty_map`).

Example, node_max_entries 4: inserting k1..k5 into one BIN splits it::

    before:  IN 3 [""] -> BIN 2 [k1 k2 k3 k4 k5]        (5 > 4)
    after:   IN 3 ["" , k3] -> BIN 2 [k1 k2]   BIN 4 [k3 k4 k5]
             logged: BIN 2 (YES), BIN 4 (YES); IN 3 dirty

A node read from the log must have its slot keys strictly increasing and
inside its logged range (``key_order_problem``): a search bisects the keys,
so a node that breaks this (a crafted entry with a valid checksum) would
lead to another record's data; it is a :class:`TreeError` naming the node,
its LSN and its keys instead. An upper IN is checked as it is read; a BIN
comes back *folded* (:mod:`.bin`: its slots decoded one at a time as a get
uses them) and is checked as far as a search probes it, and whole before it
answers "no such key" or is used any other way.

Finding a node's parent (the checkpointer and recovery do this) searches
by the node's low bound, ``id_key``, down to the level above it, and checks
the slot's node id (JE's ``getParentINForChildIN``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from minidb import impl
from minidb.log import LSN, NULL_LSN, Provisional
from minidb.log.fields import decode_fields
from minidb.logstore.errors import LogFileNotFound, TreeError
from minidb.logstore.logdef import BIN_ENTRY, IN_ENTRY
from minidb.logstore.tree.bin import BIN
from minidb.logstore.tree.in_node import IN, key_order_problem
from minidb.logstore.tree.ln import read_referenced
from minidb.logstore.tree.slots import SlotBytes

if TYPE_CHECKING:
    from minidb.logstore.core import EnvCore


#: a BIN item's fields before its slots (the slots, its last field, stay bytes: :mod:`.slots`)
_BIN_HEAD = BIN_ENTRY.fields[:-1]
#: where an IN or BIN item holds its node id: U64 after the U32 ``db_id`` (:mod:`minidb.logstore.logdef`)
_NODE_ID = struct.Struct("<Q")
_NODE_ID_END = 4 + _NODE_ID.size


@dataclass(eq=False)
class DatabaseImpl:
    """The environment's record of a database (JE's ``DatabaseImpl``): its id, name, whether it is internal
    (used by minidb itself: the mapping tree, ``_utilization``, replication's ``_vlsn_index``) and whether
    it is replicated, and its tree's root (resident node and root LSN)."""

    id: int
    name: str
    internal: bool
    replicated: bool
    root_lsn: LSN = NULL_LSN
    root: IN | None = None
    tree: "Tree" = field(init=False, repr=False)
    created_lsn: LSN = NULL_LSN  # the MapLN that created it, when this environment created it since it opened
    removed: bool = False  # a syncup rollback undid its creation (DbTree.remove): its handles are refused

    def map_values(self) -> dict[str, Any]:
        """The fields of this database's MapLN."""
        return {"db_id": self.id, "name": self.name, "root_lsn": self.root_lsn,
                "internal": self.internal, "replicated": self.replicated}


class NodeCache(Protocol):
    """What a tree needs of the cache (the evictor's INList): a node read or made is resident, a node
    passed on the way down is touched."""

    def register(self, node: IN) -> None: ...

    def touch(self, node: IN) -> None: ...


class NodeWriter(Protocol):
    """What a tree needs to log the halves of a split (the node logger)."""

    def log_in(self, node: IN, provisional: Provisional, *, reason: str) -> LSN: ...


class SplitWatcher(Protocol):
    """Who hears of every split: the checkpoint that may be running (the dirty map)."""

    def coordinate_split_with_checkpoint(self, db: DatabaseImpl, splits: list[tuple[IN, IN]]) -> None: ...


def node_from_entry(entry, slot_bytes: Callable[[bytes, int], SlotBytes] = SlotBytes) -> IN:
    """Build a (detached, clean) node from its IN or BIN log entry; its keys must be in order and range.

    A BIN comes back folded (:mod:`.bin`): its fields before the slots are decoded, its slots stay
    bytes, read one at a time when used, and its keys are checked when it unfolds (an upper IN,
    whose every slot a search may pass through, is decoded and checked here, whole)."""
    if entry.type_name == BIN_ENTRY.name:
        values, slots_start = decode_fields(_BIN_HEAD, entry.item, 0)
        node: IN = BIN(values["db_id"], values["node_id"], values["id_key"],
                       None if values["high_inf"] else values["high_key"])
        node.fold(slot_bytes(entry.item, slots_start))
    else:
        values = entry.values
        node = IN(values["db_id"], values["node_id"], values["level"], values["id_key"],
                  None if values["high_inf"] else values["high_key"])
        node.load_entries(values["entries"])
        problem = key_order_problem(node.keys, node.id_key, node.high_key)
        if problem is not None:  # a crafted or damaged entry whose checksum is valid: never search it
            raise TreeError(f"{node.describe()} at {entry.lsn}: {problem}; keys {node.keys!r}")
    node.last_logged_lsn = entry.lsn
    node.last_logged_provisional = entry.provisional
    return node


def read_node_entry(log, lsn: LSN, expected_node_id: int | None, what: str):
    """The IN/BIN entry at ``lsn``; a clear error if it is not the node the slot names."""
    entry = read_referenced(log, lsn, what)
    if entry.header.erased:
        raise TreeError(f"{what} at {lsn} was erased from the log: the node is gone (log file not found in JE terms)")
    if entry.type_name not in (IN_ENTRY.name, BIN_ENTRY.name):
        raise TreeError(f"{what} at {lsn} is a {entry.type_name} entry, not an IN or BIN")
    if expected_node_id is not None and node_id_of(entry) != expected_node_id:
        raise TreeError(f"{what} at {lsn} is node {node_id_of(entry)}, not node {expected_node_id}")
    return entry


def node_id_of(entry) -> int:
    """The node id of an IN or BIN entry, read where the item holds it (after ``db_id``), nothing else
    decoded; an item too short for it is decoded whole, whose error names the field."""
    if len(entry.item) < _NODE_ID_END:
        return entry.values["node_id"]
    return _NODE_ID.unpack_from(entry.item, _NODE_ID_END - _NODE_ID.size)[0]


def split_point(keys: Sequence[bytes], parent_node_ids: Sequence[int], node_id: int) -> tuple[int, bytes, int]:
    """Where an overflowing node splits: ``(mid, separator, parent_index)``.

    Slots ``mid:`` (the upper half, the larger one when the count is odd)
    move to a new right sibling; ``separator``, the first key that moves, is
    the sibling's low bound (``id_key``), the node's new high bound and the
    key of the parent's new slot for the sibling, which goes at
    ``parent_index``, right after the slot naming ``node_id``. The same for
    BINs and upper INs.
    """
    if len(keys) < 2:
        raise TreeError(f"a node with {len(keys)} slots cannot split")
    if node_id not in parent_node_ids:
        raise TreeError(f"node {node_id} has no slot in its parent (slots name {list(parent_node_ids)})")
    mid = len(keys) // 2
    return mid, keys[mid], list(parent_node_ids).index(node_id) + 1


def _split_from_exercise(hook: impl.Hook, student: Callable[..., Any]) -> Callable[..., tuple[int, bytes, int]]:
    """A student's ``split_point`` (exercise 09a), checked for form: both halves non-empty, the separator a
    key, the new slot inside the parent."""
    def split(keys: Sequence[bytes], parent_node_ids: Sequence[int], node_id: int) -> tuple[int, bytes, int]:
        answer = student(list(keys), list(parent_node_ids), node_id)
        if not (isinstance(answer, tuple) and len(answer) == 3 and isinstance(answer[0], int)
                and isinstance(answer[1], bytes) and isinstance(answer[2], int)):
            raise hook.wrong(f"returned {answer!r}, not (mid, separator, parent_index)")
        mid, separator, index = answer
        if not 0 < mid < len(keys) or not 0 <= index <= len(parent_node_ids):
            raise hook.wrong(f"returned {answer!r}: mid must be 1 to {len(keys) - 1}, the parent index 0 to "
                             f"{len(parent_node_ids)}")
        if node_id in parent_node_ids and index <= list(parent_node_ids).index(node_id):
            raise hook.wrong(f"put the new sibling's slot at {index}, before the node's own slot: the parent's "
                             f"keys would be out of order")
        return answer
    return split


#: where every split (:meth:`Tree._split`) asks :func:`split_point` (exercise 09a's hook)
SPLIT_POINT = impl.register("09a_bin_split", "split_point", split_point, _split_from_exercise)


class Tree:
    """The B+tree of one database (JE's ``Tree``)."""

    def __init__(self, core: EnvCore, db: DatabaseImpl, cache: NodeCache, writer: NodeWriter,
                 dirty_map: SplitWatcher):
        self.core = core
        self.db = db
        self.cache = cache
        self.writer = writer
        self.dirty_map = dirty_map

    # -- the root -------------------------------------------------------------------
    def create_empty(self) -> IN:
        """A root IN over one empty BIN (the BIN is logged at once, provisionally; in a read-only
        environment, whose recovery rebuilds a tree whose root was never logged, it stays in memory)."""
        core, db = self.core, self.db
        root = IN(db.id, core.next_node_id(), 2, b"", None)
        leaf = BIN(db.id, core.next_node_id(), b"", None)
        root.insert_child(0, b"", NULL_LSN, leaf.node_id, leaf)
        root.dirty = leaf.dirty = True
        db.root = root
        self.cache.register(root)
        self.cache.register(leaf)
        if not core.read_only:
            self.writer.log_in(leaf, Provisional.YES, reason="new tree")
        return root

    def root_node(self) -> IN:
        db = self.db
        if db.root is None:
            if db.root_lsn.is_null:
                raise TreeError(f"database {db.name!r} has no root")
            entry = self._read_node(db.root_lsn, None, f"root of {db.name!r}")
            db.root = self.node_of(entry)
            self.core.stats.add("nINsFetched")
            self.cache.register(db.root)
        self.cache.touch(db.root)
        return db.root

    def is_root(self, node: IN) -> bool:
        return self.db.root is node

    # -- fetching ----------------------------------------------------------------------
    def node_of(self, entry) -> IN:
        """The node a fetched IN or BIN entry holds (:func:`node_from_entry`)."""
        return node_from_entry(entry)

    def _read_node(self, lsn: LSN, node_id: int | None, what: str):
        """The node entry at ``lsn``; a node in a deleted file is lost: the environment is invalid (as for an LN)."""
        try:
            return read_node_entry(self.core.log, lsn, node_id, what)
        except LogFileNotFound as e:
            self.core.invalidate(str(e))
            raise

    def fetch_child(self, parent: IN, index: int) -> IN:
        child = parent.targets[index]
        if child is None:
            lsn = parent.lsns[index]
            if lsn.is_null:
                raise TreeError(f"{parent.describe()} slot {index} has no LSN")
            what = f"child {parent.node_ids[index]} of {parent.describe()}"
            entry = self._read_node(lsn, parent.node_ids[index], what)
            child = self.node_of(entry)
            if child.level != parent.level - 1:
                raise TreeError(f"{what} at {lsn} has level {child.level}, expected {parent.level - 1}")
            parent.targets[index] = child
            child.parent = parent
            self.core.stats.add("nINsFetched")
            self.cache.register(child)
        else:
            self.cache.touch(child)
        return child

    # -- searching ------------------------------------------------------------------------
    def search(self, key: bytes) -> BIN:
        """The BIN whose range holds ``key``: from the root, the child whose range holds it, down to level 1
        (each node fetched from the log if it is not resident, and touched in the INList)."""
        node = self.root_node()
        while not node.is_bin:
            node = self.fetch_child(node, node.find_child_index(key))
        assert isinstance(node, BIN)
        return node

    def find_parent(self, id_key: bytes, level: int, node_id: int, fetch: bool = True) -> tuple[IN | None, int | None, bytes | None]:
        """The parent of node ``node_id`` (level ``level``, low bound ``id_key``).

        Returns ``(parent, index, high)``: the node at ``level + 1`` whose range
        holds ``id_key``, the index of the slot naming ``node_id`` (None if the
        slot there names another node), and that slot's exclusive high bound
        as seen from the root (None: +infinity). ``(None, None, None)`` when
        the tree has no level ``level + 1``.
        """
        node = self.root_node()
        if node.level < level + 1:
            return None, None, None
        high: bytes | None = None
        while node.level > level + 1:
            i = node.find_child_index(id_key)
            high = node.keys[i + 1] if i + 1 < node.n_entries else high
            if node.targets[i] is None and not fetch:
                return None, None, None
            node = self.fetch_child(node, i)
        i = node.find_child_index(id_key)
        high = node.keys[i + 1] if i + 1 < node.n_entries else high
        if node.n_entries == 0 or node.node_ids[i] != node_id:
            return node, None, high
        return node, i, high

    # -- splits -------------------------------------------------------------------------------
    def split_if_needed(self, node: IN) -> None:
        """Split ``node`` (and its ancestors, as needed) if it holds too many slots."""
        core, db = self.core, self.db
        max_entries = core.config.node_max_entries
        if node.n_entries <= max_entries:
            return
        splits: list[tuple[IN, IN]] = []
        while node.n_entries > max_entries:
            sibling, parent = self._split(node)
            splits.append((node, sibling))
            node = parent
        for left, right in splits if not core.read_only else ():  # read-only: recovery's, kept in memory
            self.writer.log_in(left, Provisional.YES, reason="split")
            self.writer.log_in(right, Provisional.YES, reason="split")
        self.dirty_map.coordinate_split_with_checkpoint(db, splits)

    def _split(self, node: IN) -> tuple[IN, IN]:
        """One split: the upper half of ``node`` moves to a new right sibling; returns (sibling, parent).

        A root gets a new root above it first. Nothing is logged here: the callers log the halves."""
        core = self.core
        parent = node.parent if node.parent is not None else self._new_root(node)
        mid, separator, index = SPLIT_POINT.call(node.keys, parent.node_ids, node.node_id)  # its one call site
        sibling = self._move_upper_part(node, mid, separator)
        parent.insert_child(index, separator, NULL_LSN, sibling.node_id, sibling)
        node.dirty = sibling.dirty = parent.dirty = True
        core.stats.add("nSplits")
        return sibling, parent

    def _move_upper_part(self, node: IN, mid: int, separator: bytes) -> IN:
        """A new right sibling of ``node`` (a BIN of a BIN) holding its slots ``mid:``; ``separator``, the
        first key that moves, is the sibling's low bound and ``node``'s new high bound. The parent's slot
        for the sibling is the caller's."""
        core, db = self.core, self.db
        if node.is_bin:
            sibling: IN = BIN(db.id, core.next_node_id(), separator, node.high_key)
        else:
            sibling = IN(db.id, core.next_node_id(), node.level, separator, node.high_key)
        node.move_upper_half(sibling, mid)
        node.high_key = separator
        self.cache.register(sibling)
        core.trace.emit("split %s at %r: new sibling %s", node.describe(), separator, sibling.describe())
        return sibling

    def _new_root(self, node: IN) -> IN:
        """A new root IN above the root ``node``, which is about to split (the tree grows a level)."""
        core, db = self.core, self.db
        parent = IN(db.id, core.next_node_id(), node.level + 1, b"", None)
        parent.insert_child(0, node.id_key, node.last_logged_lsn, node.node_id, node)
        parent.dirty = True
        db.root = parent
        self.cache.register(parent)
        core.stats.add("nRootSplits")
        core.trace.emit("root split in %s: new root IN %d at level %d over %s", db.name,
                        parent.node_id, parent.level, node.describe())
        return parent


#: the class of every database's tree (``DbTree._impl`` builds one per database)
TREE = impl.hot_spot(Tree)


__all__ = ["DatabaseImpl", "NodeCache", "NodeWriter", "SplitWatcher", "Tree", "TREE", "node_from_entry", "read_node_entry", "split_point"]
