"""The volume manager: stores, extents and pages of one volume.

The volume manager formats volumes (:mod:`minidb.pagestore.format`) and
allocates and frees pages and extents in stores. Within a page, space is
the business of the structure using it. It is a *monitor*: one mutex
serialises its operations (Shore uses one read-write lock for the
I/O-volume manager, a known source of contention that the page and extent
allocation code relies on).

Every change goes through the buffer pool and the shared log with the
protocol of :mod:`minidb.pagestore.logrec` (fix EX, apply, log, set the page
LSN, unfix dirty), one entry per extent-map or store-map page touched.

**Stores.** Creating a store finds an unused store number (a linear search
of the store map from a revolving position) and a free extent, then logs
three entries: ``store_operation create_store`` (the number is now
legitimate), ``create_ext_list`` (the extent is the store's) and
``store_operation set_first_ext``. A store always owns at least one extent.
Destroying a store first *marks* it (``set_deleting`` DELETING; with
transactions, the transaction removes it when it commits), then *removes*
it: ``set_deleting`` FREEING_EXTS, one ``free_ext_list`` per extent-map page
holding its extents, ``delete_store``. Stores 1 (directory) and 2 (root
index) are made by formatting and cannot be destroyed.

**Extents.** A free extent is searched from the lowest free extent number
cached since the volume was mounted (reset to the first extent after store
0's on mount). New extents are linked at the *tail* of the store's list:
``create_ext_list`` on the new extent's page, and ``set_ext_next`` on the
old tail's page if that is another page. An extent is freed when its last
allocated page is freed (unless it is the store's only extent, or the caller
defers it, as a transaction will until commit): ``free_ext_list``, plus
``set_ext_next``/``set_ext_prev`` for neighbours on other pages, plus
``set_first_ext`` if it headed the list.

**Pages.** ``alloc_page(stid, mode)``:

- ``AllocMode.APPEND``: the page after the highest allocated page of the
  store's *last* extent (found through the *last-page cache*, store number
  -> last extent, or by walking the list), else the first page of a new
  extent. Appending keeps the store's pages in allocation order.
- ``AllocMode.COMPACT``: any reserved page: the *reserved-page cache* (store
  number -> extents with reserved pages) is consulted first; if it has no
  entry for the store (after mounting), the store's extents are searched
  and the cache primed; if no extent has a reserved page, a new extent.
  The page chosen is the lowest reserved page of the lowest such extent, so
  the cache and a full search always agree.

Both caches are transient, primed lazily after mounting, kept exact by
every operation, and checked against the extlink before use; hits and
misses are counted in :attr:`Volume.stats`.

Errors (a full volume, a page that is not allocated or belongs to another
store, a store that does not exist or is being deleted) are found before
anything changes: nothing is logged, no page is touched. A failing log
append puts the page back as it was; an operation of several entries that
fails halfway (a full disk) leaves the entries logged so far, a state that
restart with transactions (the next layer) completes or rolls back.

Without transactions (``xct=None``) entries are logged with ``txn_id`` 0 and
never undone. The transaction layer passes its transaction as ``xct``
(:class:`~minidb.pagestore.logrec.LogContext`) and defers freeing extents
and removing stores to commit.

Worked example (64 pages of 512 bytes, ``ext_sz`` 4, see
:mod:`minidb.pagestore.format`): ``create_store()`` gives ``s(1.3)`` the
first free extent ``x(1.3)``; four ``alloc_page(s(1.3), APPEND)`` calls
return pages 12, 13, 14, 15; the fifth needs a new extent, ``x(1.4)``, and
returns ``p(1.3.16)``. Freeing page 16 frees ``x(1.4)`` again.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from enum import Enum
from typing import Any

from minidb.io import Disk
from minidb.log.types import EntryType
from minidb.pagestore.bufferpool import BufferPool
from minidb.pagestore.errors import BadRequestError, PageStoreError, VolumeFullError
from minidb.pagestore.extmap import ExtlinkPage, Extlink
from minidb.pagestore.format import format_volume
from minidb.pagestore.ids import ExtentId, PageId, StoreId, extent_of, index_in_extent
from minidb.pagestore.latch import EX, SH
from minidb.pagestore.logdef import (
    ALLOC_PAGES_IN_EXT, CREATE_EXT_LIST, FREE_EXT_LIST, FREE_PAGES_IN_EXT, SET_EXT_NEXT, SET_EXT_PREV,
    STORE_OPERATION,
)
from minidb.pagestore.logrec import LogContext, apply_and_log, undo_handler
from minidb.pagestore.page import DEFAULT_PAGE_SIZE, StoreFlags
from minidb.pagestore.slotted import SlottedPage
from minidb.pagestore.stores import FIRST_USER_STORE, Deleting, StnodePage, StoreNode
from minidb.pagestore.volfile import VolumeFile
from minidb.pagestore.volheader import DEFAULT_EXT_SZ, VolumeHeader
from minidb.stats import Stats, Trace


class SortedExtents:
    """A small sorted set of extent numbers: the reserved-page cache of one store.

    The lowest extent is wanted at every compact allocation, so it is kept
    first rather than searched for.
    """

    def __init__(self, exts: Iterable[int] = ()):
        self._exts = sorted(set(exts))

    def add(self, ext: int) -> None:
        i = bisect_left(self._exts, ext)
        if i == len(self._exts) or self._exts[i] != ext:
            self._exts.insert(i, ext)

    def discard(self, ext: int) -> None:
        i = bisect_left(self._exts, ext)
        if i < len(self._exts) and self._exts[i] == ext:
            del self._exts[i]

    def first(self) -> int:
        return self._exts[0]

    def __iter__(self) -> Iterator[int]:
        return iter(list(self._exts))

    def __len__(self) -> int:
        return len(self._exts)

    def __contains__(self, ext: object) -> bool:
        return ext in self._exts


class AllocMode(Enum):
    APPEND = "append"
    COMPACT = "compact"


STAT_NAMES = [
    "nStoresCreated", "nStoresMarked", "nStoresRemoved", "nExtentsAllocated", "nExtentsFreed",
    "nPagesAllocated", "nPagesFreed", "nFreeExtentSearchSteps", "nStoreSearchSteps",
    "nReservedCacheHits", "nReservedCacheMisses", "nLastPageCacheHits", "nLastPageCacheMisses",
]


class Volume:
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
        self.stats = Stats("volume", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self.is_extent_locked: Callable[[int], bool] | None = None  # set by the lock manager (next layer)
        self._mutex = threading.RLock()
        self._min_free_ext = self.header.first_data_ext
        self._store_cursor = FIRST_USER_STORE
        self._reserved_cache: dict[int, SortedExtents] = {}
        self._last_ext_cache: dict[int, int] = {}

    @classmethod
    def format(cls, disk: Disk, bufferpool: BufferPool, log: Any, vid: int = 1, num_pages: int = 1024,
               ext_sz: int = DEFAULT_EXT_SZ, page_size: int | None = None, **options: Any) -> "Volume":
        """Format volume ``vid`` on ``disk`` (sized for the pool's pages by default) and mount it."""
        format_volume(disk, vid, num_pages, ext_sz, page_size or bufferpool.page_size or DEFAULT_PAGE_SIZE)
        return cls(disk, bufferpool, log, vid, **options)

    def close(self) -> None:
        """Write the volume's dirty pages (the log first), drop them from the pool, close the file."""
        with self._mutex:
            self.bp.force_volume(self.vid)
            self.bp.discard_volume(self.vid)
            self.file.close()

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
        if stid.vol != self.vid:
            raise BadRequestError(f"{stid} is not on volume v({self.vid})")
        if not FIRST_USER_STORE - 2 <= stid.store < self.header.num_stores:
            raise BadRequestError(f"{stid}: no such store (stores are 1..{self.header.num_stores - 1})")
        node = self.store_node(stid.store)
        if not node.in_use:
            raise BadRequestError(f"{stid}: no such store")
        if node.deleting != Deleting.NOT_DELETING and not allow_deleting:
            raise BadRequestError(f"{stid} is being deleted ({node.deleting_state.name})")
        return node

    # -- reading the maps -------------------------------------------------------------------
    def _extmap_pid(self, ext: int) -> PageId:
        return PageId(self.vid, 0, self.header.extmap_page(ext))

    def _stmap_pid(self, snum: int) -> PageId:
        return PageId(self.vid, 0, self.header.stmap_page(snum))

    def extlink(self, ext: int) -> Extlink:
        self._check_ext(ext)
        page = self.bp.fix(self._extmap_pid(ext), SH)
        try:
            return ExtlinkPage(page).get(ext)  # type: ignore[arg-type]
        finally:
            self.bp.unfix(page)  # type: ignore[arg-type]

    def extlinks(self) -> list[Extlink]:
        """Every extent's extlink, extent 0 first."""
        links: list[Extlink] = []
        for number in self.header.extmap_pages():
            page = self.bp.fix(PageId(self.vid, 0, number), SH)
            try:
                view = ExtlinkPage(page)  # type: ignore[arg-type]
                last = min(view.first_ext + view.per_page, self.header.num_exts)
                links += [view.get(ext) for ext in range(view.first_ext, last)]
            finally:
                self.bp.unfix(page)  # type: ignore[arg-type]
        return links

    def store_node(self, snum: int) -> StoreNode:
        if not 0 <= snum < self.header.num_stores:
            raise BadRequestError(f"v({self.vid}): store {snum} is outside 0..{self.header.num_stores - 1}")
        page = self.bp.fix(self._stmap_pid(snum), SH)
        try:
            return StnodePage(page).get(snum)  # type: ignore[arg-type]
        finally:
            self.bp.unfix(page)  # type: ignore[arg-type]

    def stores(self) -> list[StoreId]:
        """Every store in use (1 and 2 included), by number."""
        found = []
        for number in self.header.stmap_pages():
            page = self.bp.fix(PageId(self.vid, 0, number), SH)
            try:
                view = StnodePage(page)  # type: ignore[arg-type]
                last = min(view.first_store + view.per_page, self.header.num_stores)
                found += [self.stid(s) for s in range(max(1, view.first_store), last) if view.get(s).in_use]
            finally:
                self.bp.unfix(page)  # type: ignore[arg-type]
        return found

    def store_extents(self, stid: StoreId) -> list[int]:
        """The store's extents in list order (head first)."""
        node = self._check_store(stid, allow_deleting=True)
        return self._walk(stid.store, node.first_ext)

    def _walk(self, snum: int, first_ext: int) -> list[int]:
        exts, ext = [], first_ext
        while ext:
            link = self.extlink(ext)
            if link.owner != snum or ext in exts or len(exts) > self.header.num_exts:
                raise PageStoreError(f"s({self.vid}.{snum}): broken extent list at x({self.vid}.{ext})")
            exts.append(ext)
            ext = link.next
        return exts

    def store_pages(self, stid: StoreId) -> list[PageId]:
        """The store's allocated pages, in store order (extent list order, then page order)."""
        pages = []
        for ext in self.store_extents(stid):
            link = self.extlink(ext)
            pages += [PageId(self.vid, stid.store, ext * self.ext_sz + i) for i in link.allocated(self.ext_sz)]
        return pages

    def is_allocated(self, pid: PageId) -> bool:
        """Whether page ``pid`` is allocated to store ``pid.store`` (only the extent map can tell)."""
        self._check_page_number(pid.page)
        link = self.extlink(extent_of(pid.page, self.ext_sz))
        return link.owner == pid.store and link.is_allocated(index_in_extent(pid.page, self.ext_sz))

    # -- logged updates ----------------------------------------------------------------------
    def _update(self, pid: PageId, entry_type: EntryType, values: dict[str, Any], xct: LogContext | None) -> None:
        page = self.bp.fix(pid, EX)
        try:
            lsn = apply_and_log(self.log, page, entry_type, values, xct)  # type: ignore[arg-type]
        except BaseException:
            self.bp.unfix(page)  # type: ignore[arg-type]
            raise
        self.bp.unfix(page, dirty=True)  # type: ignore[arg-type]
        if self.trace.enabled:
            self.trace.emit("%s %s at %s", entry_type.name, _brief(values), lsn)

    def _store_op(self, snum: int, op: str, value: int, old: int, xct: LogContext | None) -> None:
        self._update(self._stmap_pid(snum), STORE_OPERATION,
                     {"snum": snum, "op": op, "value": value, "old_value": old}, xct)

    # -- stores ------------------------------------------------------------------------------------
    def create_store(self, flags: StoreFlags = StoreFlags.REGULAR, xct: LogContext | None = None) -> StoreId:
        """A new store with one extent (see the module documentation)."""
        with self._mutex:
            if not flags:
                raise BadRequestError("a store needs store flags (e.g. StoreFlags.REGULAR)")
            snum = self._find_unused_store()
            ext = self._find_free_extents(1)[0]
            self._store_op(snum, "create_store", int(flags), 0, xct)
            self._link_extents(snum, 0, [ext], xct)
            self._store_op(snum, "set_first_ext", ext, 0, xct)
            self._store_cursor = snum + 1 if snum + 1 < self.header.num_stores else FIRST_USER_STORE
            self._last_ext_cache[snum] = ext
            self._reserved_cache[snum] = SortedExtents([ext])
            self.stats.add("nStoresCreated")
            self.trace.emit("created %s with extent %s", self.stid(snum), ExtentId(self.vid, ext))
            return self.stid(snum)

    def _find_unused_store(self) -> int:
        count = self.header.num_stores - FIRST_USER_STORE
        for step in range(count):
            snum = FIRST_USER_STORE + (self._store_cursor - FIRST_USER_STORE + step) % count
            self.stats.add("nStoreSearchSteps")
            if not self.store_node(snum).in_use:
                return snum
        raise VolumeFullError(f"v({self.vid}): no unused store number is left (all {count} are in use)")

    def set_store_flags(self, stid: StoreId, flags: StoreFlags, xct: LogContext | None = None) -> None:
        with self._mutex:
            node = self._check_store(stid)
            if not flags:
                raise BadRequestError(f"{stid}: store flags cannot be 0")
            self._store_op(stid.store, "set_store_flags", int(flags), node.flags, xct)

    def destroy_store(self, stid: StoreId, xct: LogContext | None = None) -> None:
        """Mark the store for deletion (``set_deleting`` DELETING); :meth:`remove_store` frees it."""
        with self._mutex:
            if stid.store < FIRST_USER_STORE:
                raise BadRequestError(f"{stid} is a reserved store and cannot be destroyed")
            self._check_store(stid)
            self._store_op(stid.store, "set_deleting", Deleting.DELETING, Deleting.NOT_DELETING, xct)
            self._forget_store(stid.store)
            self.stats.add("nStoresMarked")

    def remove_store(self, stid: StoreId, xct: LogContext | None = None) -> list[int]:
        """Free every extent of a store marked for deletion and release its number; return the extents."""
        with self._mutex:
            node = self._check_store(stid, allow_deleting=True)
            if node.deleting == Deleting.NOT_DELETING:
                raise BadRequestError(f"{stid} is not marked for deletion (destroy_store first)")
            exts = self._walk(stid.store, node.first_ext)
            if node.deleting != Deleting.FREEING_EXTS:
                self._store_op(stid.store, "set_deleting", Deleting.FREEING_EXTS, node.deleting, xct)
            for page_number, group in _by_page(exts, self.header):
                self._update(PageId(self.vid, 0, page_number), FREE_EXT_LIST,
                             {"snum": stid.store, "prev": 0, "next": 0, "exts": [{"ext": e} for e in group]}, xct)
            self._store_op(stid.store, "delete_store", 0, node.first_ext, xct)
            self.bp.discard_store(stid)
            self._forget_store(stid.store)
            if exts:
                self._min_free_ext = min(self._min_free_ext, min(exts))
            self.stats.add("nStoresRemoved")
            self.stats.add("nExtentsFreed", len(exts))
            self.trace.emit("removed %s, freeing %d extents", stid, len(exts))
            return exts

    def drop_store(self, stid: StoreId) -> list[int]:
        """Destroy a store at once (mark and remove): what a committing transaction does."""
        with self._mutex:
            self.destroy_store(stid)
            return self.remove_store(stid)

    def _forget_store(self, snum: int) -> None:
        self._reserved_cache.pop(snum, None)
        self._last_ext_cache.pop(snum, None)

    # -- extents ----------------------------------------------------------------------------------
    def _find_free_extents(self, count: int) -> list[int]:
        """``count`` free extents, lowest first, searching from the cached lowest free extent."""
        found: list[int] = []
        first_free = None
        for ext in range(self._min_free_ext, self.header.num_exts):
            self.stats.add("nFreeExtentSearchSteps")
            if self.extlink(ext).owner == 0 and not (self.is_extent_locked and self.is_extent_locked(ext)):
                first_free = ext if first_free is None else first_free
                found.append(ext)
                if len(found) == count:
                    break
        if len(found) < count:
            raise VolumeFullError(f"v({self.vid}) is full: {count} free extent(s) wanted, {len(found)} left")
        self._min_free_ext = first_free if first_free is not None else self.header.num_exts
        return found

    def _link_extents(self, snum: int, tail: int, exts: list[int], xct: LogContext | None) -> None:
        """Give ``exts`` to store ``snum``, linked after ``tail``: one entry per extent-map page."""
        groups = list(_by_page(exts, self.header))
        prev = tail
        for i, (page_number, group) in enumerate(groups):
            nxt = groups[i + 1][1][0] if i + 1 < len(groups) else 0
            self._update(PageId(self.vid, 0, page_number), CREATE_EXT_LIST,
                         {"snum": snum, "prev": prev, "next": nxt, "exts": [{"ext": e} for e in group]}, xct)
            prev = group[-1]
        if tail and self.header.extmap_page(tail) != self.header.extmap_page(exts[0]):
            self._update(self._extmap_pid(tail), SET_EXT_NEXT, {"ext": tail, "next": exts[0], "old_next": 0}, xct)
        self.stats.add("nExtentsAllocated", len(exts))

    def _last_extent(self, snum: int) -> tuple[int, Extlink]:
        """The store's last extent and its extlink: from the last-page cache if still valid, else by walking."""
        cached = self._last_ext_cache.get(snum) if self.use_caches else None
        if cached is not None:
            link = self.extlink(cached)
            if link.owner == snum and link.next == 0:
                self.stats.add("nLastPageCacheHits")
                return cached, link
        self.stats.add("nLastPageCacheMisses")
        exts = self._walk(snum, self.store_node(snum).first_ext)
        self._last_ext_cache[snum] = exts[-1]
        return exts[-1], self.extlink(exts[-1])

    def _grow(self, snum: int, xct: LogContext | None) -> int:
        """Allocate one new extent at the tail of the store's list."""
        tail, _ = self._last_extent(snum)
        ext = self._find_free_extents(1)[0]
        self._link_extents(snum, tail, [ext], xct)
        self._last_ext_cache[snum] = ext
        if snum in self._reserved_cache:
            self._reserved_cache[snum].add(ext)
        self.trace.emit("new extent %s for %s after %s", ExtentId(self.vid, ext), self.stid(snum),
                        ExtentId(self.vid, tail))
        return ext

    def free_extent(self, stid: StoreId, ext: int, xct: LogContext | None = None) -> None:
        """Unlink an extent with no allocated page from its store and free it."""
        with self._mutex:
            node = self._check_store(stid, allow_deleting=True)
            self._check_ext(ext)
            link = self.extlink(ext)
            if link.owner != stid.store or ext < self.header.first_data_ext:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} does not belong to {stid}")
            if link.pmap:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} still has allocated pages "
                                      f"({link.pmap_text(self.ext_sz)})")
            if not link.prev and not link.next:
                raise BadRequestError(f"{ExtentId(self.vid, ext)} is the only extent of {stid}; a store keeps one")
            prev, nxt = link.prev, link.next
            page_of = self.header.extmap_page
            self._update(self._extmap_pid(ext), FREE_EXT_LIST,
                         {"snum": stid.store, "prev": prev, "next": nxt, "exts": [{"ext": ext}]}, xct)
            if prev and page_of(prev) != page_of(ext):
                self._update(self._extmap_pid(prev), SET_EXT_NEXT, {"ext": prev, "next": nxt, "old_next": ext}, xct)
            if nxt and page_of(nxt) != page_of(ext):
                self._update(self._extmap_pid(nxt), SET_EXT_PREV, {"ext": nxt, "prev": prev, "old_prev": ext}, xct)
            if not prev:
                self._store_op(stid.store, "set_first_ext", nxt, node.first_ext, xct)
            if stid.store in self._reserved_cache:
                self._reserved_cache[stid.store].discard(ext)
            if self._last_ext_cache.get(stid.store) == ext:
                self._last_ext_cache[stid.store] = prev
            self._min_free_ext = min(self._min_free_ext, ext)
            self.stats.add("nExtentsFreed")
            self.trace.emit("freed extent %s of %s", ExtentId(self.vid, ext), stid)

    def free_extent_if_empty(self, stid: StoreId, ext: int, xct: LogContext | None = None) -> bool:
        """Free ``ext`` if it holds no allocated page and is not the store's only extent."""
        with self._mutex:
            link = self.extlink(ext)
            if link.owner != stid.store or link.pmap or not (link.prev or link.next):
                return False
            self.free_extent(stid, ext, xct)
            return True

    # -- pages ------------------------------------------------------------------------------------
    def alloc_page(self, stid: StoreId, mode: AllocMode = AllocMode.COMPACT,
                   xct: LogContext | None = None) -> PageId:
        """Allocate one page to the store (see the module documentation for the modes)."""
        with self._mutex:
            self._check_store(stid)
            snum = stid.store
            found = self._append_position(snum) if mode == AllocMode.APPEND else self._reserved_page(snum)
            ext, index, pmap = found if found is not None else (self._grow(snum, xct), 0, 0)
            self._update(self._extmap_pid(ext), ALLOC_PAGES_IN_EXT,
                         {"snum": snum, "ext": ext, "pmap": 1 << index}, xct)
            if snum in self._reserved_cache and pmap | 1 << index == (1 << self.ext_sz) - 1:
                self._reserved_cache[snum].discard(ext)  # the extent is full now
            self.stats.add("nPagesAllocated")
            pid = PageId(self.vid, snum, ext * self.ext_sz + index)
            self.trace.emit("allocated %s (%s)", pid, mode.value)
            return pid

    def _append_position(self, snum: int) -> tuple[int, int, int] | None:
        """(extent, page index, its pmap) after the last allocated page of the last extent."""
        last, link = self._last_extent(snum)
        index = link.pmap.bit_length()  # one past the highest allocated page (0 if none)
        return (last, index, link.pmap) if index < self.ext_sz else None

    def _reserved_page(self, snum: int) -> tuple[int, int, int] | None:
        """(extent, page index, its pmap) of the lowest reserved page of the lowest such extent."""
        if self.use_caches:
            cached = self._reserved_cache.get(snum)
            if cached is not None:
                self.stats.add("nReservedCacheHits")
                while cached:
                    ext = cached.first()
                    link = self.extlink(ext)
                    reserved = link.reserved(self.ext_sz) if link.owner == snum else []
                    if reserved:
                        return ext, reserved[0], link.pmap
                    cached.discard(ext)  # stale: verify before use, as Shore does
                return None
            self.stats.add("nReservedCacheMisses")
        with_reserved = self._search_reserved(snum)
        if self.use_caches:
            self._reserved_cache[snum] = SortedExtents(with_reserved)
        if not with_reserved:
            return None
        ext = min(with_reserved)
        link = self.extlink(ext)
        return ext, link.reserved(self.ext_sz)[0], link.pmap

    def _search_reserved(self, snum: int) -> list[int]:
        """A full search of the store's extents for those with reserved pages."""
        node = self.store_node(snum)
        found = []
        for ext in self._walk(snum, node.first_ext):
            if self.extlink(ext).reserved(self.ext_sz):
                found.append(ext)
        if self.trace.enabled:
            self.trace.emit("searched the extents of %s: reserved pages in %s", self.stid(snum),
                            [str(ExtentId(self.vid, e)) for e in found])
        return found

    def free_page(self, pid: PageId, xct: LogContext | None = None, free_empty_extent: bool = True) -> None:
        """Free an allocated page of store ``pid.store``; free its extent if it was the last page."""
        with self._mutex:
            self._check_page_number(pid.page)
            self._check_store(pid.stid, allow_deleting=True)
            ext, index = extent_of(pid.page, self.ext_sz), index_in_extent(pid.page, self.ext_sz)
            link = self.extlink(ext)
            if link.owner != pid.store or ext < self.header.first_data_ext:
                owner = "no store (the extent is free)" if link.owner == 0 else f"s({self.vid}.{link.owner})"
                raise BadRequestError(f"{pid}: page {pid.page} belongs to {owner}, not to {pid.stid}")
            if not link.is_allocated(index):
                raise BadRequestError(f"{pid} is not allocated (extent {ExtentId(self.vid, ext)}: "
                                      f"{link.pmap_text(self.ext_sz)})")
            self._update(self._extmap_pid(ext), FREE_PAGES_IN_EXT,
                         {"snum": pid.store, "ext": ext, "pmap": 1 << index}, xct)
            if pid.store in self._reserved_cache:
                self._reserved_cache[pid.store].add(ext)
            self.stats.add("nPagesFreed")
            self.trace.emit("freed %s", pid)
            if free_empty_extent and link.pmap == 1 << index:
                self.free_extent_if_empty(pid.stid, ext, xct)

    # -- the advisory free-space buckets (unlogged) ------------------------------------------------
    def set_page_bucket(self, pid: PageId, bucket: int) -> None:
        """Record a page's free-space bucket in its extlink; not logged (advisory)."""
        with self._mutex:
            if not self.is_allocated(pid):
                raise BadRequestError(f"{pid} is not an allocated page of {pid.stid}")
            ext = extent_of(pid.page, self.ext_sz)
            page = self.bp.fix(self._extmap_pid(ext), EX)
            try:
                ExtlinkPage(page).set_bucket(ext, index_in_extent(pid.page, self.ext_sz), bucket)  # type: ignore[arg-type]
            finally:
                self.bp.unfix(page, dirty=True)  # type: ignore[arg-type]

    def page_bucket(self, pid: PageId) -> int:
        return self.extlink(extent_of(pid.page, self.ext_sz)).bucket(index_in_extent(pid.page, self.ext_sz))

    def pages_with_bucket(self, stid: StoreId, at_least: int) -> Iterator[PageId]:
        """The store's allocated pages whose bucket is at least ``at_least``, in store order."""
        for pid in self.store_pages(stid):
            if self.page_bucket(pid) >= at_least:
                yield pid

    # -- caches -------------------------------------------------------------------------------------
    def reset_caches(self) -> None:
        """Forget the transient caches, as after mounting."""
        with self._mutex:
            self._reserved_cache.clear()
            self._last_ext_cache.clear()
            self._min_free_ext = self.header.first_data_ext
            self._store_cursor = FIRST_USER_STORE

    def cache_state(self) -> dict[str, Any]:
        return {
            "min_free_ext": self._min_free_ext,
            "reserved_page_cache": {s: sorted(e) for s, e in sorted(self._reserved_cache.items())},
            "last_page_cache": dict(sorted(self._last_ext_cache.items())),
        }

    # -- consistency ----------------------------------------------------------------------------------
    def check(self) -> list[str]:
        """Problems with the extent and store maps (empty when consistent)."""
        with self._mutex:
            problems = []
            links = self.extlinks()
            for ext in range(self.header.store0_exts):
                if links[ext].owner != 0:
                    problems.append(f"x({self.vid}.{ext}) holds store 0 but is owned by store {links[ext].owner}")
            owned: dict[int, set[int]] = {}
            for ext in range(self.header.first_data_ext, self.header.num_exts):
                link = links[ext]
                if link.owner == 0 and (link.pmap or link.next or link.prev):
                    problems.append(f"x({self.vid}.{ext}) is free but has pages or links")
                elif link.owner:
                    owned.setdefault(link.owner, set()).add(ext)
            in_use = {s.store for s in self.stores()}
            for snum in sorted(in_use | set(owned)):
                node = self.store_node(snum)
                if not node.in_use:
                    problems.append(f"s({self.vid}.{snum}) is unused but owns extents {sorted(owned[snum])}")
                    continue
                chain, ext, prev = [], node.first_ext, 0
                while ext and len(chain) <= self.header.num_exts:
                    link = links[ext]
                    if link.owner != snum:
                        problems.append(f"s({self.vid}.{snum}): x({self.vid}.{ext}) in its list is owned by {link.owner}")
                        break
                    if link.prev != prev:
                        problems.append(f"s({self.vid}.{snum}): x({self.vid}.{ext}).prev is {link.prev}, not {prev}")
                    chain.append(ext)
                    prev, ext = ext, link.next
                if not chain:
                    problems.append(f"s({self.vid}.{snum}) has no extent")
                if set(chain) != owned.get(snum, set()):
                    problems.append(f"s({self.vid}.{snum}): list {chain} but owns {sorted(owned.get(snum, set()))}")
            return problems

    # -- dumps ------------------------------------------------------------------------------------------
    def dump_extents(self, only_used: bool = False) -> str:
        """The extent map as text: one line per extent (the golden-text format)."""
        h = self.header
        lines = [
            f"volume v({self.vid}): {h.num_pages} pages of {h.page_size} bytes, {h.num_exts} extents of "
            f"{h.ext_sz} pages; store 0: pages 0-{h.store0_pages - 1} in {h.store0_exts} extent(s)",
            f"{'extent':<9}{'owner':<9}{'prev':<9}{'next':<9}{'pages':<{max(6, h.ext_sz + 1)}}buckets",
        ]
        for ext, link in enumerate(self.extlinks()):
            free = link.owner == 0 and ext >= h.first_data_ext
            if only_used and free:
                continue
            owner = "free" if free else f"s({self.vid}.{link.owner})"
            prev = f"x({self.vid}.{link.prev})" if link.prev else "-"
            nxt = f"x({self.vid}.{link.next})" if link.next else "-"
            buckets = "".join(f"{link.bucket(i):x}" for i in range(h.ext_sz))
            lines.append(f"{'x(%d.%d)' % (self.vid, ext):<9}{owner:<9}{prev:<9}{nxt:<9}"
                         f"{link.pmap_text(h.ext_sz):<{max(6, h.ext_sz + 1)}}{buckets}")
        return "\n".join(lines) + "\n"

    def dump_stores(self) -> str:
        """The stores in use as text: node fields, extent list, allocated pages."""
        lines = [f"{'store':<9}{'flags':<9}{'deleting':<14}{'first':<9}extents -> allocated pages"]
        for stid in self.stores():
            node = self.store_node(stid.store)
            exts = self._walk(stid.store, node.first_ext)
            pages = [p.page for p in self.store_pages(stid)]
            flags = "|".join(f.name.lower() for f in StoreFlags if f & node.flags) or "-"
            first = f"x({self.vid}.{node.first_ext})" if node.first_ext else "-"
            lines.append(f"{str(stid):<9}{flags:<9}{node.deleting_state.name.lower():<14}{first:<9}"
                         f"{' '.join(str(e) for e in exts)} -> {_ranges(pages) or 'none'}")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"Volume(v({self.vid}), {self.file.where()})"


