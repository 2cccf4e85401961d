"""Files of records (Shore's ``file_m``): records created, read, updated and freed by record id.

A **file** is a group of variable-sized records, and it is made of two
stores: the *small-record store* of slotted file pages (``file_p``), which
holds every record's slot, and the *large-record store* of ``lgdata_p``
pages, which holds the bodies of large records. The file's id is its
small-record store's id; the store directory (:mod:`minidb.pagestore.directory`,
which the storage manager gives the file manager) records which store holds its large records. Store order is file order:
a sequential scan returns the records in the physical order of the
small-record store (extent list, page, slot).

Records (:mod:`minidb.pagestore.pages.rectag`) have a user header and a body.
A body of at most ``max_small_rec`` bytes that fits a page is *small*, in
its slot; a larger one is *large*: its slot holds the header and where its
data pages are, as chunks (LARGE_0) or through one or two levels of index
pages (LARGE_1, LARGE_2), see :mod:`minidb.pagestore.files.lgrec`; a record
changes shape as it grows and shrinks. Users never update records in the
buffer pool: they copy out
(:meth:`FileManager.read_rec`), change, and hand back
(:meth:`update_rec`, :meth:`append_rec`, :meth:`truncate_rec`, in
:mod:`minidb.pagestore.files.recupdate`).

Every update follows the protocol **lock, fix EX, apply, log, unfix dirty**
(:mod:`minidb.pagestore.transactions.locking`, :mod:`minidb.pagestore.files.recops`): a record
lock EX (SH to read), the page fixed EX, one logged entry per page changed,
each carrying its redo and undo information.

**Creating a record** needs a page with space (:mod:`minidb.pagestore.files.histogram`).
The *policies* say where to look, in this order:

- ``CACHE``: pages of the file's heap with enough free space, smallest first;
- ``COMPACT``: if the histogram says some page of the file has enough, a
  linear search of the file's pages whose advisory bucket is high enough;
- ``APPEND``: the last page of the file.

If none has room, a page is allocated (at the end of the file with
``APPEND``) and formatted. Each candidate is fixed *conditionally* (a busy
page is passed over), checked to be an allocated file page of the file
with room usable by this transaction (space reservation), and its slot is
locked with an immediate timeout (waiting for a lock while holding a latch
could deadlock). The default is ``CACHE | COMPACT | APPEND``; appending a
file uses ``APPEND`` alone.

**Freeing a record** frees its slot (the slot and its bytes stay reserved for
the transaction until it ends), frees its data and index pages if it is large, and
frees its page if that was the page's last record, unless it is the file's
first page. Pages and extents are freed the transactional way: extents at
commit (:mod:`minidb.pagestore.transactions.freespace`).

**Store properties.** A file is REGULAR (fully logged), TMP, LOAD or INSERT
(:mod:`minidb.pagestore.files.storeprops`): given to ``create_file``, held by
both stores, copied into each page's header when it is formatted.

**Destroying a file** marks both stores for deletion and removes its
directory entry; the stores go when the transaction commits.

Record ids are verified at every use (:mod:`minidb.pagestore.files.ridcheck`).

Worked example (512-byte pages, ``ext_sz`` 4): ``create_file(t)`` makes
``s(1.3)`` and ``s(1.4)``, formats page 12 as the file's first page;
``create_rec(t, s(1.3), b"alpha")`` returns ``r(1.3.12.0)``; a 1000-byte
body goes to three contiguous pages of ``s(1.4)``, and its slot,
``r(1.3.12.1)``, holds one chunk: (first page, 3).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from enum import IntFlag
from typing import Any, TypeVar

from minidb import impl
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import BadRequestError, RecordWontFitError
from minidb.pagestore.files import recops
from minidb.pagestore.files.histogram import NUM_BUCKETS, Histoid, bucket_needed
from minidb.pagestore.files.lgrec import SMALL_LAYOUT
from minidb.pagestore.files.recupdate import RecordUpdates, require_bytes
from minidb.pagestore.files.ridcheck import check_rid_bounds, verify_rid
from minidb.pagestore.files.sinfo import LockProtocol, SInfo, StoreKind
from minidb.pagestore.files.storeprops import StoreProperties
from minidb.pagestore.ids import ExtentId, PageId, RecordId, StoreId, extent_of
from minidb.pagestore.pages.page import SLOT_SIZE, PageTag, StoreFlags, lost_page
from minidb.pagestore.pages.rectag import PAGE_REF, TAG_SIZE, Record, RecTag, chunk_size, small_slot, split_slot
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.pages.storeprop import StoreProperty
from minidb.pagestore.volume.volpages import AllocMode
from minidb.stats import Stats, Trace

T = TypeVar("T")

class Policy(IntFlag):
    """Where to look for a page with room for a new record (Shore's pg_policy_t)."""

    CACHE = 1
    COMPACT = 2
    APPEND = 4
    DEFAULT = 7


# What create_rec counts, by where _place put the record.
_CREATED = ("nRecsCreated",)
_COUNTED = {"cache": ("nRecsCreated", "nCacheHits"), "compact": ("nRecsCreated", "nCompactHits"),
            "append": ("nRecsCreated", "nAppendHits")}

STAT_NAMES = ["nFilesCreated", "nFilesDestroyed", "nRecsCreated", "nLargeRecsCreated", "nRecsRead",
              "nRecsUpdated", "nRecsFreed", "nCacheHits", "nCompactSearches", "nCompactHits", "nAppendHits",
              "nFilePagesAllocated", "nFilePagesFreed", "nLargePagesAllocated", "nPagesRejected"]


class FileManager(RecordUpdates, StoreProperties):
    """The files of records of one volume (see the module documentation)."""

    def __init__(self, volume: Any, xcts: Any, max_small_rec: int | None = None, trace: bool = False,
                 index_fanout: int | None = None, *, directory: Any):
        self.volume = volume
        self.bp = volume.bp
        self.xcts = xcts
        self.page_size = volume.header.page_size
        self.chunk_size = chunk_size(self.page_size)
        self.max_small_rec = self.page_size // 4 if max_small_rec is None else max_small_rec
        most = self.chunk_size // PAGE_REF.size
        self.index_fanout = most if index_fanout is None else index_fanout
        if not 2 <= self.index_fanout <= most:
            raise BadRequestError(f"index_fanout {index_fanout}: an index page of {self.page_size}-byte pages "
                                  f"lists 2 to {most} pages")
        self.directory = directory  # store 1 (:class:`~minidb.pagestore.directory.StoreDirectory`)
        self.stats = Stats("file", STAT_NAMES)
        self.trace = Trace(enabled=trace)
        self._histoids: dict[int, Histoid] = {}
        self._first_page: dict[int, int] = {}
        self._last_page: dict[int, int] = {}
        self._mutex = threading.Lock()

    # -- files ----------------------------------------------------------------------------------
    def create_file(self, xct: Any, property: StoreProperty | str = StoreProperty.REGULAR) -> StoreId:
        """A new, empty file: two stores with the store ``property``, a first page, a directory entry."""
        prop = StoreProperty.parse(property)
        self.xcts.check_active(xct)
        with self._atomic(xct):
            small = self.volume.create_store(prop.flags, xct)
            self.xcts.lock(xct, small, "EX")
            large = self.volume.create_store(prop.flags, xct)
            self.xcts.lock(xct, large, "EX")
            if prop == StoreProperty.LOAD:
                self.xcts.note_loading(xct, small)
                self.xcts.note_loading(xct, large)
            xct.created_tmp |= prop == StoreProperty.TMP
            self._reset_caches(small.store)
            pid, _ = self._new_page(xct, small, AllocMode.APPEND, PageTag.FILE)
            with self._mutex:
                self._first_page[small.store] = self._last_page[small.store] = pid.page
            self.directory.add(xct, SInfo(small.store, StoreKind.FILE, large.store, cc=LockProtocol.RECORD))
        self.stats.add("nFilesCreated")
        self.trace.emit("T%d created %s file %s (large records in %s), first page %s", xct.txn_id, prop.name, small,
                        large, pid)
        return small

    def destroy_file(self, xct: Any, fid: StoreId) -> None:
        """Mark the file's two stores for deletion at commit and drop its directory entry."""
        self.xcts.check_active(xct)
        self._check_fid(fid)
        self.xcts.lock(xct, fid, "EX")
        info = self.file_info(fid)
        large = StoreId(fid.vol, info.large)
        self.xcts.lock(xct, large, "EX")
        with self._atomic(xct):
            for stid in (fid, large):
                self.volume.destroy_store(stid, xct)
                self.xcts.note_store_destroyed(xct, stid)
            self.directory.remove(xct, fid.store)
        self._reset_caches(fid.store)
        self.stats.add("nFilesDestroyed")
        self.trace.emit("T%d destroyed file %s: its stores go at commit", xct.txn_id, fid)

    def _check_fid(self, fid: StoreId) -> None:
        if not isinstance(fid, StoreId) or fid.vol != self.volume.vid:
            raise BadRequestError(f"{fid!r} is not a store of volume v({self.volume.vid})")

    def file_info(self, fid: StoreId) -> SInfo:
        """The directory entry of file ``fid`` (a clear error if it is not a file): every record insert
        reads it, for the file's large-record store."""
        self._check_fid(fid)
        info = self.directory.get(fid.store)
        if info is None or info.kind != StoreKind.FILE:
            raise BadRequestError(f"{fid} is not a file")
        return info

    def files(self) -> list[StoreId]:
        """Every file of the volume, by store number."""
        return sorted(StoreId(self.volume.vid, info.snum) for _, info in self.directory.entries()
                      if info.kind == StoreKind.FILE)

    def _reset_caches(self, snum: int) -> None:
        with self._mutex:
            self._histoids.pop(snum, None)
            self._first_page.pop(snum, None)
            self._last_page.pop(snum, None)

    # -- reading ------------------------------------------------------------------------------
    def read_rec(self, xct: Any, rid: RecordId) -> Record:
        """Copy the record out (header and whole body), SH-locked."""
        self.xcts.check_active(xct)
        check_rid_bounds(self.volume, rid)
        self.xcts.lock(xct, rid, "SH")
        page = self.bp.fix(rid.pid, SH)
        try:
            verify_rid(self.volume, page, rid)
            data = page.read(rid.slot)
        finally:
            self.bp.unfix(page)
        self.stats.add("nRecsRead")
        return self._record(rid, data)

    def _record(self, rid: RecordId, data: bytes) -> Record:
        tag, hdr, rest = split_slot(data, rid)
        if tag.is_small:
            return Record(rid, hdr, rest, tag.flags)
        large = self._large_store(rid)
        pages = self._layout(large, tag, rest, rid).pages
        return Record(rid, hdr, self._read_body(large, pages, tag.body_len, rid), tag.flags)

    def scan(self, xct: Any, fid: StoreId) -> Iterator[Record]:
        """Every record of the file in physical order (the file SH-locked)."""
        self.xcts.check_active(xct)
        self._check_fid(fid)
        self.xcts.lock(xct, fid, "SH")
        self.file_info(fid)
        for pid in self.volume.store_pages(fid):
            page = self.bp.fix(pid, SH)
            try:
                if page.never_written():
                    raise lost_page(page, pid, f"a page of file {fid}")
                if page.tag != PageTag.FILE or page.pid.store != fid.store:
                    continue
                slots = page.records()
            finally:
                self.bp.unfix(page)
            for slot, data in slots:
                yield self._record(pid.record(slot), data)

    # -- creating ---------------------------------------------------------------------------------
    def create_rec(self, xct: Any, fid: StoreId, body: bytes, hdr: bytes = b"",
                   policy: Policy = Policy.DEFAULT) -> RecordId:
        """A new record in file ``fid``; return its id."""
        self.xcts.check_active(xct)
        self._check_fid(fid)
        if type(body) is not bytes or type(hdr) is not bytes:  # (bytes are returned as they are)
            body, hdr = require_bytes(body, "a record body", fid), require_bytes(hdr, "a record header", fid)
        self.xcts.lock(xct, fid, "IX")
        info = self.file_info(fid)
        self._check_loader(xct, fid)
        if len(hdr) > 0xFFFF:
            raise RecordWontFitError(f"{fid}: a user header of {len(hdr)} bytes (at most 65535)")
        with self._atomic(xct):
            if len(body) <= self.max_small_rec and TAG_SIZE + len(hdr) + len(body) <= self.chunk_size:
                slot_bytes, kind = small_slot(hdr, body), "small"
            else:
                self._check_size(fid, len(body))
                large = StoreId(fid.vol, info.large)
                pages = self._write_data(xct, large, body)
                flags, area, _ = self._index(xct, large, SMALL_LAYOUT, pages, None)
                slot_bytes = RecTag(len(hdr), flags, len(body)).pack() + hdr + area
                kind = f"{flags.name}, {len(pages)} data pages"
                self.stats.add("nLargeRecsCreated")
            rid, how = self._place(xct, fid, slot_bytes, policy)
        self.stats.add_each(_COUNTED.get(how, _CREATED))
        if self.trace.enabled:
            self.trace.emit("T%d created %s (%s, %d bytes) [%s]", xct.txn_id, rid, kind, len(body), how)
        return rid

    def _place(self, xct: Any, fid: StoreId, slot_bytes: bytes, policy: Policy) -> tuple[RecordId, str]:
        need = len(slot_bytes) + SLOT_SIZE
        hist = self._histoid(fid)
        tried: set[int] = set()
        policy = Policy(policy)  # (callers may give the flags as an int)
        if Policy.CACHE in policy:
            for number, _free in hist.candidates(need):
                tried.add(number)
                rid = self._try_page(xct, fid, number, slot_bytes, hist)
                if rid is not None:
                    return rid, "cache"  # (counted by create_rec, see _COUNTED)
        if Policy.COMPACT in policy:
            bucket = bucket_needed(need, self.page_size)
            if bucket < NUM_BUCKETS and hist.pages_at_least(bucket):
                self.stats.add("nCompactSearches")
                for pid in self.volume.pages_with_bucket(fid, bucket):
                    if pid.page in tried:
                        continue
                    tried.add(pid.page)
                    rid = self._try_page(xct, fid, pid.page, slot_bytes, hist)
                    if rid is not None:
                        return rid, "compact"
        if Policy.APPEND in policy:
            last = self._last_file_page(fid)
            if last is not None and last not in tried:
                rid = self._try_page(xct, fid, last, slot_bytes, hist)
                if rid is not None:
                    return rid, "append"
        mode = AllocMode.APPEND if Policy.APPEND in policy else AllocMode.COMPACT
        try:
            pid, rid = self._new_page(xct, fid, mode, PageTag.FILE,
                                      fill=lambda new, page: self._insert(xct, new, page, slot_bytes))
        except RecordWontFitError:
            rid = None
        if rid is None:
            raise RecordWontFitError(f"{fid}: a record slot of {len(slot_bytes)} bytes does not fit a new page")
        return rid, f"new page {pid}"

    def _try_page(self, xct: Any, fid: StoreId, number: int, slot_bytes: bytes, hist: Histoid) -> RecordId | None:
        """Insert into page ``number`` if it is a file page of ``fid`` with room for ``xct``; else None."""
        pid = PageId(fid.vol, fid.store, number)
        page = self.bp.fix(pid, EX, conditional=True)
        if page is None:
            return None
        rid = None
        try:
            usable, bucket = self._takes_records(page, fid, pid)
            if not usable:
                hist.remove(number)
                self.stats.add("nPagesRejected")
                return None
            try:
                rid = self._insert(xct, pid, page, slot_bytes)
            except RecordWontFitError:
                if page.nfree >= len(slot_bytes) + SLOT_SIZE:
                    hist.forget(number)  # room, but reserved for another transaction: do not offer it again
                else:
                    hist.update(number, page.nfree)
                self.stats.add("nPagesRejected")
                return None
            free = page.nfree
        finally:
            self.bp.unfix(page, dirty=rid is not None)
        if rid is not None:
            self._note_space(fid, pid, hist, free, bucket)
        return rid

    def _insert(self, xct: Any, pid: PageId, page: SlottedPage, slot_bytes: bytes) -> RecordId | None:
        """Insert into file page ``pid``, fixed EX; None if its free slot is locked (RecordWontFitError: no room)."""
        user = xct.space_user()
        plan = page.plan_insert(len(slot_bytes), user)
        rid = pid.record(plan.slot)
        if not self.xcts.try_lock(xct, rid, "EX"):
            return None
        recops.insert(self.volume, xct, page, plan.slot, slot_bytes, user, plan)  # placed once, not twice
        return rid

    def _takes_records(self, page: SlottedPage, fid: StoreId, pid: PageId) -> tuple[bool, int]:
        """Whether the fixed page ``pid`` is a file page of ``fid``, still allocated to it, and its advisory
        bucket (0 if it is not)."""
        if page.tag != PageTag.FILE or page.store != fid.store:
            return False, 0
        return self.page_allocation(pid)

    def page_allocation(self, pid: PageId) -> tuple[bool, int]:
        """Whether file page ``pid`` (fixed) is still allocated to its store, and its advisory bucket: only
        the extent map can tell (:meth:`Volume.page_allocation`)."""
        return self.volume.page_allocation(pid)

    def _note_space(self, fid: StoreId, pid: PageId, hist: Histoid, free: int, old: int | None = None) -> int:
        """Record the page's free space in the heap and, if its bucket moved, in its extlink; ``old``: the
        extlink's bucket, if the caller read it under the same page latch. Returns the page's bucket."""
        bucket = hist.update(pid.page, free)
        if (self.volume.page_bucket(pid) if old is None else old) != bucket:
            self.volume.set_page_bucket(pid, bucket)
        return bucket

    def _new_page(self, xct: Any, stid: StoreId, mode: AllocMode, tag: PageTag,
                  fill: Callable[[PageId, SlottedPage], T] | None = None) -> tuple[PageId, T | None]:
        """Allocate a file page to the store and format it: a compensated action, kept if ``xct`` aborts.

        Once formatted, the page can take other transactions' records, so
        rolling ``xct`` back must not free it: the allocation and the format
        are closed by a ``compensate`` entry pointing back to the anchor
        taken before them (logged while the page is still latched, so no
        record lands on it before), and rollback jumps over both. A page of a
        file being loaded is the exception: its unlogged records must go if
        ``xct`` aborts, so its allocation is undone (only ``xct`` uses it).

        ``fill(pid, page)`` runs before the page is unfixed: the record that
        needed the new page goes in while it is still latched EX, so another
        thread that finds the page (in the histogram, or a cleaner) cannot
        make a conditional fix of it fail and the record "not fit" a new page.
        Returns the page id and what ``fill`` returned.
        """
        page = self._alloc_and_format(xct, stid, mode, tag)
        pid = page.pid
        filled = None
        try:
            if fill is not None:
                filled = fill(pid, page)
        finally:
            free = page.nfree
            self.bp.unfix(page, dirty=True)
        if tag == PageTag.FILE:
            self.stats.add("nFilePagesAllocated")
            with self._mutex:
                if mode == AllocMode.APPEND or stid.store not in self._last_page:
                    self._last_page[stid.store] = pid.page
            hist = self._histoids.get(stid.store)
            if hist is not None:
                self._note_space(stid, pid, hist, free)
        else:
            self.stats.add("nLargePagesAllocated")
        return pid, filled

    def _alloc_and_format(self, xct: Any, stid: StoreId, mode: AllocMode, tag: PageTag) -> SlottedPage:
        """Allocate a page to ``stid`` and format it with the store's flags; return it fixed EX.

        Compensated (kept if ``xct`` aborts) when :meth:`_kept_on_abort` says so.
        """
        flags = self._store_flags(stid)
        anchor = self.xcts.anchor(xct) if self._kept_on_abort(flags, tag) else None
        pid = self.volume.alloc_page(stid, mode, xct)
        self.xcts.lock(xct, ExtentId(pid.vol, extent_of(pid.page, self.volume.ext_sz)), "IX")
        page = recops.format_page(self.volume, xct, pid, tag, flags)
        if anchor is not None:
            try:
                self.xcts.compensate(xct, anchor)
            except BaseException:
                self.bp.unfix(page, dirty=True)
                raise
        return page

    # -- the file's free-space cache and its first and last pages ------------------------------------
    def _histoid(self, fid: StoreId) -> Histoid:
        with self._mutex:
            hist = self._histoids.get(fid.store)
            if hist is None:
                hist = self._histoids[fid.store] = Histoid(self.page_size)
        if not hist.primed:
            hist.prime({pid.page: self.volume.page_bucket(pid) for pid in self.volume.store_pages(fid)})
        return hist

    def histoid(self, fid: StoreId) -> Histoid:
        """The file's heap and histogram (for pictures and tests)."""
        return self._histoid(fid)

    def first_page(self, fid: StoreId) -> int:
        with self._mutex:
            cached = self._first_page.get(fid.store)
        if cached is None:
            pages = self.volume.store_pages(fid)
            cached = pages[0].page if pages else -1
            with self._mutex:
                self._first_page[fid.store] = cached
        return cached

    def _last_file_page(self, fid: StoreId) -> int | None:
        with self._mutex:
            cached = self._last_page.get(fid.store)
        if cached is not None and self.volume.is_allocated(PageId(fid.vol, fid.store, cached)):
            return cached
        pages = self.volume.store_pages(fid)
        if not pages:
            return None
        with self._mutex:
            self._last_page[fid.store] = pages[-1].page
        return pages[-1].page

    # -- updating ------------------------------------------------------------------------------------
    def _fix_rec(self, xct: Any, rid: RecordId) -> tuple[SlottedPage, RecTag, bytes, bytes]:
        """Lock ``rid`` EX, fix its page EX and verify it; return (page, tag, header, rest)."""
        self.xcts.check_active(xct)
        check_rid_bounds(self.volume, rid)
        self.xcts.lock(xct, rid, "EX")
        self._check_loader(xct, StoreId(rid.vol, rid.store))
        page = self.bp.fix(rid.pid, EX)
        try:
            verify_rid(self.volume, page, rid)
            tag, hdr, rest = split_slot(page.read(rid.slot), rid)
        except BaseException:
            self.bp.unfix(page)
            raise
        return page, tag, hdr, rest

    # -- freeing ---------------------------------------------------------------------------------------
    def free_rec(self, xct: Any, rid: RecordId) -> None:
        """Free the record (its slot stays reserved for ``xct``); free its page if it was the last record."""
        page, tag, hdr, rest = self._fix_rec(xct, rid)
        fid = StoreId(rid.vol, rid.store)
        try:
            recops.remove(self.volume, xct, page, rid.slot, xct.space_user())
            empty = self._only_mine(page, xct) and not any(page.is_in_use(s) for s in range(page.nslots))
            free = page.nfree
        finally:
            self.bp.unfix(page, dirty=True)
        if not tag.is_small:
            large = self._large_store(rid)
            layout = self._layout(large, tag, rest, rid)
            self._free_large(xct, large, layout.pages + layout.index_pages)
        hist = self._histoid(fid)
        empty = empty and rid.page != self.first_page(fid) and self.xcts.try_lock(xct, rid.pid, "EX")
        if empty:
            self._free_page(xct, rid.pid)
            hist.remove(rid.page)
            self.stats.add("nFilePagesFreed")
        else:
            self._note_space(fid, rid.pid, hist, free)
        self.stats.add("nRecsFreed")
        self.trace.emit("T%d freed %s%s", xct.txn_id, rid, " and its page" if empty else "")

    @staticmethod
    def _only_mine(page: SlottedPage, xct: Any) -> bool:
        """Whether every byte reserved on ``page`` is ``xct``'s (no other transaction may want a slot back)."""
        page.expire_reservation(xct.space_user())
        return page.nrsvd == 0 or (page.rsvd_tid == xct.txn_id and page.xct_rsvd == page.nrsvd)

    def _free_page(self, xct: Any, pid: PageId) -> None:
        """Free a page the transactional way; a TMP file's free is compensated (an abort keeps the page free,
        as it keeps the unlogged change that stopped using it)."""
        self.xcts.lock(xct, pid, "EX")
        self.xcts.lock(xct, ExtentId(pid.vol, extent_of(pid.page, self.volume.ext_sz)), "IX")
        tmp = self._store_flags(StoreId(pid.vol, pid.store)) == StoreFlags.TMP
        anchor = self.xcts.anchor(xct) if tmp else None
        self.volume.free_page(pid, xct, free_empty_extent=False)
        if anchor is not None:
            self.xcts.compensate(xct, anchor)
        self.xcts.note_page_freed(xct, pid)

    def __repr__(self) -> str:
        return f"FileManager({self.volume!r})"


#: the record manager of a volume, built by the storage manager
FILE_MANAGER = impl.hot_spot(FileManager)
