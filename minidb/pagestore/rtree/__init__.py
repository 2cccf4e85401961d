"""R*-trees (Shore's ``rtree_m``): 2-D boxes, forced reinsertion, the whole index locked, logical undo.

Modules, bottom up::

    box.py      boxes of integer coordinates (nbox_t) and their 16 bytes
    rstar.py    the R*-tree's decisions as pure functions: choose a subtree, pick entries to reinsert, split
    node.py     R-tree pages (rtree_p): slot 0 the header, an entry a box and a child or an element;
                the redo and undo of the structure pieces
    rtree.py    the tree: search by four conditions, insert with forced reinsertion and splits, remove
                with condensing, each a logical record and a nested top action; their logical undo
    verify.py   the structure invariants, checked from the root
    index.py    R*-tree indexes: a store of kind RTREE found through the store directory, locked whole

This part sits above ``btree`` (it shares the keyed pages' slot shifting and
the nested top action) and below ``directory``; restart reaches the logical
undo only through the entry-type table's undo handlers, registered when
:mod:`minidb.pagestore.rtree.rtree` is imported (the page store's
``__init__`` does).
"""

from minidb.pagestore.rtree.box import Box
from minidb.pagestore.rtree.index import RTreeManager
from minidb.pagestore.rtree.rtree import CONDITIONS, DuplicateEntryError, EntryNotFoundError, RTree
from minidb.pagestore.rtree.verify import check_rtree

__all__ = ["Box", "RTreeManager", "CONDITIONS", "DuplicateEntryError", "EntryNotFoundError", "RTree",
           "check_rtree"]
