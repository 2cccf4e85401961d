"""Store nodes and store-map pages: ``stnode`` entries and their redo handler.

A store is a persistent structure to which pages are allocated; files and
indexes are stores. Each store number has a *store node* on a store-map
page (store 0, after the extent-map pages); the volume is formatted with as
many store nodes as extents. A store node holds:

- ``first_ext``: the head of the store's extent list (0 while the store is
  being created, or when the number is unused);
- ``eff``: the extent fill factor (kept for Shore's sake; always 100 here);
- ``flags``: the store's logging property (:class:`StoreFlags`); 0 means the
  store number is unused;
- ``deleting``: :class:`Deleting` — whether a transaction marked the store
  for deletion at its commit, or the store's extents are being freed.

A store always holds at least one extent once created. Store 0 (the
extent and store maps) has a node of its own that is never used; store 1 is
the store directory and store 2 the root index, both created when the
volume is formatted.

Byte layout of one store node (8 bytes, ``struct`` format ``<IHBB``)::

    offset size field
       0     4  first_ext   head of the extent list (0: none)
       4     2  eff         extent fill factor, percent
       6     1  flags       StoreFlags (0: store number unused)
       7     1  deleting    Deleting

    0             4       6   7   8
    +-------------+-------+---+---+
    |  first_ext  |  eff  |flg|del|
    +-------------+-------+---+---+

The store nodes of a store-map page are one record in its slot 0: the number
of its first store (``<I``), then the array. A 512-byte page holds
(512 - 48 - 12 - 4 - 4) // 8 = 55 store nodes, an 8192-byte page 1015.

``store_operation`` entries carry an ``op`` naming what they do (Shore's
``store_operation_param``): ``create_store`` (flags := value; the store number
is legitimate from now on, still without extents), ``set_first_ext``,
``set_deleting``, ``set_store_flags`` and ``delete_store`` (the node is
cleared: the number is free again).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT_SIZE, StoreFlags
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.wal.logrec import redo_handler

STNODE = struct.Struct("<IHBB")
STNODE_SIZE = STNODE.size  # 8
DEFAULT_EFF = 100

STORE_0, STORE_DIRECTORY, ROOT_INDEX = 0, 1, 2
FIRST_USER_STORE = 3


class Deleting(IntEnum):
    NOT_DELETING = 0
    DELETING = 1  # marked by a transaction: destroy at its commit
    FREEING_EXTS = 2  # its extents are being freed


STORE_OPS = ("create_store", "set_first_ext", "set_deleting", "set_store_flags", "delete_store")


FIRST_NUMBER = struct.Struct("<I")  # the slot-0 record starts with the first store number on the page


def stnodes_per_page(page_size: int) -> int:
    return (page_size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE - FIRST_NUMBER.size) // STNODE_SIZE


@dataclass(frozen=True)
class StoreNode:
    first_ext: int = 0
    eff: int = 0
    flags: int = 0
    deleting: int = Deleting.NOT_DELETING

    @property
    def in_use(self) -> bool:
        return self.flags != 0

    @property
    def store_flags(self) -> StoreFlags:
        return StoreFlags(self.flags)

    @property
    def deleting_state(self) -> Deleting:
        return Deleting(self.deleting)

    def pack(self) -> bytes:
        return STNODE.pack(self.first_ext, self.eff, self.flags, self.deleting)


UNUSED_STNODE = StoreNode()


class StnodePage:
    """The store nodes on one store-map page (stores ``first_store`` .. + ``per_page`` - 1)."""

    def __init__(self, page: SlottedPage):
        self.page = page
        offset, length = page.slot_entry(0)
        self.first_store = FIRST_NUMBER.unpack_from(page.buf, offset)[0]
        self.per_page = (length - FIRST_NUMBER.size) // STNODE_SIZE
        self._base = offset + FIRST_NUMBER.size

    def holds(self, snum: int) -> bool:
        return self.first_store <= snum < self.first_store + self.per_page

    def _pos(self, snum: int) -> int:
        if not self.holds(snum):
            raise ValueError(f"store {snum} is not on store-map page {self.page.pid}")
        return self._base + (snum - self.first_store) * STNODE_SIZE

    def get(self, snum: int) -> StoreNode:
        return StoreNode(*STNODE.unpack_from(self.page.buf, self._pos(snum)))

    def put(self, snum: int, node: StoreNode) -> None:
        STNODE.pack_into(self.page.buf, self._pos(snum), node.first_ext, node.eff, node.flags, node.deleting)


def format_stnode_page(page: SlottedPage, first_store: int, per_page: int) -> None:
    """Give a freshly formatted store-map page its (all unused) store nodes in slot 0."""
    page.insert(FIRST_NUMBER.pack(first_store) + bytes(per_page * STNODE_SIZE))


@redo_handler("store_operation")
def _redo_store_operation(page: SlottedPage, v: dict[str, Any]) -> None:
    view = StnodePage(page)
    snum, op, value = v["snum"], v["op"], v["value"]
    node = view.get(snum)
    if op == "create_store":
        node = StoreNode(first_ext=0, eff=DEFAULT_EFF, flags=value, deleting=Deleting.NOT_DELETING)
    elif op == "set_first_ext":
        node = StoreNode(value, node.eff, node.flags, node.deleting)
    elif op == "set_deleting":
        node = StoreNode(node.first_ext, node.eff, node.flags, value)
    elif op == "set_store_flags":
        node = StoreNode(node.first_ext, node.eff, value, node.deleting)
    elif op == "delete_store":
        node = UNUSED_STNODE
    else:
        raise ValueError(f"store_operation on {page.pid}: unknown op {op!r}")
    view.put(snum, node)
