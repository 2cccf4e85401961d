"""Updating records by id: copy out, change, hand back (a part of :class:`~minidb.pagestore.files.file.FileManager`).

Users never change a record in the buffer pool: they read it, change their
copy, and hand the change back with one of:

- ``update_rec(rid, start, data)``: overwrite bytes of the body (its length
  stays), Shore's ``update_rec``: one ``rec_splice`` on the record's page
  for a small record, one per chunk page touched for a large one;
- ``append_rec(rid, data)``: grow the body. A small record that would pass
  ``max_small_rec`` or its page's usable space becomes *large* in place (the
  same record id): its body goes to new chunk pages and its slot is
  replaced by the header and the chunk list. A large record fills its last
  chunk, then takes new chunk pages;
- ``truncate_rec(rid, amount)``: shorten the body; chunk pages no longer
  needed are freed (the transactional way: reusable once it commits).

Each logs one entry per page it changes, record tag changes included
(``rec_splice`` of the 8-byte tag), so rollback undoes each of them with a
CLR. An operation of several entries is made all-or-nothing by
:meth:`_atomic`: should it fail halfway (a record that cannot grow on its
page, a full volume), it rolls back to where it began, like a savepoint.

Chunks are written to new pages *before* the record's page is fixed again:
the protocol never waits for a lock or allocates a page while holding a
latch on the record's page.

Worked example: ``append_rec(r(1.3.16.1), 200 bytes)`` on a 10-byte small
record (``max_small_rec`` 128) writes the 210-byte body to one new page of
the large-record store, say p(1.4.20), then splices the slot from
``tag + body`` (18 bytes) to ``tag + [20]`` (12 bytes): entries
``alloc_pages_in_ext``, ``page_format``, ``rec_insert`` (on p(1.4.20)), ``rec_splice``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minidb.errors import MinidbError, SimulatedCrash
from minidb.pagestore.files import recops
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.ids import PageId, RecordId, StoreId
from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.pages.rectag import TAG_SIZE, RecFlags, RecTag, chunk_pages, large_slot
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.transactions.xct import SavePoint


def require_bytes(value: Any, what: str, where: object) -> bytes:
    """``value`` as bytes; a str (no encoding is implied) or anything else is a BadRequestError."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise BadRequestError(f"{where}: {what} must be bytes, not {type(value).__name__} {value!r:.40}")
    return bytes(value)


