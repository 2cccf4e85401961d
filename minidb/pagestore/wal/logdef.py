"""The page store's log entry types, as one table (Shore's ``logdef.dat``).

Each row is ``(name, code, flags, fields[, fudge])``; flags are letters, as in
logdef.dat (see :mod:`minidb.log.types`): **R** redoable, **U** undoable,
**L** logical undo (the undo is an operation of the volume, not a change to
the logged page), **C** compensation, **T** transactional (the item begins
with ``txn_id`` and ``txn_prev_lsn``, the previous entry of the same
transaction). Names are Shore's record types.

Every redoable entry (flag R) changes exactly one page, named by its first
three fields (``vol``, ``store``, ``page``). Its redo is *physical*: the
handler registered for its name in :mod:`minidb.pagestore.wal.logrec` applies
it to that page, and the very same handler made the change in the first
place, so doing and redoing cannot disagree. Restart needs nothing else to
redo an entry: the flags say whether to, the fields say where.

**Fudge factors** (the last column, where there is one; Shore's log-space
reservation, :mod:`minidb.pagestore.wal.logspace`): logging an entry reserves
``ceil(size * fudge)`` bytes for its undo, so a rollback always finds room.
A record entry's CLR is the same change the other way plus ``undo_nxt`` (8
bytes): 1.5. A logical undo logs the inverse operation and a ``compensate``
entry: 3 for page maps; 6 for ``store_operation``, whose undo may destroy a
store and free its extent lists; ``create_ext_list`` (redo-only, but an
aborted store creation frees those extents again) 1.5, the link updates 1.
``xct_freeing_space`` reserves 8 times its size for the space it frees at
commit, which must not be refused half-way. Entries that are never undone
reserve nothing; ``xct_abort`` and ``xct_end`` are reserved once per
transaction, when it logs its first entry.

**The volume's entries** (0x10-0x16) change an extent-map or store-map page
of store 0. Their undo is *logical* (flag L): the undo handler asks the
volume to perform the inverse operation, which logs entries of its own.

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

``set_ext_prev`` has no Shore counterpart (Shore's extent lists are
relinked by hand); minidb logs both links the same way.

**Transactions** (0x20-0x23). A transaction's entries are chained backwards
by ``txn_prev_lsn``. Shore's ``xct_abort``, ``xct_freeing_space`` and
``xct_end`` mark its states; ``compensate`` is Shore's stand-alone
compensation entry (CLR): rollback, reaching it, jumps to its ``undo_nxt``
(it closes a logical undo, whose inverse operation logged entries of its
own: the *anchor* protocol of a compensated multi-step action).

=====================  ====  =====  ==================================================
xct_abort              0x20  T      the transaction starts rolling back
xct_freeing_space      0x21  T      it committed and now frees space: removes
                                    ``stores`` (marked for deletion), frees ``exts``
                                    (extents whose pages it freed) if empty
xct_end                0x22  T      it ended (``committed`` true or false)
compensate             0x23  TC     rollback continues at ``undo_nxt``
=====================  ====  =====  ==================================================

**Prepare** (0x24-0x27), two-phase commit
(:mod:`minidb.pagestore.transactions.prepare`): what a prepared transaction
must get back after a crash, logged in this order and chained like its other
entries; the transaction is prepared once ``xct_prepare_fi`` is durable.
Shore also has ``xct_prepare_lk`` (locks of one mode); minidb logs every lock
with its mode (``xct_prepare_alk``), in entries of at most 64 locks.

=====================  ====  =====  ==================================================
xct_prepare_st         0x24  T      its global transaction id ``gtid`` and
                                    ``coordinator``
xct_prepare_alk        0x25  T      ``locks`` it holds: lock id (``space``,
                                    ``numbers``, ``key``) and ``mode`` each
xct_prepare_stores     0x26  T      what it frees at commit: ``stores`` marked for
                                    deletion, ``exts`` whose pages it freed, the
                                    freed ``pages`` no one else may take
xct_prepare_fi         0x27  T      the end: ``nlocks`` logged, its ``first`` LSN,
                                    the log space it has reserved (``rsvd``)
=====================  ====  =====  ==================================================

**Checkpoints** (0x28-0x2b), not transactional: ``chkpt_begin``; the
buffer pool's dirty pages with their recovery LSNs (``chkpt_bf_tab``); the
transaction table (``chkpt_xct_tab``: each transaction's state, last LSN and
undo-next, and the youngest transaction id); ``chkpt_end`` repeating the
``chkpt_begin`` LSN (``master``) and the smallest recovery LSN.

**Volumes** (0x2c-0x2e), not transactional (Shore's ``chkpt_dev_tab``,
``mount_vol`` and ``dismount_vol``; :mod:`minidb.pagestore.mounts`):
``chkpt_dev_tab`` lists the volumes mounted when a checkpoint was taken,
logged between its ``chkpt_begin`` and ``chkpt_end`` only when any volume
but ``v(1)`` is mounted (a checkpoint without one means ``v(1)`` alone, as
every checkpoint of a page store with one volume, and of an older log,
says); ``mount_vol`` and ``dismount_vol`` record each mount and dismount
after the volume was formatted (a mount) or its pages written (a
dismount). Restart mounts what the checkpoint and the entries after it
list before redo.

=====================  ====  =====  ==================================================
chkpt_dev_tab          0x2c         the mounted volumes ``vols``, each ``vol``
mount_vol              0x2d         volume ``vol`` was mounted
dismount_vol           0x2e         volume ``vol`` was dismounted, its pages written
=====================  ====  =====  ==================================================

Byte layout of their items (after the 14-byte entry header; ``<`` little-endian)::

    chkpt_dev_tab   offset size field
                       0     4  count      number of volumes (U32, ListOf)
                       4   4*n  vol        each volume number (U32)
    mount_vol,      offset size field
    dismount_vol       0     4  vol        the volume number (U32)

**Pages of files of records** (0x30-0x36). Physical on one page (a file
page or a large-record page): redo and undo change that page only (no L
flag). ``rec_insert``, ``rec_remove`` and ``rec_splice`` are Shore's
``page_reclaim``, ``page_mark`` and ``page_splice``: each carries the redo and
the undo information (the record, or the bytes replaced and their
replacement). Each has a *CLR twin* (flag C): what rollback logs when it
undoes it, the inverse change plus ``undo_nxt``, the entry before the undone
one in the transaction. A CLR is redone, never undone.

=====================  ====  =====  ==================================================
page_format            0x30  TR     make the page an empty page of type ``tag``
rec_insert             0x31  TRU    put record ``data`` in slot ``slot``
rec_remove             0x32  TRU    free slot ``slot`` (whose record was ``data``)
rec_splice             0x33  TRU    in slot ``slot``, replace ``old`` at ``start`` by ``new``
clr_rec_insert         0x34  TRC    undo of rec_insert: free the slot
clr_rec_remove         0x35  TRC    undo of rec_remove: put ``data`` back in the slot
clr_rec_splice         0x36  TRC    undo of rec_splice: replace ``old`` by ``new``
=====================  ====  =====  ==================================================

**Full page images** (0x38). A page's whole content, logged before the
change that makes a clean page dirty, so that redo can repair a torn page
from the log since the page's recovery LSN alone
(:mod:`minidb.pagestore.wal.pageimage`). It belongs to no transaction
(``txn_id`` 0) and is never undone; ``image`` is the page without its
*hole*, ``hole_len`` zero bytes from ``hole_start``.

=====================  ====  =====  ==================================================
page_image             0x38  TR     the page := ``image`` with ``hole_len`` zeros
                                    put back at ``hole_start``
=====================  ====  =====  ==================================================

**Store properties** (0x3c). A page of a TMP, LOAD or INSERT store is
changed without log entries (:mod:`minidb.pagestore.pages.storeprop`); once
such a page is made regular, its first logged change is preceded by its
whole image, so the log again holds everything needed to rebuild it.

=====================  ====  =====  ==================================================
unlogged_page_image    0x3c  TR     the page's bytes := ``image`` (a page whose
                                    unlogged contents the log did not have)
=====================  ====  =====  ==================================================

**B+trees** (0x80-0x8f, the page store's second code range), on keyed pages
(:mod:`minidb.pagestore.btree`). ``btree_insert`` and ``btree_remove`` are
Shore's: redone physically (slot ``idx`` of the leaf), undone *logically*
(flag L): the undo searches the tree from ``root`` for the key where it
lives now and logs the inverse there. The other four are the pieces of a
structure modification (a split, a new root level), always logged inside a
compensated action (anchor, entries, ``compensate``), so only a crash or an
error in the middle of one ever undoes them: their undo logs the same
change the other way on the same page.

=====================  ====  =====  ==================================================
page_link              0x80  TRUL   the page's ``prev``/``next`` links := new values
btree_header           0x81  TRUL   the keyed page's ``level`` and leftmost child
                                    ``pid0`` := new values (slot 0, made if absent)
page_insert            0x82  TRUL   put ``entries`` in slots ``idx``.. (later slots
                                    shift up)
page_remove            0x83  TRUL   take out the slots ``idx``.. holding ``entries``
btree_insert           0x84  TRUL   put (``key``, ``el``) in leaf slot ``idx``
btree_remove           0x85  TRUL   take (``key``, ``el``) out of leaf slot ``idx``
=====================  ====  =====  ==================================================

Fudge factors: Shore's 1.42 and 2.91 for ``btree_insert`` and
``btree_remove`` (the inverse entry plus a ``compensate``; re-inserting a
removed key may need a split, which these factors do not cover: Shore's own
corner case, :mod:`minidb.pagestore.btree.btree`); 2.0 for the structure
pieces (the inverse entry plus a ``compensate``).

**R*-trees** (0x86-0x8a, in the same range), on R-tree pages
(:mod:`minidb.pagestore.rtree`). The first three are the pieces of a
structure change (an entry placed, a split, a forced reinsertion, a node
dissolved), always logged inside a compensated action and undone, like the
B+tree's pieces, by the same change the other way on the same page. An
entry's bytes are its box (``<iiii``) and then a child page number or an
element (:mod:`minidb.pagestore.rtree.node`). ``rtree_insert`` and
``rtree_remove`` are logical records that change *no page* (no R flag): each
is logged just before the compensated action that does the work, and names
the index (``store``, its ``root``) and the entry, so the undo (L) makes the
entry absent or present again, searching from the root; the index holds
each (box, element) once, so "absent" and "present" say everything.

=====================  ====  =====  ==================================================
rtree_header           0x86  TRUL   the R-tree page's ``level`` and ``fanout``
                                    := new values (slot 0, made if absent)
rtree_page_insert      0x87  TRUL   put ``entries`` in slots ``idx``.. (later slots
                                    shift up)
rtree_page_remove      0x88  TRUL   take out the slots ``idx``.. holding ``entries``
rtree_insert           0x89  TUL    (box, ``el``) went into the index rooted at
                                    ``root``: undone by removing it if present
rtree_remove           0x8a  TUL    (box, ``el``) left it: undone by inserting it
                                    if absent
=====================  ====  =====  ==================================================

Fudge factors: 2.0 for the pieces; 4.0 for ``rtree_insert`` and
``rtree_remove``, whose undo logs the inverse record, the common case of
its compensated action (the entry's piece and a box on each level) and two
``compensate`` entries; a split or a condensing during a rollback is, as for
the B+tree, not covered.
"""