def _by_page(exts: list[int], header: VolumeHeader) -> Iterator[tuple[int, list[int]]]:
    """Consecutive runs of ``exts`` that lie on the same extent-map page."""
    group: list[int] = []
    for ext in exts:
        if group and header.extmap_page(group[-1]) != header.extmap_page(ext):
            yield header.extmap_page(group[0]), group
            group = []
        group.append(ext)
    if group:
        yield header.extmap_page(group[0]), group


def _ranges(numbers: list[int]) -> str:
    """``[3, 4, 5, 9]`` -> ``3-5 9``."""
    parts, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return " ".join(parts)


def _brief(values: dict[str, Any]) -> str:
    shown = {k: v for k, v in values.items() if k not in ("vol", "store", "txn_id", "txn_prev_lsn")}
    if "exts" in shown:
        shown["exts"] = [item["ext"] for item in shown["exts"]]
    return " ".join(f"{k}={v}" for k, v in shown.items())


# -- logical undo (flag L): the inverse operation, through the volume ---------------------------------
@undo_handler("alloc_pages_in_ext")
def _undo_alloc_pages(volume: Volume, v: dict[str, Any], xct: LogContext | None) -> None:
    with volume._mutex:
        link = volume.extlink(v["ext"])
        if link.owner != v["snum"] or link.pmap & v["pmap"] != v["pmap"]:
            raise PageStoreError(f"undo of alloc_pages_in_ext: x({volume.vid}.{v['ext']}) no longer holds those pages")
        volume._update(volume._extmap_pid(v["ext"]), FREE_PAGES_IN_EXT,
                       {"snum": v["snum"], "ext": v["ext"], "pmap": v["pmap"]}, xct)
        if v["snum"] in volume._reserved_cache:
            volume._reserved_cache[v["snum"]].add(v["ext"])


