"""Allocating and freeing pages in a store (a part of :class:`~minidb.pagestore.volume.volume.Volume`).

``alloc_page(stid, mode)``:

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

Which pages of an extent an allocation tries, and in what order, is one
pure function, :func:`pages_to_try` (called by ``_free_for`` alone).

Either way the allocation is one ``alloc_pages_in_ext`` entry (undone
logically: the page is freed again), after the entries of a new extent if
one was needed.

**Pages a transaction freed.** A page freed by a transaction that is still
active may come back if it aborts, so it is not allocated again meanwhile
(Shore: the freeing transaction's long-duration EX page lock; minidb does not
hand it back even to that transaction, whose rollback must find it as it
left it). The transaction layer sets ``is_page_held(page_number, xct)``;
allocation skips the pages it says are held.

**The allocation protocol's locks** (``alloc_locks``, set by the transaction
layer; see :mod:`minidb.pagestore.transactions.locking`): the store is locked
IX before the search; each extent the search looks in is try-locked IX (an
extent being freed is skipped), each candidate page must be unlocked by
other transactions and is try-locked IX, long; the allocation sets the "has
pages" bit of the extent lock, and a free that leaves the extent with
reserved pages only clears it. If a new extent has no page the transaction
may take (all locked by others), another extent is added.

``free_page(pid)`` logs ``free_pages_in_ext`` (undone by allocating the page
again) and, unless the caller defers it, frees the extent when its last
page goes.

**Buckets.** Each extlink has a 4-bit advisory free-space bucket per page,
for the file manager's free-space histogram. ``set_page_bucket`` changes it
without logging (the extent-map page is fixed EX and dirtied, no entry):
Shore's pbucketmap, "costly in that it fixes and dirties extent-map pages,
even though it does not log these updates".

**Large records.** Before the pages of a large record's body are allocated
(:mod:`minidb.pagestore.files.lgrec`), ``reserve_pages(stid, count)`` makes
sure the store has ``count`` reserved pages: as Shore, which allocates large
objects a list of extents at a time, it links as many new extents as are
missing in one go (one ``create_ext_list`` per extent-map page). The pages
are then taken one by one the ``COMPACT`` way, lowest first, so the pages of
one extent come as contiguous runs (the chunks of
:mod:`minidb.pagestore.pages.rectag`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import Enum
from typing import Any

from minidb import impl
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import ExtentId, PageId, StoreId, extent_of, index_in_extent
from minidb.pagestore.volume.extmap import ExtlinkPage
from minidb.pagestore.volume.volcaches import SortedExtents
from minidb.pagestore.wal.logdef import ALLOC_PAGES_IN_EXT, FREE_PAGES_IN_EXT
from minidb.pagestore.wal.logrec import LogContext


class AllocMode(Enum):
    APPEND = "append"
    COMPACT = "compact"


def pages_to_try(mode: str, pmap: int, ext_sz: int) -> list[int]:
    """The indexes of the pages of an extent (page map ``pmap``, bit i: page i allocated) that an
    allocation in ``mode`` ("append" or "compact") may take, in the order it tries them.

    Appending takes only pages after the extent's highest allocated page (a
    hole below it stays a hole: the store's pages keep their allocation
    order); compacting takes any reserved page, lowest first.
    """
    if mode == AllocMode.APPEND.value:
        return list(range(pmap.bit_length(), ext_sz))
    return [i for i in range(ext_sz) if not pmap >> i & 1]


def _pages_from_exercise(hook: impl.Hook, student: Callable[..., Any]) -> Callable[[str, int, int], list[int]]:
    """A student's ``pages_to_try`` (exercise 03a), checked for form: distinct pages of the extent that are
    not allocated."""
    def pages(mode: str, pmap: int, ext_sz: int) -> list[int]:
        answer = student(mode, pmap, ext_sz)
        if not isinstance(answer, list) or not all(isinstance(i, int) and 0 <= i < ext_sz for i in answer):
            raise hook.wrong(f"returned {answer!r}, not a list of page indexes from 0 to {ext_sz - 1}")
        taken = [i for i in answer if pmap >> i & 1]
        if taken or len(set(answer)) != len(answer):
            raise hook.wrong(f"returned {answer!r}: " + (f"page {taken[0]} is allocated" if taken else "a page twice"))
        return answer
    return pages


#: where :meth:`PageAllocation._free_for` asks :func:`pages_to_try` (exercise 03a's hook)
PAGES_TO_TRY = impl.register("03a_extent_alloc", "pages_to_try", pages_to_try, _pages_from_exercise)


class PageAllocation:
    vid: int
    header: Any
    ext_sz: int
    bp: Any
    stats: Any
    trace: Any
    use_caches: bool
    is_page_held: Callable[[int, Any], bool] | None
    alloc_locks: Any
    _mutex: Any

    def alloc_page(self, stid: StoreId, mode: AllocMode = AllocMode.COMPACT,
                   xct: LogContext | None = None) -> PageId:
        """Allocate one page to the store (see the module documentation for the modes)."""
        locks = self.alloc_locks
        if locks is not None:
            locks.store(xct, stid)  # before the mutex: this one may wait
        with self._mutex:
            self._check_store(stid)
            snum = stid.store
            found = self._append_position(snum, xct) if mode == AllocMode.APPEND else self._reserved_page(snum, xct)
            while found is None:
                ext = self._grow(snum, xct)
                found = self._free_for(snum, ext, 0, mode, xct)
            ext, index, pmap = found
            self._update(self._extmap_pid(ext), ALLOC_PAGES_IN_EXT,
                         {"snum": snum, "ext": ext, "pmap": 1 << index}, xct)
            if locks is not None:
                locks.mark(xct, ExtentId(self.vid, ext), True)
            if snum in self._reserved_cache and pmap | 1 << index == (1 << self.ext_sz) - 1:
                self._reserved_cache[snum].discard(ext)  # the extent is full now
            self.stats.add("nPagesAllocated")
            pid = PageId(self.vid, snum, ext * self.ext_sz + index)
            self.trace.emit("allocated %s (%s)", pid, mode.value)
            return pid

    def _free_for(self, snum: int, ext: int, pmap: int, mode: AllocMode, xct: Any) -> tuple[int, int, int] | None:
        """(extent, page index, pmap) of the first page of :func:`pages_to_try` that ``xct`` may allocate:
        not held by an active freer, and (with ``alloc_locks``) in an extent ``xct`` could lock IX and not
        locked by another transaction; None if none."""
        indexes = PAGES_TO_TRY.call(mode.value, pmap, self.ext_sz)
        locks = self.alloc_locks
        if locks is not None and indexes and not locks.reserved_extent(xct, ExtentId(self.vid, ext)):
            return None  # as Shore: the extent is locked first, then a page in it is looked for
        held = self.is_page_held
        indexes = [i for i in indexes if held is None or not held(ext * self.ext_sz + i, xct)]
        if locks is None:
            return (ext, indexes[0], pmap) if indexes else None
        for i in indexes:
            if locks.page(xct, PageId(self.vid, snum, ext * self.ext_sz + i)):
                return ext, i, pmap
        self.trace.emit("skipped %s: its reserved pages are held by active transactions", ExtentId(self.vid, ext))
        return None

    def _append_position(self, snum: int, xct: Any = None) -> tuple[int, int, int] | None:
        """(extent, page index, its pmap) after the last allocated page of the last extent."""
        last, link = self._last_extent(snum)
        return self._free_for(snum, last, link.pmap, AllocMode.APPEND, xct)

    def _reserved_page(self, snum: int, xct: Any = None) -> tuple[int, int, int] | None:
        """(extent, page index, its pmap) of the lowest reserved page of the lowest such extent."""
        if self.use_caches:
            cached = self._reserved_cache.get(snum)
            if cached is not None:
                self.stats.add("nReservedCacheHits")
                for ext in cached:
                    link = self.extlink(ext)
                    if link.owner != snum or not link.reserved(self.ext_sz):
                        cached.discard(ext)  # stale: verify before use, as Shore does
                        continue
                    found = self._free_for(snum, ext, link.pmap, AllocMode.COMPACT, xct)
                    if found is not None:
                        return found
                return None
            self.stats.add("nReservedCacheMisses")
        with_reserved = self._search_reserved(snum)
        if self.use_caches:
            self._reserved_cache[snum] = SortedExtents(with_reserved)
        for ext in sorted(with_reserved):
            found = self._free_for(snum, ext, self.extlink(ext).pmap, AllocMode.COMPACT, xct)
            if found is not None:
                return found
        return None

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
            if self.alloc_locks is not None:
                self.alloc_locks.mark(xct, ExtentId(self.vid, ext), link.pmap != 1 << index)
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

    def reserve_pages(self, stid: StoreId, count: int, xct: LogContext | None = None) -> None:
        """Make sure the store has ``count`` reserved pages ``xct`` may take: new extents linked as one list."""
        with self._mutex:
            self._check_store(stid)
            held = self.is_page_held
            reserved = sum(1 for ext in self._walk(stid.store, self.store_node(stid.store).first_ext)
                           for i in self.extlink(ext).reserved(self.ext_sz)
                           if held is None or not held(ext * self.ext_sz + i, xct))
            if count > reserved:
                self._grow(stid.store, xct, -(-(count - reserved) // self.ext_sz))
