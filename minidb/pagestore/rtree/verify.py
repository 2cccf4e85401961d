"""The R*-tree's structure invariants, checked from the root (what ``minidb verify`` asks of an R*-tree).

:func:`check_rtree` reads every node once, without a transaction, and
reports (as sentences; empty: sound):

- a page that is not an R-tree page of the store, or is reached twice;
- a child not exactly one level below its parent (so leaves at one depth);
- an interior entry whose box is not the union of its child's boxes;
- a node other than the root with fewer than ``m`` or more than ``M``
  entries, an interior root with fewer than 2, a fanout unlike the root's;
- a (box, element) held twice.

It also returns the leaf entries, sorted, so a caller compares them with
what it expects in the same walk.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import PageStoreCorruptionError
from minidb.pagestore.ids import PageId
from minidb.pagestore.rtree.box import Box, mbr
from minidb.pagestore.rtree.node import Node
from minidb.pagestore.rtree.rstar import min_fill
from minidb.pagestore.rtree.rtree import RTree


def check_rtree(volume: Any, root: PageId) -> tuple[list[str], list[tuple[Box, bytes]]]:
    """(problems, every leaf entry sorted) of the R*-tree rooted at ``root``."""
    tree = RTree(volume, root)
    problems: list[str] = []
    leaves: list[tuple[Box, bytes]] = []
    seen: set[int] = set()
    try:
        top = tree.read(root.page)
    except PageStoreCorruptionError as e:
        return [str(e)], []
    if not top.is_leaf and len(top.entries) < 2:
        problems.append(f"p{root.page}: an interior root with {len(top.entries)} entries")
    stack: list[tuple[Node, Box | None]] = [(top, None)]
    seen.add(top.number)
    fill = min_fill(top.fanout)
    while stack:
        node, box = stack.pop()
        where = f"{PageId(root.vol, root.store, node.number)}"
        if node.fanout != top.fanout:
            problems.append(f"{where}: fanout {node.fanout}, the root's is {top.fanout}")
        if node.number != root.page and not fill <= len(node.entries) <= node.fanout:
            problems.append(f"{where}: {len(node.entries)} entries, not between {fill} and {node.fanout}")
        if box is not None and node.entries and mbr(node.boxes()) != box:
            problems.append(f"{where}: its parent's box {box} is not the union of its entries, "
                            f"{mbr(node.boxes())}")
        if node.is_leaf:
            leaves += [(e.box, e.data) for e in node.entries]
            continue
        for e in node.entries:
            if e.child in seen:
                problems.append(f"{where}: child page {e.child} is reached twice")
                continue
            seen.add(e.child)
            try:
                stack.append((tree.read(e.child, node.level - 1), e.box))
            except PageStoreCorruptionError as error:
                problems.append(str(error))
    leaves.sort()
    problems += [f"{root.stid}: {box} with element {el.hex()} is held twice"
                 for (box, el), after in zip(leaves, leaves[1:], strict=False) if (box, el) == after]
    return problems, leaves
