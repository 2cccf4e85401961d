"""Large records: data pages, index pages and changes of shape (a part of :class:`~minidb.pagestore.files.file.FileManager`).

A large record's body lives on pages of its file's large-record store, in
one of three shapes (:mod:`minidb.pagestore.pages.rectag` draws their bytes):
``LARGE_0`` lists *chunks* (runs of contiguous data pages of one extent) in
its slot, ``LARGE_1`` names one index page listing the data pages,
``LARGE_2`` names a root index page listing index pages (the *leaves*) that
list the data pages. A :class:`Layout` is what a shape says, read back: the
data pages in body order, the leaves and the root.

Invariants, checked by :meth:`LargeRecords.check_large_records` (and so by
``minidb verify`` and the crash test):

- a record of ``body_len`` bytes has ``ceil(body_len / chunk_size)`` data
  pages; each holds ``chunk_size`` bytes in its slot 0, the last the rest;
- every page of the large-record store is allocated, and referenced by
  exactly one record, once (as a data page or an index page);
- a chunk never crosses an extent; an index page lists at least one page.

**The shape follows the size.** After every change the record takes the
first shape that holds it (:meth:`LargeRecords._shape`): small if the body
fits ``max_small_rec`` (and its page); ``LARGE_0`` if its chunks fit the
slot's body area (``max_small_rec`` bytes, 8 per chunk) and the page has
room; ``LARGE_1`` if one index page lists all the data pages
(``index_fanout``, by default what fits a page: 112 at 512 bytes);
``LARGE_2`` if ``index_fanout`` leaves do; else the record will not fit
(:class:`RecordWontFitError`, checked before anything is logged). So a
record goes small -> LARGE_0 -> LARGE_1 -> LARGE_2 as it grows
(:meth:`append_rec`) and back as it shrinks (:meth:`truncate_rec`).

**Changing shape reuses what it can.** Growing from LARGE_1 to LARGE_2, the
old index page becomes the first leaf (its list is a prefix of the new
one) and only a root is added; shrinking back, the first leaf becomes the
index page and the root and the other leaves are freed. An index page that
stays is changed by one ``rec_splice`` of the bytes that differ. So every
change is logged with the page entries of :mod:`minidb.pagestore.files.recpage`
(``alloc_pages_in_ext``, ``page_format``, ``rec_insert``, ``rec_splice``,
``free_pages_in_ext``): rollback and restart undo them one by one and
restore the old shape exactly; redo rebuilds the new one. No entry type of
its own is needed.

**Order of the steps** (the record locked EX throughout; no latch held
while allocating or waiting): (1) the data pages change (the last one
filled or cut, new ones allocated after :meth:`Volume.reserve_pages`, which
hands out runs of contiguous pages, a list of extents at a time); (2) the
index pages are written; (3) the slot on the file page changes (tag and
body area); (4) the pages no longer referenced are freed, the transactional
way: the extents they empty go when the transaction commits
(:mod:`minidb.pagestore.transactions.freespace`), and the pages can be
allocated again once it has committed. Shore also allocates large-record
pages under long-duration locks, so a page freed by a transaction is not
reused before that transaction ends.

Worked example (512-byte pages of 448 bytes of body, extents of 4 pages,
``max_small_rec`` 8, so one chunk fits the slot, and ``index_fanout`` 4):
the file's large records go in ``s(1.4)``; another record takes a page of
it after each step below (so this one's pages are not contiguous).

=====================  ===============================  =====================
step                   data pages (index pages)         shape
=====================  ===============================  =====================
create, 448 bytes      20                               LARGE_0 [(20, 1)]
append 448             20, 22 (index 23)                LARGE_1: two runs
append 1344            20, 22, 25, 26, 27 (leaves 23,   LARGE_2: five pages,
                       28; root 29)                     more than 4
truncate 448           20, 22, 25, 26 (index 23)        LARGE_1; 27, 28, 29
                                                        freed
truncate 1344          20                               LARGE_0; 22, 23, 25,
                                                        26 freed
truncate 443           none: the 5 bytes in the slot    SMALL; 20 freed
=====================  ===============================  =====================

Growing to LARGE_2, index page 23 became the first leaf (one ``rec_splice``
added two page numbers to it); cut back, it is the index page again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import PageStoreError, RecordWontFitError
from minidb.pagestore.files import recops
from minidb.pagestore.ids import PageId, RecordId, StoreId, extent_of
from minidb.pagestore.pages.page import PageTag, lost_page
from minidb.pagestore.pages.rectag import (
    CHUNK,
    PAGE_REF,
    TAG_SIZE,
    RecFlags,
    RecTag,
    chunk_pages,
    pack_chunks,
    pack_pages,
    page_runs,
    pages_needed,
    split_slot,
    unpack_chunks,
    unpack_pages,
)
from minidb.pagestore.volume.volpages import AllocMode

Splice = tuple[int, int, bytes]  # start, bytes cut, bytes put in


@dataclass(frozen=True)
class Layout:
    """Where a record's body is: its data pages in body order, its index pages (none if small or LARGE_0)."""

    flags: RecFlags
    pages: list[int] = field(default_factory=list)
    leaves: list[int] = field(default_factory=list)  # index pages listing data pages (LARGE_1: its one page)
    root: int | None = None  # LARGE_2: the index page listing the leaves

    @property
    def index_pages(self) -> list[int]:
        return self.leaves + ([self.root] if self.root is not None else [])


