"""The page store (Shore lineage): volumes, buffer pool, transactions, files of records, ARIES restart.

One subpackage per part, bottom up (each package's docstring lists its modules)::

    ids.py          v(1) s(1.3) p(1.3.48) r(1.3.48.2) x(1.6); extent arithmetic
    errors.py       the page store's errors
    pages/          the page frame (checksum, torn-page detection), slotted pages, record tags
    wal/            the log entry types (Shore's logdef.dat), the logging protocol, log space (reservations)
    volume/         the volume header, extent map, store map, formatting, allocation
    buffer/         latches, clock replacement, the buffer pool and its cleaner
    lock/           Shore's lock manager: modes, hierarchies, queues, Dreadlocks
    transactions/   transactions, the lock step, rollback with CLRs, freeing space, two-phase commit
    files/          store descriptors, files of records and large records, free-space search
    btree/          B+trees: keyed pages, key descriptors, splits as nested top actions, logical undo
    rtree/          R*-trees: boxes, forced reinsertion, the whole index locked, logical undo
    directory/      the store directory (store 1) and the root index (store 2), both B+trees
    restart/        fuzzy checkpoints, the checkpoint thread and page cleaner, the master LSN, ARIES restart
    sm.py           the storage manager: all of it on one disk
    mounts.py       the mounted volumes (Shore's device table): add, mount, dismount, remount at restart
    verify.py       checking a whole page store (what ``minidb verify`` runs on a volume's directory)

Its crash tests (a volume's redo, transactions and restart, B+trees) are in
:mod:`minidb.crashtest`, above it.

Public surface::

    VolumeId, StoreId, PageId, RecordId, ExtentId, parse_id
    PageTag, StoreFlags, Page, SlottedPage, SpaceUser, NO_TXN, place_record
    StoreProperty (REGULAR, TMP, LOAD, INSERT: StorageManager.create_file(t, property=...),
                   set_store_property)
    LatchMode, SH, EX, BufferPool, BUFFER_POOL (its hot spot: the class chosen, constructed), Frame, FrameView, WriteRun
    ClockFrame, ClockChoice, choose_victim, log_sync_point
    Volume, AllocMode, format_volume, VolumeHeader, volume_file_name, pages_to_try, find_free_extents
    Extlink, StoreNode, Deleting
    PAGESTORE_TYPES, TxnRef, apply_and_log, redo, undo, compensation
    StorageManager, Xct, XctState, SavePoint, XctManager, FileManager, Policy,
    Record, RecFlags, Layout, Checkpointer, Background, BackgroundThreads, Restart, RestartReport, StaleRecordIdError,
    NoLocking, ShoreLocking, AllocationLocks, Quark  (the lock manager: minidb.pagestore.lock)
    InDoubt, GtidError               (two-phase commit: sm.prepare, commit_prepared, abort_prepared, in_doubt)
    LogSpace, OutOfLogSpaceError     (a bounded log: StorageManager(log_size=..., partitions=...))
    IndexManager, Index, KeyDescriptor, DuplicateKeyError, KeyNotFoundError, BadKeyError, check_tree
                                     (B+trees: sm.create_index, index_insert/remove/update/lookup/scan)
    LoadReport, UnsortedInputError   (bulk load: sm.bulk_load_index)
    Box, RTreeManager, RTree, DuplicateEntryError, EntryNotFoundError, check_rtree
                                     (R*-trees: sm.create_rtree, rtree_insert/remove/search)
    StoreDirectory, RootIndex, check_directory, SInfo, StoreKind, LockProtocol
    MountTable, Mount                (several volumes: sm.add_volume, volumes, mount_volume, dismount_volume)
                                     (stores 1 and 2: sm.directory, sm.root_index; create_index(name=...),
                                      sm.find_index, sm.index_names)
    the errors: PageStoreError, VolumeError, VolumeFullError, BadRequestError, SlotError,
    RecordWontFitError, BufferPoolFullError, OutOfLogSpaceError; damage (CorruptionError): PageStoreCorruptionError,
    BadPageError (TornPageError, PageChecksumError), VolumeCorruptionError, LogLostError
"""

