"""Reading the extent and store maps (a part of :class:`~minidb.pagestore.volume.volume.Volume`).

Every read fixes the map page SH, copies what it needs and unfixes it: a
reader never holds a map page while it fixes another. Only the extent map
can tell whether a page is allocated, and to which store (Shore: "one cannot
determine the allocation status of a page from the page itself").

Every map page read is checked against the layout the volume header plans
(its header names it, slot 0 holds the planned range, every extlink and
store node is in range): maps that contradict themselves are a
:class:`~minidb.pagestore.errors.VolumeCorruptionError` naming the page,
never a user error, whatever request met them.

- ``extlink(e)``, ``extlinks()``: one extent's entry, or all of them;
- ``store_node(s)``, ``stores()``, ``store_nodes()``: one store node, every store in use, or both (a
  loop over the stores reads each map page once, not once a store);
- ``store_extents(st)``: the store's extent list, walked from its store node
  (a broken list is a :class:`VolumeCorruptionError` naming the extent);
- ``owned_extents(s)``: every extent whose owner is store ``s``, by a scan of
  the extent map, whether or not the list reaches it (what removing a store
  frees, and what the repair after a crash compares with the list); ``extents_by_owner()``, the same
  for every store from one scan;
- ``store_pages(st)``, ``is_allocated(pid)``, ``page_allocation(pid)`` (allocated, and its bucket:
  what every record insert asks of its page).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeVar

from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.errors import BadRequestError, SlotError, VolumeCorruptionError
from minidb.pagestore.ids import PageId, StoreId, extent_of, index_in_extent
from minidb.pagestore.pages.page import PageTag
from minidb.pagestore.volume.extmap import Extlink, ExtlinkPage
from minidb.pagestore.volume.stores import Deleting, StnodePage, StoreNode

T = TypeVar("T")



class VolumeMaps:
    vid: int
    header: Any
    bp: Any
    ext_sz: int
    file: Any
    _map_layouts: dict[int, tuple]
    use_caches: bool

    def _extmap_pid(self, ext: int) -> PageId:
        return PageId(self.vid, 0, self.header.extmap_page(ext))

    def _stmap_pid(self, snum: int) -> PageId:
        return PageId(self.vid, 0, self.header.stmap_page(snum))

    def _read_map(self, number: int, read: Callable[[Any], T]) -> T:
        """Fix map page ``number`` SH, check that it is the page the header plans, return ``read(view)``.

        A map page that is not what it must be (another page's header, no
        slot 0, another range of extents or stores, values out of range) is
        a :class:`VolumeCorruptionError` naming the page, never a user error.
        """
        layout = self._map_layouts.get(number)
        if layout is None:
            layout = self._map_layouts[number] = self._map_layout(number)
        pid, extmap, kind, tag, expected = layout
        page = self.bp.fix(pid, SH)
        try:
            if page.buf[28] != tag or page.pid != pid:
                raise ValueError(f"its header names {page.pid} with tag {page.buf[28]}")
            view = kind(page)
            first = view.first_ext if extmap else view.first_store
            if (first, view.per_page) != expected:
                raise ValueError(f"it describes {view.per_page} entries from {first}")
            return read(view)
        except (SlotError, ValueError, struct.error) as e:
            what = "extent-map" if extmap else "store-map"
            raise VolumeCorruptionError(f"{self.file.where(number)} ({pid}): damaged {what} page: {e}") from None
        finally:
            self.bp.unfix(page)  # type: ignore[arg-type]

    def _map_layout(self, number: int) -> tuple[PageId, bool, type, PageTag, tuple[int, int]]:
        """What map page ``number`` must be, from the header (which never changes once mounted): its page
        id, whether it is an extent-map page, its view and tag, and (first entry, entries per page).
        A function of the header alone, so :meth:`_read_map` works it out once per page (``_map_layouts``)."""
        h = self.header
        extmap = number in h.extmap_pages()
        kind, tag, per_page, first_page = ((ExtlinkPage, PageTag.EXTLINK, h.extlinks_per_page, h.first_extmap_page)
                                           if extmap else
                                           (StnodePage, PageTag.STNODE, h.stnodes_per_page, h.first_stmap_page))
        return PageId(self.vid, 0, number), extmap, kind, tag, ((number - first_page) * per_page, per_page)

    def _checked_link(self, ext: int, link: Extlink) -> Extlink:
        h = self.header
        if (link.owner >= h.num_stores or link.next >= h.num_exts or link.prev >= h.num_exts
                or link.pmap >> self.ext_sz):
            raise ValueError(f"x({self.vid}.{ext}) is out of range: {link}")
        return link

    def extlink(self, ext: int) -> Extlink:
        self._check_ext(ext)
        return self._read_map(self.header.extmap_page(ext), lambda view: self._checked_link(ext, view.get(ext)))

    def extlinks(self) -> list[Extlink]:
        """Every extent's extlink, extent 0 first."""
        links: list[Extlink] = []
        for number in self.header.extmap_pages():
            def read(view: ExtlinkPage) -> list[Extlink]:
                last = min(view.first_ext + view.per_page, self.header.num_exts)
                return [self._checked_link(ext, view.get(ext)) for ext in range(view.first_ext, last)]
            links += self._read_map(number, read)
        return links

    def _checked_node(self, snum: int, node: StoreNode) -> StoreNode:
        if node.first_ext >= self.header.num_exts or node.deleting not in Deleting.__members__.values():
            raise ValueError(f"store node {snum} is out of range: {node}")
        return node

    def store_node(self, snum: int) -> StoreNode:
        if not 0 <= snum < self.header.num_stores:
            raise BadRequestError(f"v({self.vid}): store {snum} is outside 0..{self.header.num_stores - 1}")
        return self._read_map(self.header.stmap_page(snum), lambda view: self._checked_node(snum, view.get(snum)))

    def stores(self) -> list[StoreId]:
        """Every store in use (1 and 2 included), by number."""
        return list(self.store_nodes())

    def store_nodes(self) -> dict[StoreId, StoreNode]:
        """Every store in use (1 and 2 included) and its node, by number, from one read of each store-map
        page: what a loop over the stores asks (not :meth:`store_node` per store, a read of its page each)."""
        found: dict[StoreId, StoreNode] = {}
        for number in self.header.stmap_pages():
            def read(view: StnodePage) -> list[tuple[StoreId, StoreNode]]:
                last = min(view.first_store + view.per_page, self.header.num_stores)
                nodes = [(s, self._checked_node(s, view.get(s))) for s in range(max(1, view.first_store), last)]
                return [(self.stid(s), node) for s, node in nodes if node.in_use]
            found.update(self._read_map(number, read))
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
                raise VolumeCorruptionError(f"{self.file.where()}: s({self.vid}.{snum}): broken extent list at "
                                            f"x({self.vid}.{ext}) (owned by store {link.owner})")
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

    def page_allocation(self, pid: PageId) -> tuple[bool, int]:
        """(:meth:`is_allocated`, the page's advisory free-space bucket), from one read of its extlink:
        a record insert asks both of the page it found."""
        self._check_page_number(pid.page)
        link = self.extlink(extent_of(pid.page, self.ext_sz))
        index = index_in_extent(pid.page, self.ext_sz)
        return link.owner == pid.store and link.is_allocated(index), link.bucket(index)

    def owned_extents(self, snum: int) -> list[int]:
        """Every extent owned by store ``snum``, by extent number (a scan of the extent map)."""
        return self.extents_by_owner().get(snum, [])

    def extents_by_owner(self, links: list[Extlink] | None = None) -> dict[int, list[int]]:
        """Store number -> every extent it owns, by extent number, from one scan of the extent map (or of
        ``links``, every extlink as :meth:`extlinks` read them; free extents and store 0's are left out):
        what a loop over the stores asks."""
        owned: dict[int, list[int]] = {}
        for ext, link in enumerate(self.extlinks() if links is None else links):
            if link.owner and ext >= self.header.first_data_ext:
                owned.setdefault(link.owner, []).append(ext)
        return owned

    def _walk_owned(self, snum: int, links: list[Extlink], first_ext: int) -> list[int]:
        """The list from ``first_ext`` in ``links`` (every extlink, as :meth:`extlinks` read them), stopping
        (without complaint) at an extent the store does not own."""
        exts, ext = [], first_ext
        while ext and ext not in exts and len(exts) <= self.header.num_exts:
            link = links[ext]
            if link.owner != snum:
                break
            exts.append(ext)
            ext = link.next
        return exts
