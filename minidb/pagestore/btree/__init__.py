"""B+trees (Shore's ``btree_m``): keyed pages, key descriptors, logical undo, nested top actions.

Modules, bottom up::

    keydesc.py   key descriptors: typed keys encoded as bytes that sort like the keys
    keyed.py     keyed pages (keyed_p): slot 0 the header, entries sorted; redo of the B+tree's entries
    btree.py     the tree: latch-coupled search, insert with splits (nested top actions), lazy remove,
                 range scans, the logical undo of btree_insert and btree_remove, key-value locks
    verify.py    the structure invariants, checked from the root
    bulkload.py  bulk loading: a tree built bottom-up from sorted pairs, as a LOAD store
    index.py     indexes: a B+tree per INDEX store, found through the store directory

This part sits above ``files`` (it uses the store directory and page
formatting) and below ``restart``, which reaches the logical undo only
through the entry-type table's undo handlers, registered when
:mod:`minidb.pagestore.btree.btree` is imported (the page store's
``__init__`` does).
"""

from minidb.pagestore.btree.btree import DuplicateKeyError, KeyNotFoundError, Tree, nested_top_action
from minidb.pagestore.btree.bulkload import LoadReport, UnsortedInputError
from minidb.pagestore.btree.index import Index, IndexManager
from minidb.pagestore.btree.keydesc import BadKeyError, KeyDescriptor
from minidb.pagestore.btree.keyed import KeyedPage, max_entry
from minidb.pagestore.btree.verify import check_tree

__all__ = ["DuplicateKeyError", "KeyNotFoundError", "Tree", "nested_top_action", "Index", "IndexManager",
           "BadKeyError", "KeyDescriptor", "KeyedPage", "max_entry", "check_tree", "LoadReport", "UnsortedInputError"]