@undo_handler("free_pages_in_ext")
def _undo_free_pages(volume: Volume, v: dict[str, Any], xct: LogContext | None) -> None:
    with volume._mutex:
        link = volume.extlink(v["ext"])
        if link.owner != v["snum"] or link.pmap & v["pmap"]:
            raise PageStoreError(f"undo of free_pages_in_ext: x({volume.vid}.{v['ext']}) cannot take those pages back")
        volume._update(volume._extmap_pid(v["ext"]), ALLOC_PAGES_IN_EXT,
                       {"snum": v["snum"], "ext": v["ext"], "pmap": v["pmap"]}, xct)
        volume._reserved_cache.pop(v["snum"], None)


@undo_handler("store_operation")
def _undo_store_operation(volume: Volume, v: dict[str, Any], xct: LogContext | None) -> None:
    stid, op = volume.stid(v["snum"]), v["op"]
    with volume._mutex:
        if op == "create_store":
            node = volume.store_node(v["snum"])
            if node.in_use:
                if node.deleting == Deleting.NOT_DELETING:
                    volume._store_op(v["snum"], "set_deleting", Deleting.DELETING, node.deleting, xct)
                volume.remove_store(stid, xct)
        elif op in ("set_deleting", "set_store_flags"):
            node = volume.store_node(v["snum"])
            current = node.deleting if op == "set_deleting" else node.flags
            volume._store_op(v["snum"], op, v["old_value"], current, xct)
            volume._forget_store(v["snum"])
        # set_first_ext and delete_store are not undone (as in Shore): the list
        # they change is rebuilt by the undo of create_store.
