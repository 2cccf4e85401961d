"""R-tree pages (Shore's ``rtree_p``): one node of an R*-tree, its entries in slots.

An R-tree page is a slotted page with tag ``RTREE``. As on a keyed page
(:mod:`minidb.pagestore.btree.keyed`), slots are *positions*: entry ``i`` is
in slot ``i + 1``, and inserting or removing entries shifts the slot entries
after them. The order of a node's entries means nothing to the tree; it
only makes every change a slot range that its undo can find again.

**Slot 0 is the node's header** (4 bytes, ``<HH``)::

    offset size field
       0     2  level    1 for a leaf, 2 for its parent, ...; the root has the largest
       2     2  fanout   M, the most entries a node of this tree holds (the same on every page)

**Entries** (slots 1..n)::

    offset size field
       0    16  box      xlo, ylo, xhi, yhi, each <i (minidb.pagestore.rtree.box)
      16     4  child    interior node: the child's page number (<I)
      16     *  el       leaf: the element (the rest of the slot, 0 bytes or more)

An interior entry's box is the union of its child's entries' boxes; a leaf
entry's box is the indexed object's. A node never holds more than
``fanout`` entries: an overflow is decided on the ``M + 1`` entries in
memory (:mod:`minidb.pagestore.rtree.rstar`) before any page changes.
:func:`max_element` is the largest element that lets ``fanout`` entries fit
a page.

The redo handlers of ``rtree_header``, ``rtree_page_insert`` and
``rtree_page_remove`` are here, as are their undo handlers: the same change
the other way on the same page (they are the pieces of compensated actions,
undone only when a crash or an error cuts one short).

Worked example (512-byte page): a leaf with the entry ``[0,0 4,2]`` and
element ``b"a"`` holds ``01 00 | 06 00`` in slot 0 (level 1, fanout 6) and
``00000000 00000000 04000000 02000000 61`` in slot 1, 17 bytes.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.btree.keyed import (
    log_insert_slots,
    log_remove_slots,
    redo_insert_slots,
    redo_remove_slots,
    undo_insert_slots,
    undo_on_page,
    undo_remove_slots,
    write_header_slot,
)
from minidb.pagestore.errors import PageStoreCorruptionError
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE, PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.rtree.box import BOX, Box
from minidb.pagestore.wal.logdef import RTREE_HEADER, RTREE_PAGE_INSERT, RTREE_PAGE_REMOVE
from minidb.pagestore.wal.logrec import APPLY_AND_LOG, LogContext, redo_handler, undo_handler

RTREE_NODE_HEADER = struct.Struct("<HH")  # level, fanout
CHILD = struct.Struct("<I")
LEAF_LEVEL = 1
MIN_FANOUT = 4


def room(page_size: int) -> int:
    """The bytes a node's entries may take, their slots included."""
    return page_size - HEADER_SIZE - FOOTER_SIZE - RTREE_NODE_HEADER.size - SLOT_SIZE


def max_element(page_size: int, fanout: int) -> int:
    """The largest element when ``fanout`` leaf entries must fit one page (negative: no fanout that big)."""
    return room(page_size) // fanout - SLOT_SIZE - BOX.size


def max_fanout(page_size: int) -> int:
    """The most interior entries a page holds."""
    return room(page_size) // (BOX.size + CHILD.size + SLOT_SIZE)


@dataclass
class Entry:
    """One entry: a box and a child page number (interior) or an element (leaf)."""

    box: Box
    data: bytes

    def pack(self) -> bytes:
        return self.box.pack() + self.data

    @classmethod
    def unpack(cls, raw: bytes) -> "Entry":
        if len(raw) < BOX.size:
            raise ValueError(f"an entry of {len(raw)} bytes, shorter than a box")
        return cls(Box(*BOX.unpack_from(raw)), bytes(raw[BOX.size:]))

    @classmethod
    def node(cls, box: Box, child: int) -> "Entry":
        return cls(box, CHILD.pack(child))

    @property
    def child(self) -> int:
        return CHILD.unpack(self.data)[0]


@dataclass
class Node:
    """A node as read from its page: its page number, level, fanout and entries (a copy: the page is
    unfixed). The tree keeps it in step with each change it logs on the page."""

    number: int
    level: int
    fanout: int
    entries: list[Entry] = field(default_factory=list)

    @property
    def is_leaf(self) -> bool:
        return self.level == LEAF_LEVEL

    def boxes(self) -> list[Box]:
        return [e.box for e in self.entries]

    def index_of_child(self, child: int) -> int:
        for i, e in enumerate(self.entries):
            if e.child == child:
                return i
        raise PageStoreCorruptionError(f"page {self.number}: no entry points at child page {child}")


def read_node(page: SlottedPage) -> Node:
    """The node a fixed ``RTREE`` page holds (damage is a :class:`PageStoreCorruptionError`)."""
    try:
        if page.tag != PageTag.RTREE or page.nslots == 0:
            raise ValueError(f"a {page.tag.name} page with {page.nslots} slots")
        level, fanout = RTREE_NODE_HEADER.unpack(page.read(0))
        entries = [Entry.unpack(page.read(s)) for s in range(1, page.nslots)]
        if level < LEAF_LEVEL or fanout < MIN_FANOUT or len(entries) > fanout or \
                (level > LEAF_LEVEL and any(len(e.data) != CHILD.size for e in entries)):
            raise ValueError(f"level {level}, fanout {fanout}, {len(entries)} entries")
    except (ValueError, struct.error) as e:
        raise PageStoreCorruptionError(f"{page.pid}: not an R-tree node: {e}") from None
    return Node(page.pid.page, level, fanout, entries)


# -- redo handlers (the slot changes are the keyed page's) ---------------------------------------------
@redo_handler("rtree_header")
def _redo_rtree_header(page: SlottedPage, v: dict[str, Any]) -> None:
    write_header_slot(page, RTREE_NODE_HEADER.pack(v["level"], v["fanout"]), PageTag.RTREE, "rtree_header")


redo_handler("rtree_page_insert")(redo_insert_slots)
redo_handler("rtree_page_remove")(redo_remove_slots)


# -- logging the pieces -------------------------------------------------------------------------------
def log_header(volume: Any, xct: LogContext, page: SlottedPage, level: int, fanout: int) -> None:
    old = RTREE_NODE_HEADER.unpack(page.read(0)) if page.nslots else (0, 0)
    APPLY_AND_LOG.call(volume.log, page, RTREE_HEADER,
                       {"level": level, "fanout": fanout, "old_level": old[0], "old_fanout": old[1]}, xct)


def log_insert(volume: Any, xct: LogContext, page: SlottedPage, idx: int, datas: list[bytes]) -> None:
    log_insert_slots(volume, xct, page, idx, datas, RTREE_PAGE_INSERT)


def log_remove(volume: Any, xct: LogContext, page: SlottedPage, idx: int, count: int) -> None:
    log_remove_slots(volume, xct, page, idx, count, RTREE_PAGE_REMOVE)


# -- undo handlers of the pieces: the same change the other way, on the same page ----------------------
@undo_handler("rtree_header")
def _undo_rtree_header(volume: Any, v: dict[str, Any], xct: LogContext | None) -> None:
    undo_on_page(volume, v, lambda page: log_header(volume, xct, page, v["old_level"], v["old_fanout"]))


undo_handler("rtree_page_insert")(undo_insert_slots("rtree_page_insert", RTREE_PAGE_REMOVE))
undo_handler("rtree_page_remove")(undo_remove_slots(RTREE_PAGE_INSERT))
