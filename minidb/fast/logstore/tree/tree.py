"""The tree's search as one loop over the resident nodes (twin of :class:`minidb.logstore.tree.tree.Tree`).

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
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from minidb.logstore.tree.tree import Tree as ReferenceTree

if TYPE_CHECKING:
    from minidb.logstore.tree.bin import BIN


class Tree(ReferenceTree):
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
