"""The page store's log entry types, as one table (Shore's ``logdef.dat``).

Each row is ``(name, code, flags, fields)``; flags are letters, as in
logdef.dat (see :mod:`minidb.log.types`): **R** redoable, **U** undoable,
**L** logical undo (the undo is an operation of the volume, not a change to
the logged page), **C** compensation, **T** transactional (the item begins
with ``txn_id`` and ``txn_prev_lsn``, the previous entry of the same
transaction). Names are Shore's record types.

Every entry here changes exactly one page, an extent-map or store-map page of
store 0, named by the first three fields (``vol``, ``store``, ``page``). Its
redo is *physical*: the handler registered for its name in
:mod:`minidb.pagestore.logrec` applies it to that page, and the very same
handler made the change in the first place, so doing and redoing cannot
disagree. Undo is *logical* (flag L): the undo handler asks the volume to
perform the inverse operation, which logs entries of its own.

As in Shore, building extent lists is redo-only: an extent that an aborted
transaction added to a store stays in the store (its pages are merely
reserved), and an aborted store creation is undone by destroying the store,
which frees its extents (``store_operation`` op ``create_store`` has a
logical undo).

=====================  ====  =====  ==================================================
name                   code  flags  what it does to its page
=====================  ====  =====  ==================================================
create_ext_list        0x10  TR     give extents ``exts`` (all on this page) to store
                                    ``snum``, linked in order between ``prev`` and
                                    ``next``; relink ``prev``/``next`` if on this page
free_ext_list          0x11  TR     free extents ``exts`` (owner 0, no pages, no
                                    links); join ``prev`` and ``next`` if on this page
set_ext_next           0x12  TR     extent ``ext``'s next link := ``next``
set_ext_prev           0x13  TR     extent ``ext``'s prev link := ``prev``
alloc_pages_in_ext     0x14  TRUL   set the bits ``pmap`` in extent ``ext``'s page map
free_pages_in_ext      0x15  TRUL   clear the bits ``pmap`` in extent ``ext``'s page map
store_operation        0x16  TRUL   store node ``snum``: op create_store, set_first_ext,
                                    set_deleting, set_store_flags or delete_store,
                                    ``value`` (new) and ``old_value``
=====================  ====  =====  ==================================================

Codes 0x10-0x1f belong to the storage layer; 0x20-0x3f are left for
transactions, records and checkpoints. ``set_ext_prev`` has no Shore
counterpart (Shore's extent lists are relinked by hand); minidb logs both
links the same way.
"""

from minidb.log.fields import STR, U32, ListOf
from minidb.log.types import EntryTable

PAGE_FIELDS = [("vol", U32), ("store", U32), ("page", U32)]
EXT_LIST = ListOf(("ext", U32))

PAGESTORE_TYPES = EntryTable(
    "pagestore",
    [
        # name                 code  flags   fields (after the page id)
        ("create_ext_list",    0x10, "TR",   PAGE_FIELDS + [("snum", U32), ("prev", U32), ("next", U32),
                                                            ("exts", EXT_LIST)]),
        ("free_ext_list",      0x11, "TR",   PAGE_FIELDS + [("snum", U32), ("prev", U32), ("next", U32),
                                                            ("exts", EXT_LIST)]),
        ("set_ext_next",       0x12, "TR",   PAGE_FIELDS + [("ext", U32), ("next", U32), ("old_next", U32)]),
        ("set_ext_prev",       0x13, "TR",   PAGE_FIELDS + [("ext", U32), ("prev", U32), ("old_prev", U32)]),
        ("alloc_pages_in_ext", 0x14, "TRUL", PAGE_FIELDS + [("snum", U32), ("ext", U32), ("pmap", U32)]),
        ("free_pages_in_ext",  0x15, "TRUL", PAGE_FIELDS + [("snum", U32), ("ext", U32), ("pmap", U32)]),
        ("store_operation",    0x16, "TRUL", PAGE_FIELDS + [("snum", U32), ("op", STR), ("value", U32),
                                                            ("old_value", U32)]),
    ],
)

CREATE_EXT_LIST = PAGESTORE_TYPES.create_ext_list
FREE_EXT_LIST = PAGESTORE_TYPES.free_ext_list
SET_EXT_NEXT = PAGESTORE_TYPES.set_ext_next
SET_EXT_PREV = PAGESTORE_TYPES.set_ext_prev
ALLOC_PAGES_IN_EXT = PAGESTORE_TYPES.alloc_pages_in_ext
FREE_PAGES_IN_EXT = PAGESTORE_TYPES.free_pages_in_ext
STORE_OPERATION = PAGESTORE_TYPES.store_operation
