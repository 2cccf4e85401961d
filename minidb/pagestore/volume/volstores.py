"""The life of a store: create, mark for deletion, remove (a part of :class:`~minidb.pagestore.volume.volume.Volume`).

**Creating a store** finds an unused store number (a linear search of the
store map from a revolving position) and a free extent, then logs three
entries: ``store_operation create_store`` (the number is now legitimate,
still without extents), ``create_ext_list`` (the extent is the store's) and
``store_operation set_first_ext``. A store always owns at least one extent.

**Destroying a store** is two steps, as in Shore. Before commit the
transaction only *marks* it: ``set_deleting`` DELETING (undone if the
transaction rolls back). When the transaction commits (in its "freeing
space" state) it *removes* it: ``set_deleting`` FREEING_EXTS, one
``free_ext_list`` per extent-map page holding the store's extents,
``delete_store``. Stores 1 (directory) and 2 (root index) are made by
formatting and cannot be destroyed.

Removing is *idempotent*: the extents freed are those the extent map says
the store owns (a scan, not a walk of the list), so a removal cut short by a
crash is finished by doing it again, and an extent given to the store by a
creation cut short (``create_ext_list`` logged, ``set_first_ext`` not) is
found and freed too. Restart relies on this: it removes every store still
marked for deletion once the losers are rolled back.

Worked example (64 pages of 512 bytes, ``ext_sz`` 4): ``create_store()``
returns ``s(1.3)`` with extent ``x(1.3)``; after ``destroy_store(s(1.3))``
its node reads ``deleting`` = DELETING; ``remove_store(s(1.3))`` logs
``set_deleting`` FREEING_EXTS, ``free_ext_list`` [3], ``delete_store`` and
returns ``[3]``.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.errors import BadRequestError, VolumeFullError
from minidb.pagestore.ids import ExtentId, PageId, StoreId
from minidb.pagestore.pages.page import StoreFlags
from minidb.pagestore.volume.stores import FIRST_USER_STORE, Deleting
from minidb.pagestore.volume.volcaches import SortedExtents
from minidb.pagestore.volume.volextents import by_page
from minidb.pagestore.wal.logdef import FREE_EXT_LIST
from minidb.pagestore.wal.logrec import LogContext


class StoreLifecycle:
    vid: int
    header: Any
    bp: Any
    stats: Any
    trace: Any
    _mutex: Any

    def create_store(self, flags: StoreFlags = StoreFlags.REGULAR, xct: LogContext | None = None) -> StoreId:
        """A new store with one extent (see the module documentation)."""
        with self._mutex:
            if not flags:
                raise BadRequestError("a store needs store flags (e.g. StoreFlags.REGULAR)")
            snum = self._find_unused_store()
            ext = self._find_free_extents(1, xct)[0]
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
            exts = self.owned_extents(stid.store)
            if node.deleting != Deleting.FREEING_EXTS:
                self._store_op(stid.store, "set_deleting", Deleting.FREEING_EXTS, node.deleting, xct)
            for page_number, group in by_page(exts, self.header):
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

    def stores_marked_for_deletion(self) -> list[StoreId]:
        """The stores whose node says DELETING or FREEING_EXTS (what restart searches for)."""
        return [stid for stid, node in self.store_nodes().items() if node.deleting != Deleting.NOT_DELETING]
