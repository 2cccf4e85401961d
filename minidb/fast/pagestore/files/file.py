"""The file manager, remembering what every record insert asks again: the file's descriptor and whether
its page is still allocated.

The reference (:class:`minidb.pagestore.files.file.FileManager`) asks the
store directory for the file's descriptor at every insert (a lookup in
store 1, a B+tree: as much work as the insert's own page) and reads the
page's extlink from the extent map (a fix of the map page and its checks).
The answers rarely change, so this twin keeps them:

- *Descriptors* (``_infos``, by store number). A FILE descriptor never
  changes while its directory entry exists; the entry goes only by
  :meth:`destroy_file` (which forgets it) or by a rollback of the file's
  creation. Every rollback, partial or total, restart's losers included,
  moves ``XctManager.rollbacks``, and the cache is emptied when it moved. A
  descriptor read while either happens is not kept: the epoch (files
  destroyed, rollbacks) taken before the read must still hold after it.
- *Allocations* (``_known``, by page number: store, bucket, and the count
  of :class:`~minidb.pagestore.volume.extmap.ExtlinkWrites` taken before
  the read). Every change of an extlink (owner, list links, page bitmap),
  forward, in a rollback or at restart, is counted, so an answer is used
  only while the count has not moved and names the same store. The
  advisory bucket is not counted; this file manager is the only one that
  sets a page's bucket (:meth:`_note_space`) and keeps its answer up to
  date then. Only pages found allocated are remembered.

The insert into a page it tried (``_takes_records``, ``_insert``) also
skips a few Python steps of the reference that cost as much as they read:
the page's tag compared as its header byte rather than decoded into a
``PageTag`` member (an Enum call), the record id built with
``tuple.__new__`` (the page id's fields are already checked), and the space
user set for the ``rec_insert`` handler with the context variable's own
``set``/``reset`` rather than through ``acting_for``'s three calls. The
entry logged is the same (:func:`~minidb.pagestore.files.recops.insert`'s).

Nothing survives a crash: both are in memory, and restart builds a new file
manager. The answers are the reference's, so the log and the volume get the
same bytes as long as the buffer pool holds every page in use; what differs
is how many times it fixes the map and directory pages (its hit counters),
and in a smaller pool which page it evicts and writes when (so also which
page, changed again after its write, logs a full image), as with any other
order of reads.
"""

from __future__ import annotations

import threading
from typing import Any

from minidb.pagestore.files import file as reference
from minidb.pagestore.files.histogram import Histoid
from minidb.pagestore.files.recpage import ACTING
from minidb.pagestore.files.sinfo import SInfo
from minidb.pagestore.ids import PageId, RecordId, StoreId
from minidb.pagestore.pages.page import PageTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.volume.extmap import ExtlinkWrites
from minidb.pagestore.wal.logdef import REC_INSERT
from minidb.pagestore.wal.logrec import APPLY_AND_LOG

_TAG_AT, _FILE = 28, int(PageTag.FILE)  # the page header's tag byte (pages.page draws the header)
_new_tuple = tuple.__new__  # a RecordId from numbers already checked, without its Python-level __new__


class FileManager(reference.FileManager):
    def __init__(self, volume: Any, xcts: Any, *args: Any, **kwargs: Any):
        super().__init__(volume, xcts, *args, **kwargs)
        self._infos: dict[int, SInfo] = {}
        self._infos_epoch = (0, xcts.rollbacks)  # (files destroyed, rollbacks) when _infos was last valid
        self._known: dict[int, tuple[int, int, int]] = {}  # page -> (store, bucket, ExtlinkWrites.count)
        self._cache_mutex = threading.Lock()

    # -- descriptors -------------------------------------------------------------------------------
    def file_info(self, fid: StoreId) -> SInfo:
        self._check_fid(fid)
        with self._cache_mutex:
            epoch = self._current_epoch()
            info = self._infos.get(fid.store)
        if info is None:
            info = super().file_info(fid)
            with self._cache_mutex:
                if self._current_epoch() == epoch:
                    self._infos[fid.store] = info
        return info

    def _current_epoch(self) -> tuple[int, int]:
        """The cache's epoch, emptying the cache if a rollback ended since it was filled (caller holds the
        mutex)."""
        destroyed, rollbacks = self._infos_epoch
        if rollbacks != self.xcts.rollbacks:
            self._infos.clear()
            self._infos_epoch = (destroyed, self.xcts.rollbacks)
        return self._infos_epoch

    def destroy_file(self, xct: Any, fid: StoreId) -> None:
        try:
            super().destroy_file(xct, fid)
        finally:  # gone or not, a descriptor read meanwhile is not kept
            with self._cache_mutex:
                self._infos.pop(fid.store, None)
                destroyed, rollbacks = self._infos_epoch
                self._infos_epoch = (destroyed + 1, rollbacks)

    # -- the page an insert tries -------------------------------------------------------------------
    def _takes_records(self, page: SlottedPage, fid: StoreId, pid: PageId) -> tuple[bool, int]:
        if page.buf[_TAG_AT] != _FILE or page.store != fid.store:  # the tag's byte: no Enum call
            return False, 0
        return self.page_allocation(pid)

    def _insert(self, xct: Any, pid: PageId, page: SlottedPage, slot_bytes: bytes) -> RecordId | None:
        user = xct.space_user()
        plan = page.plan_insert(len(slot_bytes), user)
        rid = _new_tuple(RecordId, (pid.vol, pid.store, pid.page, plan.slot))  # pid.record(plan.slot)
        if not self.xcts.try_lock(xct, rid, "EX"):
            return None
        token = ACTING.set((user, plan))  # recops.insert's acting_for, without a context manager's calls
        try:
            APPLY_AND_LOG.call(self.volume.log, page, REC_INSERT, {"slot": plan.slot, "data": slot_bytes}, xct)
        finally:
            ACTING.reset(token)
        return rid

    # -- allocations -------------------------------------------------------------------------------
    def page_allocation(self, pid: PageId) -> tuple[bool, int]:
        if not self.volume.use_caches:
            return super().page_allocation(pid)
        known = self._known.get(pid.page)
        if known is not None and known[2] == ExtlinkWrites.count and known[0] == pid.store:
            return True, known[1]
        count = ExtlinkWrites.count  # before the read: a write during it leaves the entry unused
        allocated, bucket = super().page_allocation(pid)
        if allocated:
            self._known[pid.page] = (pid.store, bucket, count)
        return allocated, bucket

    def _note_space(self, fid: StoreId, pid: PageId, hist: Histoid, free: int, old: int | None = None) -> int:
        bucket = super()._note_space(fid, pid, hist, free, old)
        known = self._known.get(pid.page)
        if known is not None:
            self._known[pid.page] = (known[0], bucket, known[2])
        return bucket
