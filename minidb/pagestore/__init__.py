"""The page store (Shore lineage): volumes, buffer pool, transactions, files of records, ARIES restart.

Storage layer, bottom up::

    ids.py          v(1) s(1.3) p(1.3.48) r(1.3.48.2) x(1.6); extent arithmetic
    page.py         the page frame: header, slot table, footer (checksum, torn-page detection)
    slotted.py      slotted pages and space reservation
    logdef.py       the page store's log entry types (Shore's logdef.dat)
    logrec.py       fix EX / apply / log / set page LSN; redo and undo dispatch by name
    extmap.py       extlink entries on extent-map pages
    stores.py       store nodes on store-map pages
    volheader.py    the volume header (page 0) and the layout it implies
    volfile.py      a volume's file: pages by number, runs in one write
    format.py       formatting a volume
    latch.py        SH/EX latches
    clock.py        clock replacement (pure)
    bufferpool.py   frames, fix/unfix, recovery LSNs, the write-ahead rule, the cleaner
    volume.py       the volume manager (volmaps, volstores, volextents, volpages,
                    volcaches, volcheck, volundo: a module per concept)
    crashtest.py    every crash point of a volume workload: redo must rebuild the maps

Transactions, records and recovery::

    xct.py          a transaction: tid, state, log chain, undo-next, space it frees
    lock/           Shore's lock manager: modes, hierarchies, queues, Dreadlocks
    locking.py      the lock step of the protocol: NoLocking, ShoreLocking
    rollback.py     undo an entry, log its CLR; roll back to a savepoint or all
    freespace.py    commit-time store destruction and extent freeing
    xctmgr.py       begin, commit (durable or not), abort, savepoints, the table
    recpage.py      page_format, rec_insert/remove/splice and their CLRs
    recops.py       one slot update by the protocol (fix EX, apply, log)
    rectag.py       record tags, small and large records
    directory.py    the store directory (store 1): what each store is for
    ridcheck.py     record id verification
    histogram.py    the free-space heap and histogram of a file
    file.py         files of records (recupdate.py: update, append, truncate)
    master.py       the master LSN, where restart finds the last checkpoint
    chkpt.py        fuzzy checkpoints
    restart/        ARIES restart: analysis, redo, undo, finish
    sm.py           the storage manager: all of it on one disk
    verify.py       checking a whole page store (what ``minidb verify`` runs on a volume's directory)
    xct_crashtest.py  every crash point of a transactional workload vs a model

Public surface::

    VolumeId, StoreId, PageId, RecordId, ExtentId, parse_id
    PageTag, StoreFlags, Page, SlottedPage, SpaceUser, NO_TXN
    LatchMode, SH, EX, BufferPool, Frame, FrameView, WriteRun
    ClockFrame, ClockChoice, choose_victim
    Volume, AllocMode, format_volume, VolumeHeader, volume_file_name
    Extlink, StoreNode, Deleting
    PAGESTORE_TYPES, TxnRef, apply_and_log, redo, undo
    StorageManager, Xct, XctState, SavePoint, XctManager, FileManager, Policy,
    Record, RecFlags, Checkpointer, Restart, RestartReport, StaleRecordIdError,
    NoLocking, ShoreLocking          (the lock manager: minidb.pagestore.lock)
    the errors: PageStoreError, VolumeError, VolumeFullError, BadRequestError, SlotError,
    RecordWontFitError, BufferPoolFullError; damage (CorruptionError): PageStoreCorruptionError,
    BadPageError (TornPageError, PageChecksumError), VolumeCorruptionError, LogLostError
"""

from minidb.pagestore import stores as _stores  # noqa: F401  (registers the store_operation redo handler)
from minidb.pagestore import extmap as _extmap  # noqa: F401  (registers the extent-map redo handlers)
from minidb.pagestore.bufferpool import BufferPool, Frame, FrameView, WriteRun
from minidb.pagestore.clock import ClockChoice, ClockFrame, choose_victim
from minidb.pagestore.errors import (
    BadPageError, BadRequestError, BufferPoolFullError, LogLostError, PageChecksumError, PageStoreCorruptionError,
    PageStoreError, RecordWontFitError, SlotError, TornPageError, VolumeCorruptionError, VolumeError, VolumeFullError,
)
from minidb.pagestore.extmap import Extlink
from minidb.pagestore.format import format_volume
from minidb.pagestore.ids import ExtentId, PageId, RecordId, StoreId, VolumeId, parse_id
from minidb.pagestore.latch import EX, SH, LatchMode
from minidb.pagestore.logdef import PAGESTORE_TYPES
from minidb.pagestore.logrec import TxnRef, apply_and_log, redo, undo
from minidb.pagestore.page import Page, PageTag, StoreFlags
from minidb.pagestore.slotted import NO_TXN, SlottedPage, SpaceUser
from minidb.pagestore.stores import Deleting, StoreNode
from minidb.pagestore.volfile import volume_file_name
from minidb.pagestore.volheader import VolumeHeader
from minidb.pagestore.volume import AllocMode, Volume
from minidb.pagestore.chkpt import Checkpointer
from minidb.pagestore.errors import StaleRecordIdError
from minidb.pagestore.file import FileManager, Policy
from minidb.pagestore.locking import NoLocking, ShoreLocking
from minidb.pagestore.rectag import RecFlags, Record
from minidb.pagestore.restart import Restart, RestartReport
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.xct import SavePoint, Xct, XctState
from minidb.pagestore.xctmgr import XctManager

__all__ = [
    "VolumeId", "StoreId", "PageId", "RecordId", "ExtentId", "parse_id", "PageTag", "StoreFlags", "Page",
    "SlottedPage", "SpaceUser", "NO_TXN", "LatchMode", "SH", "EX", "BufferPool", "Frame", "FrameView",
    "WriteRun", "ClockFrame", "ClockChoice", "choose_victim", "Volume", "AllocMode", "format_volume",
    "VolumeHeader", "volume_file_name", "Extlink", "StoreNode", "Deleting", "PAGESTORE_TYPES", "TxnRef",
    "apply_and_log", "redo", "undo", "PageStoreError", "VolumeError", "VolumeFullError", "BadRequestError",
    "TornPageError", "PageStoreCorruptionError", "BadPageError", "PageChecksumError", "VolumeCorruptionError",
    "LogLostError", "BufferPoolFullError", "RecordWontFitError", "SlotError", "StorageManager", "Xct", "XctState",
    "SavePoint", "XctManager", "FileManager", "Policy", "Record", "RecFlags", "Checkpointer", "Restart",
    "RestartReport", "StaleRecordIdError", "NoLocking", "ShoreLocking",
]
