"""The tree's search as one loop over the resident nodes, and fetched BINs opened without a walk
(twin of :class:`minidb.logstore.tree.tree.Tree`).

Every get and put starts with ``Tree.search``. The reference walks down in
steps: :meth:`~minidb.logstore.tree.tree.Tree.root_node`, then per level
``IN.find_child_index`` and :meth:`~minidb.logstore.tree.tree.Tree.fetch_child`,
each a method call that also touches the INList. Here the walk over nodes
that are resident is written out in one loop: per level one bisection and one
touch. A node that is not resident still goes through ``root_node`` or
``fetch_child``, which read it from the log and check it, so nothing a fetch
checks is skipped.

Why it is the same walk: ``find_child_index`` is ``max(bisect_right(keys, key)
- 1, 0)``, written inline; a resident child is touched exactly where
``fetch_child`` would touch it, and the root where ``root_node`` would, so the
INList (and with it every later eviction) changes in the same order.

A fetched BIN stays folded (:mod:`minidb.logstore.tree.slots`); opening its
slots, the reference reads every slot's key length to learn where each slot
starts, one Python step per slot. :class:`UniformSlots` skips that walk when
every key has the length of the first (the usual case: fixed-size keys).
Why that is safe: then slot ``i`` starts at ``4 + i * (k + 13)``, and that is
exactly what the walk would find, which it checks in C rather than trusting:
the slots must fill the item exactly, and the 4-byte length at each of those
starts must be ``k`` (four strided slices, one per byte of the length,
compared with ``k``'s bytes repeated). By induction from slot 0, the walk
would have found the same starts. Anything else (keys of different lengths,
an item that does not fit) is opened by the reference's walk, whose error
names what is wrong. Key, LSN and flag are then read at fixed offsets, with
the same checks and the same count of fields read.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from typing import TYPE_CHECKING

from minidb.log import LSN
from minidb.log.fields import ItemFormatError
from minidb.logstore.tree.slots import SLOT_OVERHEAD, SlotBytes
from minidb.logstore.tree.tree import Tree as ReferenceTree, node_from_entry

if TYPE_CHECKING:
    from minidb.logstore.tree.bin import BIN
    from minidb.logstore.tree.in_node import IN

_U32 = struct.Struct("<I")
_LSN = struct.Struct("<Q")
_unpack_lsn = LSN.unpack


def UniformSlots(item: bytes, start: int) -> SlotBytes:
    """The slots of a BIN item: :class:`_Uniform` when every key is as long as the first, else the reference's."""
    end = len(item)
    if start + 8 <= end:
        count, length = struct.unpack_from("<II", item, start)
        stride = length + SLOT_OVERHEAD
        first = start + 4
        if count and end - first == count * stride:
            region = item[first:]
            length_bytes = _U32.pack(length)
            if all(region[j::stride] == length_bytes[j:j + 1] * count for j in range(4)):
                return _Uniform(item, first, count, length, stride)
    return SlotBytes(item, start)


class _Uniform(SlotBytes):
    """Slots whose keys are all ``length`` bytes: slot ``i`` starts at ``first + i * stride``."""

    def __init__(self, item: bytes, first: int, count: int, length: int, stride: int):  # no walk: see above
        self.item = item
        self.starts = range(first, first + count * stride, stride)
        self.count = count
        self.decoded = 0
        self.searches = 0
        self.length = length
        self.first = first + 4  # where slot 0's key starts
        self.stride = stride

    def key(self, index: int) -> bytes:
        self.decoded += 1
        pos = self.first + index * self.stride
        return self.item[pos:pos + self.length]

    def lsn(self, index: int) -> LSN:
        self.decoded += 1
        return _unpack_lsn(_LSN.unpack_from(self.item, self.first + index * self.stride + self.length)[0])

    def known_deleted(self, index: int) -> bool:
        self.decoded += 1
        pos = self.first + index * self.stride + self.length + 8
        flag = self.item[pos]
        if flag > 1:
            raise ItemFormatError(f"BOOL at item offset {pos} holds {flag}")
        return flag == 1

    def search(self, key: bytes, low: bytes, high: bytes | None) -> tuple[int, bool, bool]:
        item, first, stride, length = self.item, self.first, self.stride, self.length
        self.searches += 1
        lo, hi = 0, self.count
        below, above = low, high
        probes = 0
        while lo < hi:
            mid = (lo + hi) // 2
            pos = first + mid * stride
            probe = item[pos:pos + length]
            probes += 1
            if probe < below or (lo > 0 and probe == below) or (above is not None and probe >= above):
                self.decoded += probes
                return mid, False, False
            if probe < key:
                lo, below = mid + 1, probe
            else:
                hi, above = mid, probe
        self.decoded += probes
        return lo, lo < self.count and above == key, True


class Tree(ReferenceTree):
    def node_of(self, entry) -> IN:
        return node_from_entry(entry, UniformSlots)

    def search(self, key: bytes) -> BIN:
        touch = self.cache.touch
        node = self.db.root
        if node is None:
            node = self.root_node()
        else:
            touch(node)
        while not node.is_bin:
            index = bisect_right(node.keys, key) - 1
            if index < 0:  # below every slot key: slot 0, whose key is the node's low bound
                index = 0
            child = node.targets[index]
            if child is None:
                child = self.fetch_child(node, index)
            else:
                touch(child)
            node = child
        return node  # type: ignore[return-value]  (level 1 is a BIN)


__all__ = ["Tree"]
