"""The volume manager: stores, extents and pages of one volume.

The volume manager formats volumes (:mod:`minidb.pagestore.volume.format`) and
allocates and frees pages and extents in stores. Within a page, space is
the business of the structure using it. It is a *monitor*: one mutex
serialises its operations (Shore uses one read-write lock for the
I/O-volume manager, a known source of contention that the page and extent
allocation code relies on).

Every change goes through the buffer pool and the shared log with the
protocol of :mod:`minidb.pagestore.wal.logrec` (fix EX, apply, log, set the page
LSN, unfix dirty), one entry per extent-map or store-map page touched.

The manager is one class, :class:`Volume`, whose parts live in a module per
concept:

=====================  ===========================================================
``volmaps.py``         reading the extent and store maps; the store's extent list
``volstores.py``       store lifecycle: create, mark for deletion, remove (idempotent)
``volextents.py``      extents: find free ones, link at the tail, unlink and free,
                       repair lists cut short by a crash
``volpages.py``        page allocation (append, compact), freeing, advisory buckets
``volcaches.py``       the transient caches (reserved-page, last-page, lowest free extent)
``volcheck.py``        consistency check and text dumps
``volundo.py``         logical undo of ``alloc_pages_in_ext``, ``free_pages_in_ext``,
                       ``store_operation``
=====================  ===========================================================

Errors (a full volume, a page that is not allocated or belongs to another
store, a store that does not exist or is being deleted) are found before
anything changes: nothing is logged, no page is touched. A failing log
append puts the page back as it was; an operation of several entries that
fails halfway (a full disk) leaves the entries logged so far, a state that
restart completes or rolls back (:mod:`minidb.pagestore.restart`).

Without transactions (``xct=None``) entries are logged with ``txn_id`` 0 and
never undone. The transaction layer (:mod:`minidb.pagestore.transactions.xct`) passes its
transaction as ``xct`` (:class:`~minidb.pagestore.wal.logrec.LogContext`), defers
freeing extents and removing stores to commit, and sets the hooks
``is_page_held`` (pages freed by an active transaction are not reallocated to
another) and ``alloc_locks`` (the allocation protocol's locks: the extents and
pages the searches may take, the extent lock's "has pages" bit; see
:mod:`minidb.pagestore.transactions.locking`).

**Other volumes.** A page store may mount several volumes
(:mod:`minidb.pagestore.mounts`, Shore's device table); each is a
:class:`Volume` of its own, with its own maps and caches (a volume mounted
again starts with empty caches). ``mount_table`` (set by the storage
manager; None: this volume alone) lets the parts that are handed one volume
find another by number: :meth:`of` (a logical undo, a transaction freeing
space, restart) and :meth:`mounted`.

Worked example (64 pages of 512 bytes, ``ext_sz`` 4, see
:mod:`minidb.pagestore.volume.format`): ``create_store()`` gives ``s(1.3)`` the
first free extent ``x(1.3)``; four ``alloc_page(s(1.3), APPEND)`` calls
return pages 12, 13, 14, 15; the fifth needs a new extent, ``x(1.4)``, and
returns ``p(1.3.16)``. Freeing page 16 frees ``x(1.4)`` again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from minidb.io import Disk
from minidb.log.types import EntryType
from minidb.pagestore.buffer.bufferpool import BufferPool
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import PageId, StoreId, extent_of
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE
from minidb.pagestore.volume import volundo as _volundo  # noqa: F401  (registers the volume's undo handlers)
from minidb.pagestore.volume.format import format_volume
from minidb.pagestore.volume.stores import FIRST_USER_STORE, Deleting, StoreNode
from minidb.pagestore.volume.volcaches import SortedExtents, VolumeCaches
from minidb.pagestore.volume.volcheck import VolumeChecks
from minidb.pagestore.volume.volextents import ExtentAllocation, by_page
from minidb.pagestore.volume.volfile import VolumeFile
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ, VolumeHeader
from minidb.pagestore.volume.volmaps import VolumeMaps
from minidb.pagestore.volume.volpages import AllocMode, PageAllocation
from minidb.pagestore.volume.volstores import StoreLifecycle
from minidb.pagestore.wal.logdef import STORE_OPERATION
from minidb.pagestore.wal.logrec import APPLY_AND_LOG, LogContext
from minidb.pagestore.wal.pageimage import log_page_image
from minidb.stats import Stats, Trace

__all__ = ["Volume", "AllocMode", "SortedExtents", "STAT_NAMES", "by_page"]

STAT_NAMES = [
    "nStoresCreated", "nStoresMarked", "nStoresRemoved", "nExtentsAllocated", "nExtentsFreed",
    "nPagesAllocated", "nPagesFreed", "nFreeExtentSearchSteps", "nStoreSearchSteps",
    "nReservedCacheHits", "nReservedCacheMisses", "nLastPageCacheHits", "nLastPageCacheMisses",
]


class Volume(VolumeMaps, StoreLifecycle, ExtentAllocation, PageAllocation, VolumeCaches, VolumeChecks):
    """A mounted volume (see the module documentation)."""

    def __init__(self, disk: Disk, bufferpool: BufferPool, log: Any, vid: int = 1, use_caches: bool = True,
                 trace: bool = False):
        self.file = VolumeFile(disk, vid)
        self.header: VolumeHeader = self.file.header
        self.vid = vid
        self.ext_sz = self.header.ext_sz
        self.bp = bufferpool
        self.log = log
        self.use_caches = use_caches
        bufferpool.register(self.file)
        if log is not None:  # a clean page about to change logs its full image first (wal/pageimage.py)
            bufferpool.image_logger = partial(log_page_image, log)
        self.stats = Stats("volume", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.alloc_locks: Any = None  # set by the transaction layer
        self.is_page_held: Callable[[int, Any], bool] | None = None  # set by the transaction layer
        self._mutex = threading.RLock()
        self._map_layouts: dict[int, tuple] = {}  # map page number -> what it must be (VolumeMaps._read_map)
        self._init_caches()
        self.mount_table: Any = None  # the mounted volumes by number (None: this one alone); see `of`

    @classmethod
    def format(cls, disk: Disk, bufferpool: BufferPool, log: Any, vid: int = 1, num_pages: int = 1024,
               ext_sz: int = DEFAULT_EXT_SZ, page_size: int | None = None, **options: Any) -> "Volume":
        """Format volume ``vid`` on ``disk`` (sized for the pool's pages by default) and mount it; the
        volume records ``log``'s environment id."""
        format_volume(disk, vid, num_pages, ext_sz, page_size or bufferpool.page_size or DEFAULT_PAGE_SIZE,
                      getattr(log, "env_id", 0))
        return cls(disk, bufferpool, log, vid, **options)

    def close(self) -> None:
        """Write the volume's dirty pages (the log first), drop them from the pool, close the file."""
        with self._mutex:
            self.bp.force_volume(self.vid)
            self.bp.discard_volume(self.vid)
            self.file.close()

    # -- the other mounted volumes ----------------------------------------------------------
    def of(self, vid: int) -> "Volume":
        """The mounted volume ``vid``: this one, or another from the mount table (a
        :class:`~minidb.pagestore.errors.BadRequestError` if it is not mounted)."""
        if vid == self.vid:
            return self
        if self.mount_table is None:
            raise BadRequestError(f"volume v({vid}) is not mounted (only v({self.vid}) is)")
        return self.mount_table.volume(vid)

    def not_mounted_note(self, vid: int) -> str:
        """`` (v(N) is not mounted)`` for a volume number not mounted beside this one, else nothing."""
        mounted = [self.vid] if self.mount_table is None else self.mount_table.vids()
        return "" if vid in mounted else f" (v({vid}) is not mounted)"

    def mounted(self) -> list["Volume"]:
        """Every mounted volume, by number (this one alone without a mount table)."""
        return [self] if self.mount_table is None else self.mount_table.volumes()

    # -- ids and checks -------------------------------------------------------------------
    def stid(self, snum: int) -> StoreId:
        return StoreId(self.vid, snum)

    def pid(self, page: int) -> PageId:
        """The page id of page number ``page``, with the store that owns its extent."""
        self._check_page_number(page)
        ext = extent_of(page, self.ext_sz)
        return PageId(self.vid, self.extlink(ext).owner, page)

    def _check_page_number(self, page: int) -> None:
        if not 0 <= page < self.header.num_pages:
            raise BadRequestError(f"v({self.vid}): page {page} is outside the volume (0..{self.header.num_pages - 1})")

    def _check_ext(self, ext: int) -> None:
        if not 0 <= ext < self.header.num_exts:
            raise BadRequestError(f"v({self.vid}): extent {ext} is outside the volume (0..{self.header.num_exts - 1})")

    def _check_store(self, stid: StoreId, allow_deleting: bool = False) -> StoreNode:
        if not isinstance(stid, StoreId):
            raise BadRequestError(f"{stid!r} is not a store id (expected e.g. s({self.vid}.3))")
        if stid.vol != self.vid:
            raise BadRequestError(f"{stid} is not on volume v({self.vid}){self.not_mounted_note(stid.vol)}")
        if not FIRST_USER_STORE - 2 <= stid.store < self.header.num_stores:
            raise BadRequestError(f"{stid}: no such store (stores are 1..{self.header.num_stores - 1})")
        node = self.store_node(stid.store)
        if not node.in_use:
            raise BadRequestError(f"{stid}: no such store")
        if node.deleting != Deleting.NOT_DELETING and not allow_deleting:
            raise BadRequestError(f"{stid} is being deleted ({node.deleting_state.name})")
        return node

    # -- logged updates ----------------------------------------------------------------------
    def _update(self, pid: PageId, entry_type: EntryType, values: dict[str, Any], xct: LogContext | None) -> None:
        page = self.bp.fix(pid, EX)
        try:
            lsn = APPLY_AND_LOG.call(self.log, page, entry_type, values, xct)  # type: ignore[arg-type]
        except BaseException:
            self.bp.unfix(page)  # type: ignore[arg-type]
            raise
        self.bp.unfix(page, dirty=True)  # type: ignore[arg-type]
        if self.trace.enabled:
            self.trace.emit("%s %s at %s", entry_type.name, _brief(values), lsn)

    def _store_op(self, snum: int, op: str, value: int, old: int, xct: LogContext | None) -> None:
        self._update(self._stmap_pid(snum), STORE_OPERATION,
                     {"snum": snum, "op": op, "value": value, "old_value": old}, xct)

    def __repr__(self) -> str:
        return f"Volume(v({self.vid}), {self.file.where()})"


def _brief(values: dict[str, Any]) -> str:
    shown = {k: v for k, v in values.items() if k not in ("vol", "store", "txn_id", "txn_prev_lsn")}
    if "exts" in shown:
        shown["exts"] = [item["ext"] for item in shown["exts"]]
    return " ".join(f"{k}={v}" for k, v in shown.items())