SMALL_LAYOUT = Layout(RecFlags.SMALL)


def diff(start: int, old: bytes, new: bytes) -> list[Splice]:
    """One splice turning ``old`` (at ``start``) into ``new``, from their first difference; none if equal."""
    if old == new:
        return []
    same = 0
    while same < min(len(old), len(new)) and old[same] == new[same]:
        same += 1
    return [(start + same, len(old) - same, new[same:])]


class LargeRecords:
    volume: Any
    bp: Any
    xcts: Any
    stats: Any
    page_size: int
    chunk_size: int
    max_small_rec: int
    index_fanout: int
    # and, from the file manager: file_info, files, _free_page, _change_slot, _alloc_and_format

    # -- reading -------------------------------------------------------------------------------------
    def _large_store(self, rid: RecordId | StoreId) -> StoreId:
        return StoreId(rid.vol, self.file_info(StoreId(rid.vol, rid.store)).large)

    def _layout(self, large: StoreId, tag: RecTag, rest: bytes, where: object) -> Layout:
        """The record's layout, read from its slot's body area and its index pages."""
        if tag.is_small:
            return SMALL_LAYOUT
        if tag.flags == RecFlags.LARGE_0:
            return Layout(RecFlags.LARGE_0, chunk_pages(unpack_chunks(rest)))
        top = unpack_pages(rest)[0]
        listed = self._read_index(large, top, where)
        if tag.flags == RecFlags.LARGE_1:
            return Layout(RecFlags.LARGE_1, listed, [top])
        pages = [p for leaf in listed for p in self._read_index(large, leaf, where)]
        return Layout(RecFlags.LARGE_2, pages, listed, top)

    def _read_slot0(self, large: StoreId, number: int, tag: PageTag, what: str) -> bytes:
        pid = PageId(large.vol, large.store, number)
        page = self.bp.fix(pid, SH)
        try:
            if page.tag != tag or page.pid != pid or not page.is_in_use(0):
                raise lost_page(page, pid, what)
            return page.read(0)
        finally:
            self.bp.unfix(page)

    def _read_index(self, large: StoreId, number: int, where: object) -> list[int]:
        data = self._read_slot0(large, number, PageTag.LGINDEX, f"an index page of {where}")
        if not data or len(data) % PAGE_REF.size:
            raise PageStoreError(f"{where}: index page {PageId(large.vol, large.store, number)} holds {len(data)} "
                                 f"bytes, not a list of page numbers")
        return unpack_pages(data)

    def _read_body(self, large: StoreId, pages: list[int], body_len: int, where: object) -> bytes:
        body = b"".join(self._read_slot0(large, n, PageTag.LGDATA, f"a data page of {where}") for n in pages)
        return body[:body_len]

    def large_layout(self, rid: RecordId) -> Layout:
        """The layout of record ``rid`` (for pictures and tests; no lock taken)."""
        page = self.bp.fix(rid.pid, SH)
        try:
            tag, _, rest = split_slot(page.read(rid.slot), rid)
        finally:
            self.bp.unfix(page)
        return self._layout(self._large_store(rid), tag, rest, rid)

    # -- writing -------------------------------------------------------------------------------------
    def _check_size(self, where: object, body_len: int) -> None:
        """Refuse, before anything is logged, a body more data pages than a two-level index lists."""
        need, most = pages_needed(body_len, self.page_size), self.index_fanout ** 2
        if need > most:
            raise RecordWontFitError(f"{where}: a body of {body_len} bytes needs {need} data pages, more than a "
                                     f"two-level index lists ({self.index_fanout} x {self.index_fanout} = {most})")

    def _new_large_page(self, xct: Any, large: StoreId, tag: PageTag, data: bytes) -> int:
        """A new page of the large-record store (the lowest reserved one), formatted with the store's flags,
        ``data`` in slot 0."""
        page = self._alloc_and_format(xct, large, AllocMode.COMPACT, tag)
        pid = page.pid
        try:
            recops.insert(self.volume, xct, page, 0, data, xct.space_user())
        finally:
            self.bp.unfix(page, dirty=True)
        self.stats.add("nLargePagesAllocated")
        return pid.page

    def _write_data(self, xct: Any, large: StoreId, body: bytes) -> list[int]:
        """New data pages holding ``body``, ``chunk_size`` bytes each; their numbers in body order."""
        size = self.chunk_size
        self.volume.reserve_pages(large, pages_needed(len(body), self.page_size), xct)
        return [self._new_large_page(xct, large, PageTag.LGDATA, body[i:i + size]) for i in range(0, len(body), size)]

    def _splice_page(self, xct: Any, large: StoreId, number: int, change: Any) -> None:
        """Fix a page of the large-record store EX and apply ``change(page)``: splices of its slot 0."""
        page = self.bp.fix(PageId(large.vol, large.store, number), EX)
        splices = []
        try:
            splices = change(page)
            for start, cut, new in splices:
                recops.splice(self.volume, xct, page, 0, start, cut, new, xct.space_user())
        finally:
            self.bp.unfix(page, dirty=bool(splices))

    def _put_index(self, xct: Any, large: StoreId, number: int | None, pages: list[int]) -> int:
        """Index page ``number`` (a new one if None) made to list ``pages``; its number."""
        data = pack_pages(pages)
        if number is None:
            return self._new_large_page(xct, large, PageTag.LGINDEX, data)
        self._splice_page(xct, large, number, lambda page: diff(0, page.read(0), data))
        return number

    def _shape(self, pages: list[int], room: int | None) -> RecFlags:
        """The first large shape that holds ``pages``; ``room``: bytes the slot's body area may take (None: any)."""
        chunks = len(page_runs(pages, self.volume.ext_sz)) * CHUNK.size
        if chunks <= self.max_small_rec and (room is None or chunks <= room):
            return RecFlags.LARGE_0
        return RecFlags.LARGE_1 if len(pages) <= self.index_fanout else RecFlags.LARGE_2

    def _index(self, xct: Any, large: StoreId, old: Layout, pages: list[int], room: int | None
               ) -> tuple[RecFlags, bytes, list[int]]:
        """Write the index pages of the shape ``pages`` take, reusing ``old``'s.

        Returns (flags, the slot's new body area, old index pages now unused).
        """
        flags = self._shape(pages, room)
        if flags == RecFlags.LARGE_0:
            return flags, pack_chunks(page_runs(pages, self.volume.ext_sz)), old.index_pages
        fan = self.index_fanout
        lists = [pages] if flags == RecFlags.LARGE_1 else [pages[i:i + fan] for i in range(0, len(pages), fan)]
        reuse = old.leaves + [None] * len(lists)
        leaves = [self._put_index(xct, large, reuse[i], listed) for i, listed in enumerate(lists)]
        unused = old.leaves[len(leaves):]
        if flags == RecFlags.LARGE_1:
            top = leaves[0]
            unused += [old.root] if old.root is not None else []
        else:
            top = self._put_index(xct, large, old.root, leaves)
        return flags, pack_pages([top]), unused

    def _relayout(self, xct: Any, rid: RecordId, tag: RecTag, rest: bytes, old: Layout, pages: list[int],
                  body_len: int, room: int, freed: list[int]) -> None:
        """Make ``pages`` the record's data pages: index pages, then the slot, then free ``freed`` and unused ones."""
        large = self._large_store(rid)
        flags, area, unused = self._index(xct, large, old, pages, room)
        base = TAG_SIZE + tag.hdr_len
        self._change_slot(xct, rid, lambda page: diff(0, tag.pack(), RecTag(tag.hdr_len, flags, body_len).pack())
                          + diff(base, rest, area))
        self._free_large(xct, large, freed + unused)

    def _to_small(self, xct: Any, rid: RecordId, tag: RecTag, rest: bytes, old: Layout, body_len: int) -> None:
        """A large record shrunk to a small one: its body into its slot, all its pages freed."""
        large = self._large_store(rid)
        body = self._read_body(large, old.pages[:pages_needed(body_len, self.page_size)], body_len, rid)
        base = TAG_SIZE + tag.hdr_len
        self._change_slot(xct, rid, lambda page: diff(0, tag.pack(), RecTag(tag.hdr_len, RecFlags.SMALL,
                                                                             body_len).pack())
                          + [(base, len(rest), body)])
        self._free_large(xct, large, old.pages + old.index_pages)

    def _free_large(self, xct: Any, large: StoreId, numbers: list[int]) -> None:
        for number in numbers:
            self._free_page(xct, PageId(large.vol, large.store, number))

    def _grow_large(self, xct: Any, rid: RecordId, tag: RecTag, rest: bytes, data: bytes, room: int) -> None:
        """Append ``data`` to a record that is large, or becomes large now."""
        new_len = tag.body_len + len(data)
        self._check_size(rid, new_len)
        large = self._large_store(rid)
        if tag.is_small:
            old, pages = SMALL_LAYOUT, self._write_data(xct, large, rest + data)
        else:
            old = self._layout(large, tag, rest, rid)
            free = len(old.pages) * self.chunk_size - tag.body_len  # room left in the last data page
            if free:
                self._splice_page(xct, large, old.pages[-1],
                                  lambda page: [(self.chunk_size - free, 0, data[:free])])
            pages = old.pages + self._write_data(xct, large, data[free:])
        self._relayout(xct, rid, tag, rest, old, pages, new_len, room, [])

    def _shrink_large(self, xct: Any, rid: RecordId, tag: RecTag, rest: bytes, new_len: int, room: int) -> None:
        """Cut a large record to ``new_len`` bytes: small if it fits, else fewer data pages."""
        large = self._large_store(rid)
        old = self._layout(large, tag, rest, rid)
        if self._fits_small(tag.hdr_len, new_len) and new_len <= room:
            self._to_small(xct, rid, tag, rest, old, new_len)
            return
        keep = pages_needed(new_len, self.page_size)
        held = self.chunk_size if keep < len(old.pages) else tag.body_len - (keep - 1) * self.chunk_size
        cut = held - (new_len - (keep - 1) * self.chunk_size)
        if cut:
            self._splice_page(xct, large, old.pages[keep - 1], lambda page: [(held - cut, cut, b"")])
        self._relayout(xct, rid, tag, rest, old, old.pages[:keep], new_len, room, old.pages[keep:])

    def _fits_small(self, hdr_len: int, body_len: int) -> bool:
        return body_len <= self.max_small_rec and TAG_SIZE + hdr_len + body_len <= self.chunk_size

    # -- checking ------------------------------------------------------------------------------------
    def check_large_records(self) -> list[str]:
        """Problems of the large records of every file (see the invariants above; empty when all is well)."""
        problems: list[str] = []
        for fid in self.files():
            large = self._large_store(fid)
            owner: dict[int, RecordId] = {}
            for pid in self.volume.store_pages(fid):
                page = self.bp.fix(pid, SH)
                try:
                    slots = page.records() if page.tag == PageTag.FILE and page.pid == pid else []
                finally:
                    self.bp.unfix(page)
                for slot, data in slots:
                    rid = pid.record(slot)
                    try:
                        problems += self._check_record(rid, large, data, owner)
                    except PageStoreError as error:
                        problems.append(str(error))
            for number in sorted({p.page for p in self.volume.store_pages(large)} - set(owner)):
                problems.append(f"{PageId(large.vol, large.store, number)}: a page of {large}, the large records "
                                f"of {fid}, that no record refers to")
        return problems

    def _check_record(self, rid: RecordId, large: StoreId, data: bytes, owner: dict[int, RecordId]) -> list[str]:
        tag, _, rest = split_slot(data, rid)
        if tag.is_small:
            return []
        problems = []
        layout = self._layout(large, tag, rest, rid)
        for number in layout.pages + layout.index_pages:
            pid = PageId(large.vol, large.store, number)
            if number in owner:
                problems.append(f"{rid}: {pid} is also a page of {owner[number]}" if owner[number] != rid
                                else f"{rid}: {pid} is referred to twice")
            owner[number] = rid
            if not self.volume.is_allocated(pid):
                problems.append(f"{rid}: {pid} is not allocated to {large}")
        need = pages_needed(tag.body_len, self.page_size)
        if len(layout.pages) != need:
            problems.append(f"{rid}: a {tag.body_len}-byte body needs {need} data pages, "
                            f"its {tag.flags.name} layout lists {len(layout.pages)}")
        else:
            for i, number in enumerate(layout.pages):
                want = min(self.chunk_size, tag.body_len - i * self.chunk_size)
                held = len(self._read_slot0(large, number, PageTag.LGDATA, f"a data page of {rid}"))
                if held != want:
                    problems.append(f"{rid}: data page {PageId(large.vol, large.store, number)} holds {held} "
                                    f"bytes, the body's length says {want}")
        if tag.flags == RecFlags.LARGE_0:
            ext_sz = self.volume.ext_sz
            for first, count in unpack_chunks(rest):
                if not count or extent_of(first, ext_sz) != extent_of(first + count - 1, ext_sz):
                    problems.append(f"{rid}: chunk ({first}, {count}) is not a run of pages of one extent")
        return problems