from minidb.pagestore.btree import (  # also registers the B+tree entries' redo and undo handlers
    BadKeyError,
    DuplicateKeyError,
    Index,
    IndexManager,
    KeyDescriptor,
    KeyNotFoundError,
    LoadReport,
    UnsortedInputError,
    check_tree,
)
from minidb.pagestore.buffer.bufferpool import BUFFER_POOL, BufferPool
from minidb.pagestore.buffer.clock import ClockChoice, ClockFrame, choose_victim
from minidb.pagestore.buffer.frame import Frame, FrameView, WriteRun
from minidb.pagestore.buffer.latch import EX, SH, LatchMode
from minidb.pagestore.buffer.walrule import log_sync_point
from minidb.pagestore.directory import RootIndex, StoreDirectory, check_directory
from minidb.pagestore.errors import (
    BadPageError,
    BadRequestError,
    BufferPoolFullError,
    LogLostError,
    OutOfLogSpaceError,
    PageChecksumError,
    PageStoreCorruptionError,
    PageStoreError,
    RecordWontFitError,
    SlotError,
    StaleRecordIdError,
    TornPageError,
    VolumeCorruptionError,
    VolumeError,
    VolumeFullError,
)
from minidb.pagestore.files.file import FileManager, Policy
from minidb.pagestore.files.lgrec import Layout
from minidb.pagestore.files.sinfo import LockProtocol, SInfo, StoreKind
from minidb.pagestore.ids import ExtentId, PageId, RecordId, StoreId, VolumeId, parse_id
from minidb.pagestore.mounts import Mount, MountTable
from minidb.pagestore.pages.page import Page, PageTag, StoreFlags
from minidb.pagestore.pages.rectag import RecFlags, Record
from minidb.pagestore.pages.slotted import NO_TXN, SlottedPage, SpaceUser, place_record
from minidb.pagestore.pages.storeprop import StoreProperty
from minidb.pagestore.restart import Restart, RestartReport
from minidb.pagestore.restart.background import Background, BackgroundThreads
from minidb.pagestore.restart.chkpt import Checkpointer
from minidb.pagestore.rtree import (  # also registers the R*-tree entries' redo and undo handlers
    Box,
    DuplicateEntryError,
    EntryNotFoundError,
    RTree,
    RTreeManager,
    check_rtree,
)
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.transactions.locking import AllocationLocks, NoLocking, ShoreLocking
from minidb.pagestore.transactions.prepare import GtidError, InDoubt
from minidb.pagestore.transactions.quark import Quark
from minidb.pagestore.transactions.xct import SavePoint, Xct, XctState
from minidb.pagestore.transactions.xctmgr import XctManager
from minidb.pagestore.volume import (
    extmap as _extmap,  # noqa: F401  (registers the extent-map redo handlers)
    stores as _stores,  # noqa: F401  (registers the store_operation redo handler)
)
from minidb.pagestore.volume.extmap import Extlink
from minidb.pagestore.volume.format import format_volume
from minidb.pagestore.volume.stores import Deleting, StoreNode
from minidb.pagestore.volume.volextents import find_free_extents
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.volume.volheader import VolumeHeader
from minidb.pagestore.volume.volpages import pages_to_try
from minidb.pagestore.volume.volume import AllocMode, Volume
from minidb.pagestore.wal.clr import compensation
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import TxnRef, apply_and_log, redo, undo
from minidb.pagestore.wal.logspace import LogSpace

__all__ = [
    "VolumeId", "StoreId", "PageId", "RecordId", "ExtentId", "parse_id", "PageTag", "StoreFlags", "Page",
    "SlottedPage", "SpaceUser", "NO_TXN", "LatchMode", "SH", "EX", "BufferPool", "BUFFER_POOL", "Frame", "FrameView",
    "WriteRun", "ClockFrame", "ClockChoice", "choose_victim", "Volume", "AllocMode", "format_volume",
    "VolumeHeader", "volume_file_name", "Extlink", "StoreNode", "Deleting", "PAGESTORE_TYPES", "TxnRef",
    "apply_and_log", "redo", "undo", "PageStoreError", "VolumeError", "VolumeFullError", "BadRequestError",
    "TornPageError", "PageStoreCorruptionError", "BadPageError", "PageChecksumError", "VolumeCorruptionError",
    "LogLostError", "BufferPoolFullError", "RecordWontFitError", "SlotError", "StorageManager", "Xct", "XctState",
    "SavePoint", "XctManager", "FileManager", "Policy", "Record", "RecFlags", "Layout", "Checkpointer", "Background", "BackgroundThreads", "Restart",
    "RestartReport", "StaleRecordIdError", "NoLocking", "ShoreLocking", "AllocationLocks", "Quark",
    "StoreProperty", "InDoubt", "GtidError", "LogSpace",
    "OutOfLogSpaceError", "IndexManager", "Index", "KeyDescriptor", "DuplicateKeyError", "KeyNotFoundError",
    "BadKeyError", "check_tree", "LoadReport", "UnsortedInputError", "StoreDirectory", "RootIndex",
    "check_directory", "SInfo", "StoreKind", "LockProtocol",
    "Box", "RTreeManager", "RTree", "DuplicateEntryError", "EntryNotFoundError", "check_rtree",
    "place_record", "pages_to_try", "find_free_extents", "log_sync_point", "compensation", "MountTable", "Mount",
]
