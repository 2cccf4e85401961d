"""An internal node (JE's ``IN``): one node of a database's B+tree.

Upper INs (level 2 and above) hold slots ``(key, lsn, node_id)`` that point at
child nodes one level down; BINs (level 1, :mod:`.bin`) hold slots that point
at records. Slots are kept in parallel lists, as JE keeps ``entryKeys``,
``entryLsns`` and ``entryTargets``:

    keys[i]      the smallest key of child i's range (keys[0] is the node's own
                 low bound, ``id_key``, so a search never falls off the left)
    lsns[i]      where child i's current version lives in the log
    node_ids[i]  child i's node id (recovery and the checkpointer check it)
    targets[i]   the child itself when it is resident, else None

The log is the database: a node is never updated in place on disk. Changing
a node makes it *dirty*; logging it writes a whole new version at the end of
the log and sets the parent's slot to the new LSN, which makes the parent
dirty in turn. ``last_logged_lsn`` is the current version (NULL_LSN for a
node never logged).

Key range: a node covers ``[id_key, high_key)`` (``high_key`` None means
+infinity). Splits move the upper half of a node to a new right sibling, so
a node's low bound never changes and its high bound only shrinks; the range
is logged with every version (see :mod:`minidb.logstore.logdef`).

Example (max 4 entries): a root IN 3 at level 2 over BINs 1 and 2::

    IN 3  [b""|0x1/0x40|1] [b"k5"|0x1/0x90|2]     range [b"", +inf)
      BIN 1  keys k1 k2 k3                           range [b"", b"k5")
      BIN 2  keys k5 k7                              range [b"k5", +inf)

``provisional_obsolete`` holds old versions of children that were logged
provisionally (Provisional.YES): they become obsolete, for the utilization
tracker, only when this node is logged non-provisionally.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from minidb.log import LSN, NULL_LSN, Provisional
from minidb.logstore.logdef import IN_ENTRY


def node_kind(is_bin: bool) -> str:
    """``"BIN"`` or ``"IN"``: the entry type a node is logged as, and its name in traces and pictures."""
    return "BIN" if is_bin else "IN"


def node_label(node_id: int, is_bin: bool, is_root: bool = False) -> str:
    """How traces name a node: ``BIN 5``, ``IN 3 root``."""
    return f"{node_kind(is_bin)} {node_id}{' root' if is_root else ''}"


def key_order_problem(keys: list[bytes] | tuple[bytes, ...], low: bytes, high: bytes | None) -> str | None:
    """Why ``keys`` cannot be the slots of a node covering ``[low, high)`` (None: they can).

    Slot keys are strictly increasing and lie in the node's range; a search
    (a bisection) on keys that are not would find the wrong slot, and so
    return another record's data.
    """
    for i, key in enumerate(keys):
        if i and key <= keys[i - 1]:
            return f"slot {i} key {key!r} is not above slot {i - 1} key {keys[i - 1]!r}"
        if key < low or (high is not None and key >= high):
            return f"slot {i} key {key!r} lies outside the node's range [{low!r}, {high!r})"
    return None


class IN:
    """An upper internal node; see the module documentation."""

    is_bin = False
    entry_type = IN_ENTRY

    def __init__(self, db_id: int, node_id: int, level: int, id_key: bytes = b"", high_key: bytes | None = None):
        self.db_id = db_id
        self.node_id = node_id
        self.level = level
        self.id_key = id_key
        self.high_key = high_key
        self.keys: list[bytes] = []
        self.lsns: list[LSN] = []
        self.node_ids: list[int] = []
        self.targets: list[IN | None] = []
        self.dirty = False
        self.last_logged_lsn: LSN = NULL_LSN
        self.last_logged_provisional = Provisional.NO
        self.provisional_obsolete: list[LSN] = []
        self.parent: IN | None = None
        self.resident = True
        self.version = 0  # bumped by every change of the slots (cursors revalidate with it)

    # -- slots ------------------------------------------------------------------
    @property
    def n_entries(self) -> int:
        return len(self.keys)

    def find_child_index(self, key: bytes) -> int:
        """The slot whose range holds ``key`` (slot 0 when key is below every slot key)."""
        return max(bisect_right(self.keys, key) - 1, 0)

    def slot_high(self, index: int) -> bytes | None:
        """The exclusive high bound of slot ``index``'s range (None: +infinity)."""
        return self.keys[index + 1] if index + 1 < len(self.keys) else self.high_key

    def index_of_child(self, node_id: int) -> int | None:
        try:
            return self.node_ids.index(node_id)
        except ValueError:
            return None

    def insert_child(self, index: int, key: bytes, lsn: LSN, node_id: int, target: IN | None) -> None:
        self.keys.insert(index, key)
        self.lsns.insert(index, lsn)
        self.node_ids.insert(index, node_id)
        self.targets.insert(index, target)
        if target is not None:
            target.parent = self
        self.version += 1

    def insert_children(self, index: int, children: list[IN]) -> None:
        """:meth:`insert_child` of each of ``children`` (new, never logged: no LSN yet) at ``index`` on, in order,
        each list changed in one slice (a node cut into many pieces at once)."""
        at = slice(index, index)
        self.keys[at] = [child.id_key for child in children]
        self.lsns[at] = [NULL_LSN] * len(children)
        self.node_ids[at] = [child.node_id for child in children]
        self.targets[at] = children
        for child in children:
            child.parent = self
        self.version += len(children)

    def has_resident_children(self) -> bool:
        return any(t is not None for t in self.targets)

    def resident_children(self) -> list[IN]:
        return [t for t in self.targets if t is not None]

    def move_upper_half(self, sibling: IN, mid: int) -> None:
        """Move slots ``mid:`` to ``sibling`` (a split)."""
        sibling.keys = self.keys[mid:]
        sibling.lsns = self.lsns[mid:]
        sibling.node_ids = self.node_ids[mid:]
        sibling.targets = self.targets[mid:]
        del self.keys[mid:], self.lsns[mid:], self.node_ids[mid:], self.targets[mid:]
        for child in sibling.targets:
            if child is not None:
                child.parent = sibling
        self.version += 1
        sibling.version += 1

    # -- logging ------------------------------------------------------------------
    def log_entries(self) -> list[tuple[bytes, LSN, int]]:
        """The slots as the entry's ``entries`` list: ``(key, lsn, node_id)`` rows, in field order (a list
        field encodes a tuple record as the dict of its fields, without the dict made per slot)."""
        return list(zip(self.keys, self.lsns, self.node_ids, strict=True))

    def load_entries(self, entries: list[dict[str, Any]]) -> None:
        self.keys = [e["key"] for e in entries]
        self.lsns = [e["lsn"] for e in entries]
        self.node_ids = [e["node_id"] for e in entries]
        self.targets = [None] * len(entries)

    def describe(self) -> str:
        return f"{node_label(self.node_id, self.is_bin)} (db {self.db_id}, level {self.level})"

    def __repr__(self) -> str:
        return f"<{self.describe()} keys={self.keys!r} dirty={self.dirty} lsn={self.last_logged_lsn}>"


__all__ = ["IN", "key_order_problem"]