class RecordUpdates:
    volume: Any
    bp: Any
    xcts: Any
    stats: Any
    trace: Any
    chunk_size: int
    max_small_rec: int

    def update_rec(self, xct: Any, rid: RecordId, start: int, data: bytes) -> None:
        """Overwrite ``data`` at byte ``start`` of the body (the body's length does not change)."""
        data = require_bytes(data, "the data", rid)
        page, tag, hdr, rest = self._fix_rec(xct, rid)
        changed = False
        try:
            if start < 0 or start + len(data) > tag.body_len:
                raise BadRequestError(f"{rid}: cannot write {len(data)} bytes at {start} of a "
                                      f"{tag.body_len}-byte body")
            if not data:
                return
            if tag.is_small:
                recops.splice(self.volume, xct, page, rid.slot, TAG_SIZE + tag.hdr_len + start, len(data), data,
                              xct.space_user())
                changed = True
        finally:
            self.bp.unfix(page, dirty=changed)
        if not tag.is_small:
            large = self.file_info(StoreId(rid.vol, rid.store)).large
            self._update_chunks(xct, PageId(rid.vol, large, 0), chunk_pages(rest), start, data)
        self.stats.add("nRecsUpdated")
        self.trace.emit("T%d updated %s: %d bytes at %d", xct.txn_id, rid, len(data), start)

    def _update_chunks(self, xct: Any, large: PageId, pages: list[int], start: int, data: bytes) -> None:
        size = self.chunk_size
        first, last = start // size, (start + len(data) - 1) // size
        for index in range(first, last + 1):
            lo = max(start, index * size)
            hi = min(start + len(data), (index + 1) * size)
            page = self.bp.fix(PageId(large.vol, large.store, pages[index]), EX)
            try:
                recops.splice(self.volume, xct, page, 0, lo - index * size, hi - lo, data[lo - start:hi - start],
                              xct.space_user())
            finally:
                self.bp.unfix(page, dirty=True)

    def append_rec(self, xct: Any, rid: RecordId, data: bytes) -> None:
        """Append ``data`` to the body; a small record that outgrows its slot becomes large (same id)."""
        data = require_bytes(data, "the data", rid)
        with self._atomic(xct):
            page, tag, hdr, rest = self._fix_rec(xct, rid)
            user = xct.space_user()
            new_len = tag.body_len + len(data)
            if not data or (tag.is_small and new_len <= self.max_small_rec
                            and TAG_SIZE + tag.hdr_len + new_len <= self.chunk_size
                            and page.usable_space(user) >= len(data)):
                try:
                    if data:
                        self._splice_tag(xct, page, rid, RecTag(tag.hdr_len, RecFlags.SMALL, new_len), user)
                        recops.splice(self.volume, xct, page, rid.slot, TAG_SIZE + tag.hdr_len + tag.body_len, 0,
                                      data, user)
                finally:
                    self.bp.unfix(page, dirty=bool(data))
                if data:
                    self._appended(xct, rid, len(data))
                return
            self.bp.unfix(page)  # nothing changed yet; chunks are written without holding the latch
            large = StoreId(rid.vol, self.file_info(StoreId(rid.vol, rid.store)).large)
            if tag.is_small:
                body = rest + data
                new_slot = large_slot(hdr, len(body), self._write_chunks(xct, large, body))
                self._change_slot(xct, rid, lambda page: [
                    (0, len(page.read(rid.slot)), new_slot)])
            else:
                pages = chunk_pages(rest)
                in_last = tag.body_len - (len(pages) - 1) * self.chunk_size
                room = self.chunk_size - in_last
                if room:
                    last = self.bp.fix(PageId(rid.vol, large.store, pages[-1]), EX)
                    try:
                        recops.splice(self.volume, xct, last, 0, in_last, 0, data[:room], user)
                    finally:
                        self.bp.unfix(last, dirty=True)
                refs = b"".join(p.to_bytes(4, "little") for p in self._write_chunks(xct, large, data[room:]))
                end = TAG_SIZE + tag.hdr_len + len(rest)
                self._change_slot(xct, rid, lambda page: [
                    (0, TAG_SIZE, RecTag(tag.hdr_len, RecFlags.LARGE_0, new_len).pack())]
                    + ([(end, 0, refs)] if refs else []))
        self._appended(xct, rid, len(data))

    def _appended(self, xct: Any, rid: RecordId, length: int) -> None:
        self.stats.add("nRecsUpdated")
        self.trace.emit("T%d appended %d bytes to %s", xct.txn_id, length, rid)

    def _change_slot(self, xct: Any, rid: RecordId, splices: Any) -> None:
        """Fix the record's page EX again and apply ``splices(page)``: a list of (start, cut, new)."""
        page = self.bp.fix(rid.pid, EX)
        changed = False
        try:
            for start, cut, new in splices(page):
                recops.splice(self.volume, xct, page, rid.slot, start, cut, new, xct.space_user())
                changed = True
        finally:
            self.bp.unfix(page, dirty=changed)

    @contextmanager
    def _atomic(self, xct: Any) -> Iterator[None]:
        """Make an operation of several entries all-or-nothing: on an error, roll back to where it began."""
        point = SavePoint(xct.txn_id, xct.last_lsn)
        try:
            yield
        except MinidbError as error:
            if isinstance(error, SimulatedCrash) or xct.last_lsn == point.lsn:
                raise
            try:
                self.xcts.rollback_to(xct, point, unlogged_ok=True)
            except MinidbError:
                pass  # the original error is the one to report
            raise

    def truncate_rec(self, xct: Any, rid: RecordId, amount: int) -> None:
        """Cut ``amount`` bytes off the end of the body."""
        page, tag, hdr, rest = self._fix_rec(xct, rid)
        user = xct.space_user()
        freed: list[int] = []
        changed = False
        try:
            if not 0 <= amount <= tag.body_len:
                raise BadRequestError(f"{rid}: cannot cut {amount} bytes off a {tag.body_len}-byte body")
            if not amount:
                return
            new_len = tag.body_len - amount
            base = TAG_SIZE + tag.hdr_len
            if tag.is_small:
                recops.splice(self.volume, xct, page, rid.slot, base + new_len, amount, b"", user)
                self._splice_tag(xct, page, rid, RecTag(tag.hdr_len, RecFlags.SMALL, new_len), user)
                changed = True
                return
            info = self.file_info(StoreId(rid.vol, rid.store))
            pages = chunk_pages(rest)
            keep = -(-new_len // self.chunk_size)
            freed = pages[keep:]
            if keep and new_len % self.chunk_size:
                last = self.bp.fix(PageId(rid.vol, info.large, pages[keep - 1]), EX)
                try:
                    held = len(last.read(0))
                    cut = held - (new_len - (keep - 1) * self.chunk_size)
                    if cut:
                        recops.splice(self.volume, xct, last, 0, held - cut, cut, b"", user)
                finally:
                    self.bp.unfix(last, dirty=True)
            if freed:
                recops.splice(self.volume, xct, page, rid.slot, base + 4 * keep, 4 * len(freed), b"", user)
            self._splice_tag(xct, page, rid, RecTag(tag.hdr_len, RecFlags.LARGE_0, new_len), user)
            changed = True
        finally:
            self.bp.unfix(page, dirty=changed)
        if freed:
            info = self.file_info(StoreId(rid.vol, rid.store))
            for number in freed:
                self._free_page(xct, PageId(rid.vol, info.large, number))
        if changed:
            self.stats.add("nRecsUpdated")
            self.trace.emit("T%d cut %d bytes off %s", xct.txn_id, amount, rid)

    def _splice_tag(self, xct: Any, page: SlottedPage, rid: RecordId, tag: RecTag, user: Any) -> None:
        recops.splice(self.volume, xct, page, rid.slot, 0, TAG_SIZE, tag.pack(), user)