from minidb.log.fields import BOOL, BYTES, I64, LSN_FIELD, STR, U8, U16, U32, U64, ListOf
from minidb.log.types import EntryTable


class _ImageBytes(type(BYTES)):  # type: ignore[misc]
    """BYTES that print as their size (a page image in hex would fill the screen)."""

    def format(self, value: bytes) -> str:
        return f"{len(value)} bytes"


IMAGE_BYTES = _ImageBytes("BYTES", "I", text=False)

PAGE_FIELDS = [("vol", U32), ("store", U32), ("page", U32)]
EXT_LIST = ListOf(("ext", U32))
SPLICE = [("slot", U16), ("start", U16), ("old", BYTES), ("new", BYTES)]
ENTRIES = ListOf(("data", BYTES))
BTREE_ENTRY = [("root", U32), ("unique", BOOL), ("idx", U16), ("key", BYTES), ("el", BYTES)]
RTREE_OPERATION = [("vol", U32), ("store", U32), ("root", U32), ("xlo", I64), ("ylo", I64), ("xhi", I64),
                   ("yhi", I64), ("el", BYTES)]

PAGESTORE_TYPES = EntryTable(
    "pagestore",
    [
        # name                 code  flags   fields (after the page id)
        ("create_ext_list",    0x10, "TR",   PAGE_FIELDS + [("snum", U32), ("prev", U32), ("next", U32),
                                                            ("exts", EXT_LIST)], 1.5),
        ("free_ext_list",      0x11, "TR",   PAGE_FIELDS + [("snum", U32), ("prev", U32), ("next", U32),
                                                            ("exts", EXT_LIST)]),
        ("set_ext_next",       0x12, "TR",   PAGE_FIELDS + [("ext", U32), ("next", U32), ("old_next", U32)], 1.0),
        ("set_ext_prev",       0x13, "TR",   PAGE_FIELDS + [("ext", U32), ("prev", U32), ("old_prev", U32)], 1.0),
        ("alloc_pages_in_ext", 0x14, "TRUL", PAGE_FIELDS + [("snum", U32), ("ext", U32), ("pmap", U32)], 3.0),
        ("free_pages_in_ext",  0x15, "TRUL", PAGE_FIELDS + [("snum", U32), ("ext", U32), ("pmap", U32)], 3.0),
        ("store_operation",    0x16, "TRUL", PAGE_FIELDS + [("snum", U32), ("op", STR), ("value", U32),
                                                            ("old_value", U32)], 6.0),
        # transactions
        ("xct_abort",          0x20, "T",    []),
        ("xct_freeing_space",  0x21, "T",    [("vol", U32), ("stores", ListOf(("snum", U32))),
                                              ("exts", ListOf(("snum", U32), ("ext", U32)))], 8.0),
        ("xct_end",            0x22, "T",    [("committed", BOOL)]),
        ("compensate",         0x23, "TC",   [("undo_nxt", LSN_FIELD)]),
        # prepare (two-phase commit)
        ("xct_prepare_st",     0x24, "T",    [("gtid", BYTES), ("coordinator", BYTES)]),
        ("xct_prepare_alk",    0x25, "T",    [("locks", ListOf(("space", STR), ("numbers", ListOf(("n", U32))),
                                                               ("key", BYTES), ("mode", STR)))]),
        ("xct_prepare_stores", 0x26, "T",    [("vol", U32), ("stores", ListOf(("snum", U32))),
                                              ("exts", ListOf(("snum", U32), ("ext", U32))),
                                              ("pages", ListOf(("page", U32)))]),
        ("xct_prepare_fi",     0x27, "T",    [("nlocks", U32), ("first", LSN_FIELD), ("rsvd", U64)]),
        # checkpoints
        ("chkpt_begin",        0x28, "",     []),
        ("chkpt_bf_tab",       0x29, "",     [("pages", ListOf(("vol", U32), ("store", U32), ("page", U32),
                                                               ("rec_lsn", LSN_FIELD)))]),
        ("chkpt_xct_tab",      0x2a, "",     [("youngest", U64),
                                              ("xcts", ListOf(("tid", U64), ("state", U8), ("last_lsn", LSN_FIELD),
                                                              ("undo_nxt", LSN_FIELD)))]),
        ("chkpt_end",          0x2b, "",     [("master", LSN_FIELD), ("min_rec_lsn", LSN_FIELD)]),
        # volumes (the device table)
        ("chkpt_dev_tab",      0x2c, "",     [("vols", ListOf(("vol", U32)))]),
        ("mount_vol",          0x2d, "",     [("vol", U32)]),
        ("dismount_vol",       0x2e, "",     [("vol", U32)]),
        # pages of files of records
        ("page_format",        0x30, "TR",   PAGE_FIELDS + [("tag", U8), ("store_flags", U8)]),
        ("rec_insert",         0x31, "TRU",  PAGE_FIELDS + [("slot", U16), ("data", BYTES)], 1.5),
        ("rec_remove",         0x32, "TRU",  PAGE_FIELDS + [("slot", U16), ("data", BYTES)], 1.5),
        ("rec_splice",         0x33, "TRU",  PAGE_FIELDS + SPLICE, 1.5),
        ("clr_rec_insert",     0x34, "TRC",  PAGE_FIELDS + [("slot", U16), ("data", BYTES), ("undo_nxt", LSN_FIELD)]),
        ("clr_rec_remove",     0x35, "TRC",  PAGE_FIELDS + [("slot", U16), ("data", BYTES), ("undo_nxt", LSN_FIELD)]),
        ("clr_rec_splice",     0x36, "TRC",  PAGE_FIELDS + SPLICE + [("undo_nxt", LSN_FIELD)]),
        # full page images
        ("page_image",         0x38, "TR",   PAGE_FIELDS + [("hole_start", U16), ("hole_len", U16),
                                                            ("image", IMAGE_BYTES)]),
        # store properties
        ("unlogged_page_image", 0x3c, "TR",  PAGE_FIELDS + [("image", BYTES)]),
        # B+trees (keyed pages)
        ("page_link",          0x80, "TRUL", PAGE_FIELDS + [("prev", U32), ("next", U32), ("old_prev", U32),
                                                            ("old_next", U32)], 2.0),
        ("btree_header",       0x81, "TRUL", PAGE_FIELDS + [("level", U16), ("pid0", U32), ("old_level", U16),
                                                            ("old_pid0", U32)], 2.0),
        ("page_insert",        0x82, "TRUL", PAGE_FIELDS + [("idx", U16), ("entries", ENTRIES)], 2.0),
        ("page_remove",        0x83, "TRUL", PAGE_FIELDS + [("idx", U16), ("entries", ENTRIES)], 2.0),
        ("btree_insert",       0x84, "TRUL", PAGE_FIELDS + BTREE_ENTRY, 1.42),
        ("btree_remove",       0x85, "TRUL", PAGE_FIELDS + BTREE_ENTRY, 2.91),
        # R*-trees (R-tree pages)
        ("rtree_header",       0x86, "TRUL", PAGE_FIELDS + [("level", U16), ("fanout", U16), ("old_level", U16),
                                                            ("old_fanout", U16)], 2.0),
        ("rtree_page_insert",  0x87, "TRUL", PAGE_FIELDS + [("idx", U16), ("entries", ENTRIES)], 2.0),
        ("rtree_page_remove",  0x88, "TRUL", PAGE_FIELDS + [("idx", U16), ("entries", ENTRIES)], 2.0),
        ("rtree_insert",       0x89, "TUL",  RTREE_OPERATION, 4.0),
        ("rtree_remove",       0x8a, "TUL",  RTREE_OPERATION, 4.0),
    ],
)

