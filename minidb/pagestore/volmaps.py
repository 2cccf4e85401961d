"""Reading the extent and store maps (a part of :class:`~minidb.pagestore.volume.Volume`).

Every read fixes the map page SH, copies what it needs and unfixes it: a
reader never holds a map page while it fixes another. Only the extent map
can tell whether a page is allocated, and to which store (Shore: "one cannot
determine the allocation status of a page from the page itself").

- ``extlink(e)``, ``extlinks()``: one extent's entry, or all of them;
- ``store_node(s)``, ``stores()``: one store node, or every store in use;
- ``store_extents(st)``: the store's extent list, walked from its store node
  (a broken list is a :class:`PageStoreError` naming the extent);
- ``owned_extents(s)``: every extent whose owner is store ``s``, by a scan of
  the extent map, whether or not the list reaches it (what removing a store
  frees, and what the repair after a crash compares with the list);
- ``store_pages(st)``, ``is_allocated(pid)``.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import BadRequestError, PageStoreError
from minidb.pagestore.extmap import ExtlinkPage, Extlink
from minidb.pagestore.ids import PageId, StoreId, extent_of, index_in_extent
from minidb.pagestore.latch import SH
from minidb.pagestore.stores import StnodePage, StoreNode


class VolumeMaps:
    vid: int
    header: Any
    bp: Any
    ext_sz: int

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

    def owned_extents(self, snum: int) -> list[int]:
        """Every extent owned by store ``snum``, by extent number (a scan of the extent map)."""
        return [ext for ext, link in enumerate(self.extlinks())
                if link.owner == snum and ext >= self.header.first_data_ext]

    def _walk_owned(self, snum: int, first_ext: int) -> list[int]:
        """The list from ``first_ext``, stopping (without complaint) at an extent the store does not own."""
        exts, ext = [], first_ext
        while ext and ext not in exts and len(exts) <= self.header.num_exts:
            link = self.extlink(ext)
            if link.owner != snum:
                break
            exts.append(ext)
            ext = link.next
        return exts
