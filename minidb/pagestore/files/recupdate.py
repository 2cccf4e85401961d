"""Updating records by id: copy out, change, hand back (a part of :class:`~minidb.pagestore.files.file.FileManager`).

Users never change a record in the buffer pool: they read it, change their
copy, and hand the change back with one of:

- ``update_rec(rid, start, data)``: overwrite bytes of the body (its length
  stays), Shore's ``update_rec``: one ``rec_splice`` on the record's page
  for a small record, one per data page touched for a large one;
- ``append_rec(rid, data)``: grow the body. A small record that would pass
  ``max_small_rec`` or its page's usable space becomes *large* in place (the
  same record id): its body goes to new data pages and its slot's body
  area is replaced by chunks or an index page. A large record fills its
  last data page, then takes new ones, and may change shape
  (:mod:`minidb.pagestore.files.lgrec`);
- ``truncate_rec(rid, amount)``: shorten the body; a large record cut to
  what fits its slot becomes small again, else keeps fewer data pages and
  may change shape; pages no longer needed are freed (the transactional
  way: reusable once it commits).

Each logs one entry per page it changes, record tag changes included
(``rec_splice`` of the 8-byte tag), so rollback undoes each of them with a
CLR. An operation of several entries is made all-or-nothing by
:meth:`_atomic`: should it fail halfway (a record that cannot grow on its
page, a full volume), it rolls back to where it began, like a savepoint.

Data and index pages are written *before* the record's page is fixed again:
the protocol never waits for a lock or allocates a page while holding a
latch on the record's page.

Worked example: ``append_rec(r(1.3.16.1), 200 bytes)`` on a 10-byte small
record (``max_small_rec`` 128) writes the 210-byte body to one new page of
the large-record store, say p(1.4.20), then splices the slot from
``tag + body`` (18 bytes) to ``tag + (20, 1)`` (16 bytes): entries
``alloc_pages_in_ext``, ``page_format``, ``rec_insert`` (on p(1.4.20)), then
``rec_splice`` of the tag and of the body area.
"""

from __future__ import annotations

from typing import Any, ContextManager

from minidb.pagestore.buffer.latch import EX
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.files import recops
from minidb.pagestore.files.lgrec import LargeRecords
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.pages.rectag import TAG_SIZE, RecFlags, RecTag
from minidb.pagestore.pages.slotted import SlottedPage
from minidb.pagestore.transactions.xctmgr import all_or_nothing


def require_bytes(value: Any, what: str, where: object) -> bytes:
    """``value`` as bytes; a str (no encoding is implied) or anything else is a BadRequestError."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise BadRequestError(f"{where}: {what} must be bytes, not {type(value).__name__} {value!r:.40}")
    return bytes(value)


class RecordUpdates(LargeRecords):
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
            large = self._large_store(rid)
            self._update_pages(xct, large, self._layout(large, tag, rest, rid).pages, start, data)
        self.stats.add("nRecsUpdated")
        self.trace.emit("T%d updated %s: %d bytes at %d", xct.txn_id, rid, len(data), start)

    def _update_pages(self, xct: Any, large: StoreId, pages: list[int], start: int, data: bytes) -> None:
        size = self.chunk_size
        first, last = start // size, (start + len(data) - 1) // size
        for index in range(first, last + 1):
            lo = max(start, index * size)
            hi = min(start + len(data), (index + 1) * size)
            splices = [(lo - index * size, hi - lo, data[lo - start:hi - start])]
            self._splice_page(xct, large, pages[index], lambda _page, splices=splices: splices)

    def append_rec(self, xct: Any, rid: RecordId, data: bytes) -> None:
        """Append ``data`` to the body; the record changes shape as it grows (same id)."""
        data = require_bytes(data, "the data", rid)
        with self._atomic(xct):
            page, tag, hdr, rest = self._fix_rec(xct, rid)
            user = xct.space_user()
            room = page.usable_space(user)
            new_len = tag.body_len + len(data)
            if not data or (tag.is_small and self._fits_small(tag.hdr_len, new_len) and room >= len(data)):
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
            self.bp.unfix(page)  # nothing changed yet; pages are written without holding the latch
            self._grow_large(xct, rid, tag, rest, data, len(rest) + room)
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

    def _atomic(self, xct: Any) -> ContextManager[None]:
        """Make an operation of several entries all-or-nothing: on an error, roll back to where it began."""
        return all_or_nothing(self.xcts, xct)

    def truncate_rec(self, xct: Any, rid: RecordId, amount: int) -> None:
        """Cut ``amount`` bytes off the end of the body; the record changes shape as it shrinks."""
        with self._atomic(xct):
            page, tag, hdr, rest = self._fix_rec(xct, rid)
            user = xct.space_user()
            try:
                if not 0 <= amount <= tag.body_len:
                    raise BadRequestError(f"{rid}: cannot cut {amount} bytes off a {tag.body_len}-byte body")
                new_len = tag.body_len - amount
                if amount and tag.is_small:
                    recops.splice(self.volume, xct, page, rid.slot, TAG_SIZE + tag.hdr_len + new_len, amount, b"",
                                  user)
                    self._splice_tag(xct, page, rid, RecTag(tag.hdr_len, RecFlags.SMALL, new_len), user)
                room = len(rest) + page.usable_space(user)
            finally:
                self.bp.unfix(page, dirty=bool(amount) and tag.is_small)
            if amount and not tag.is_small:
                self._shrink_large(xct, rid, tag, rest, new_len, room)
        if amount:
            self.stats.add("nRecsUpdated")
            self.trace.emit("T%d cut %d bytes off %s", xct.txn_id, amount, rid)

    def _splice_tag(self, xct: Any, page: SlottedPage, rid: RecordId, tag: RecTag, user: Any) -> None:
        recops.splice(self.volume, xct, page, rid.slot, 0, TAG_SIZE, tag.pack(), user)