CREATE_EXT_LIST = PAGESTORE_TYPES.create_ext_list
FREE_EXT_LIST = PAGESTORE_TYPES.free_ext_list
SET_EXT_NEXT = PAGESTORE_TYPES.set_ext_next
SET_EXT_PREV = PAGESTORE_TYPES.set_ext_prev
ALLOC_PAGES_IN_EXT = PAGESTORE_TYPES.alloc_pages_in_ext
FREE_PAGES_IN_EXT = PAGESTORE_TYPES.free_pages_in_ext
STORE_OPERATION = PAGESTORE_TYPES.store_operation

XCT_ABORT = PAGESTORE_TYPES.xct_abort
XCT_FREEING_SPACE = PAGESTORE_TYPES.xct_freeing_space
XCT_END = PAGESTORE_TYPES.xct_end
COMPENSATE = PAGESTORE_TYPES.compensate
XCT_PREPARE_ST = PAGESTORE_TYPES.xct_prepare_st
XCT_PREPARE_ALK = PAGESTORE_TYPES.xct_prepare_alk
XCT_PREPARE_STORES = PAGESTORE_TYPES.xct_prepare_stores
XCT_PREPARE_FI = PAGESTORE_TYPES.xct_prepare_fi
CHKPT_BEGIN = PAGESTORE_TYPES.chkpt_begin
CHKPT_BF_TAB = PAGESTORE_TYPES.chkpt_bf_tab
CHKPT_XCT_TAB = PAGESTORE_TYPES.chkpt_xct_tab
CHKPT_END = PAGESTORE_TYPES.chkpt_end
CHKPT_DEV_TAB = PAGESTORE_TYPES.chkpt_dev_tab
MOUNT_VOL = PAGESTORE_TYPES.mount_vol
DISMOUNT_VOL = PAGESTORE_TYPES.dismount_vol
PAGE_FORMAT = PAGESTORE_TYPES.page_format
REC_INSERT = PAGESTORE_TYPES.rec_insert
REC_REMOVE = PAGESTORE_TYPES.rec_remove
REC_SPLICE = PAGESTORE_TYPES.rec_splice
CLR_REC_INSERT = PAGESTORE_TYPES.clr_rec_insert
CLR_REC_REMOVE = PAGESTORE_TYPES.clr_rec_remove
CLR_REC_SPLICE = PAGESTORE_TYPES.clr_rec_splice
PAGE_IMAGE = PAGESTORE_TYPES.page_image
UNLOGGED_PAGE_IMAGE = PAGESTORE_TYPES.unlogged_page_image
PAGE_LINK = PAGESTORE_TYPES.page_link
BTREE_HEADER = PAGESTORE_TYPES.btree_header
PAGE_INSERT = PAGESTORE_TYPES.page_insert
PAGE_REMOVE = PAGESTORE_TYPES.page_remove
BTREE_INSERT = PAGESTORE_TYPES.btree_insert
BTREE_REMOVE = PAGESTORE_TYPES.btree_remove
RTREE_HEADER = PAGESTORE_TYPES.rtree_header
RTREE_PAGE_INSERT = PAGESTORE_TYPES.rtree_page_insert
RTREE_PAGE_REMOVE = PAGESTORE_TYPES.rtree_page_remove
RTREE_INSERT = PAGESTORE_TYPES.rtree_insert
RTREE_REMOVE = PAGESTORE_TYPES.rtree_remove


def is_page_entry(entry_type) -> bool:
    """Whether entries of this type change one page, named by their ``vol``, ``store``, ``page`` fields."""
    return entry_type.redoable
