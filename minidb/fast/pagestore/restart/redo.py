"""Redo that keeps a page fixed over a run of entries, from the entries analysis kept.

The reference :func:`~minidb.pagestore.restart.redo.redo_pass` scans the log
from the redo LSN and, for each entry, asks exercise 08c's hook
(``REDO_TEST``), fixes the entry's page, applies the change with its redo
handler, stamps the page LSN and unfixes the page. This twin does the same
decisions in the same order with fewer Python steps:

- **Entries from memory.** Analysis kept the entries it decoded from the
  master checkpoint on (:mod:`minidb.fast.pagestore.restart.analysis`);
  :func:`redo_entries` takes those and reads the log only before the first
  kept entry (a recovery LSN older than the checkpoint) and past the last
  one, the last file from what opening the log checked.
- **A page fixed once per run.** Consecutive entries often change one page
  (a transaction's inserts fill the same page), so the page is kept fixed
  while the entries that follow are on it, and unfixed, dirty if anything
  was redone, when an entry names another page. Entries on no page (a
  transaction's end), and entries skipped from the dirty page table alone,
  leave it fixed. Worked example: entries on p(1.3.12) at 0x1/0x600 and
  0x1/0x640, an ``xct_end`` at 0x1/0x680, p(1.3.12) again at 0x1/0x6a0,
  then p(1.3.13): p(1.3.12) is fixed once for three entries, then
  p(1.3.13).
- **The test inline.** :func:`~minidb.pagestore.restart.redo.redo_decision`'s
  steps are written out in the loop (the redoable types of the page store
  looked up once per pass, by code); once one entry of a run is applied,
  the page LSN is that entry's, so it is stamped once, when the run ends.
- **Plain changes in place.** Plain inserts and same-length updates, nearly
  all of a redo, go through the slotted page's shortcuts
  (:func:`insert_plain`, :func:`overwrite_plain`, below);
  anything else through its redo handler, the page LSN stamped first.

Why it is safe: the entries, and so the decisions, are those of a scan
(a test holds :func:`redo_entries` to one). A page is fixed exactly when
the reference fixes it (its first entry that the dirty page table does not
settle), and nothing else is fixed in between two entries of a run, so the
buffer pool sees the same sequence of misses: its victims, the pages it
writes and when (the crash points of every seed), and the repairs of torn
pages are the reference's. The shortcuts write the bytes the handlers write
(a seeded test compares pages), or refuse and change nothing. A trace, or
record changes made for someone other than redo's user, take the reference
pass: it traces every entry, and the shortcuts place records as redo's user.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from typing import Any, Iterable, Iterator, Sequence

from minidb.fast.pagestore.restart.analysis import ScannedEntry, scanned_entry
from minidb.log.end import CheckedFile
from minidb.log.lsn import LSN
from minidb.pagestore.files.recpage import INSERT_HANDLER, REDO_USER, SPLICE_HANDLER, current_user
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER_SIZE, SLOT, SLOT_SIZE
from minidb.pagestore.pages.slotted import FREE_SLOT, SlottedPage
from minidb.pagestore.restart import redo as reference
from minidb.pagestore.restart.analysis import AnalysisResult
from minidb.pagestore.restart.redo import RedoResult, fix_or_repair, read_other_pages
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import REDO
from minidb.stats import Trace

_INSERT, _SPLICE, _OTHER = "insert", "splice", "other"

#: ``a < b`` for two LSNs neither of which is NULL_LSN, as the tuples compare (``LSN.__lt__`` checks for
#: NULL_LSN first, in Python, on every call): entries' LSNs, recovery LSNs and logged pages' LSNs never are
_before = tuple.__lt__


def redo_pass(log: Any, volume: Any, result: AnalysisResult, trace: Trace | None = None,
              kept: Sequence[ScannedEntry] = (), checked: CheckedFile | None = None) -> RedoResult:
    """The reference pass, run by run; ``kept``: the entries analysis read, ``checked``: the log's last file
    as opening checked it (both: :func:`redo_entries`)."""
    if (trace is not None and trace.enabled) or current_user() != REDO_USER:
        return reference.redo_pass(log, volume, result, trace)
    trace = Trace(enabled=False)
    done = RedoResult(result.redo_lsn)
    seen: set[tuple[int, int]] = set()
    if not result.redo_lsn.is_null:
        fix = lambda pid: fix_or_repair(log, volume, pid, result.dirty_pages, done, trace)  # noqa: E731
        redo_runs(redo_entries(log, result.redo_lsn, kept, checked), fix, volume.bp, result.dirty_pages, done,
                  seen)
    read_other_pages(log, volume, result.dirty_pages, done, seen, trace)
    return done


def page_changes() -> dict[int, str]:
    """The page store's redoable entry types, by code: whether their redo handler is the slotted page's
    insert, its splice (both with a shortcut) or another change."""
    kinds = {}
    for entry_type in PAGESTORE_TYPES:
        if entry_type.redoable:
            handler = REDO.get(entry_type.name)
            kinds[entry_type.code] = (_INSERT if handler is INSERT_HANDLER else
                                      _SPLICE if handler is SPLICE_HANDLER else _OTHER)
    return kinds


def redo_runs(entries: Iterable[ScannedEntry], fix: Any, bp: Any, dirty: Any, done: RedoResult,
              seen: set[tuple[int, int]]) -> None:
    """Redo ``entries`` in log order, the page of a run kept fixed (see the module documentation)."""
    kinds = page_changes()
    decisions = done.decisions
    key = page = page_lsn = last = None  # the page held, its LSN when fixed, its last entry redone (None: none)
    redone = skipped_not_dirty = skipped_page_newer = read = 0
    try:
        for lsn, entry_type, v, _size in entries:
            read += 1
            kind = kinds.get(entry_type.code) if entry_type is not None else None
            if kind is None:  # not redoable, or not the page store's
                continue
            where = (v["vol"], v["page"])
            known = dirty.get(where)
            if known is None or _before(lsn, known.rec_lsn):  # the page on disk has it
                skipped_not_dirty += 1
                decisions.append((lsn, "skipped"))
                continue
            if where != key:
                if page is not None:
                    _release(bp, page, last)
                    page = None
                page, key = fix(PageId(v["vol"], v["store"], v["page"])), where
                seen.add(where)
                page_lsn, last = page.lsn, None
                if page_lsn.is_null:  # never logged: the reference's comparison raises, so does this one
                    _ = page_lsn < lsn
            if not _before(page_lsn if last is None else last, lsn):  # the page was written after it
                skipped_page_newer += 1
                decisions.append((lsn, "skipped"))
                continue
            if not (insert_plain(page, v["slot"], v["data"]) if kind is _INSERT else
                    overwrite_plain(page, v["slot"], v["start"], len(v["old"]), v["new"]) if kind is _SPLICE
                    else False):
                if last is not None:  # the handler sees the page as the reference leaves it
                    page.lsn = last
                REDO[entry_type.name](page, v)
            if last is None:  # dirty since its first entry redone
                bp.lower_rec_lsn(page, lsn)
            last = lsn
            redone += 1
            decisions.append((lsn, "redone"))
    finally:
        done.entries_read += read
        done.redone += redone
        done.skipped_not_dirty += skipped_not_dirty
        done.skipped_page_newer += skipped_page_newer
        if page is not None:
            _release(bp, page, last)


def _release(bp: Any, page: Any, last: LSN | None) -> None:
    """Unfix the page of a run, its LSN stamped and dirty if an entry was redone on it."""
    if last is not None:
        page.lsn = last
    bp.unfix(page, dirty=last is not None)


def redo_entries(log: Any, start: LSN, kept: Sequence[ScannedEntry],
                 checked: CheckedFile | None = None) -> Iterator[ScannedEntry]:
    """The log's entries from ``start`` to its end, taking those analysis kept from memory.

    ``kept`` holds consecutive entries as analysis read them (from the
    master checkpoint on, possibly not to the end of the log). The log is
    read only where they do not reach: before the first kept entry (a
    recovery LSN older than the checkpoint) and after the last one, and
    the last file's entries come from ``checked`` (what opening the log
    checked) rather than from its bytes again. The entries and their order
    are those a scan from ``start`` would give.
    """
    if not kept or start >= kept[-1].end:
        yield from map(scanned_entry, log.scan(start, checked=checked))
        return
    first = kept[0].lsn
    if start < first:
        yield from map(scanned_entry, log.scan(start, first, checked))
        yield from kept
    else:
        yield from kept[bisect_left(kept, start, key=lambda entry: entry.lsn):]
    if kept[-1].end < log.end_lsn:
        yield from map(scanned_entry, log.scan(kept[-1].end, checked=checked))


# -- the slotted page's plainest cases, for redo ----------------------------------------------------
SLOT_FIELDS = struct.Struct("<HHHHHQ")  # nslots and the space fields (header offsets 30-47)
NSLOTS = struct.Struct("<H")  # nslots alone (header offset 30)

# Restart's redo applies tens of thousands of inserts and same-length updates, nearly all of them
# the plainest case: nothing reserved on the page, the record appended in the gap. These two functions
# do that case with one read and one write of the header; anything else they leave untouched and
# answer False, and the caller applies the entry through its redo handler (insert_at, splice), which
# decides everything through place_record. A seeded test compares the pages both give, byte for byte.


def insert_plain(page: SlottedPage, slot: int, data: bytes) -> bool:
    """:meth:`SlottedPage.insert_at` of ``data`` in ``slot`` by a user rolling back (redo's user), done only when
    nothing is reserved on the page, ``slot`` is free or new and the gap holds the record (and its new
    slot entries): the bytes :meth:`SlottedPage.insert_at` writes. False, the page unchanged, in any other case."""
    buf, size = page.buf, page.size
    nslots, nfree, nrsvd, xct_rsvd, end, rsvd_tid = SLOT_FIELDS.unpack_from(buf, 30)
    length = len(data)
    if nrsvd or rsvd_tid or slot < 0 or not 0 < length <= size - HEADER_SIZE - FOOTER_SIZE - SLOT_SIZE:
        return False
    table = size - FOOTER_SIZE - SLOT_SIZE * nslots  # where the slot table starts
    at = size - FOOTER_SIZE - SLOT_SIZE * (slot + 1)  # the slot's entry
    if slot < nslots:
        if SLOT.unpack_from(buf, at) != FREE_SLOT:
            return False
        new = 0
    else:
        new = slot + 1 - nslots
    need = length + SLOT_SIZE * new
    if need > nfree or table - end < need:
        return False
    if new:
        buf[at:table] = bytes(table - at)  # the new entries, free until the record's is written
    buf[end:end + length] = data
    SLOT.pack_into(buf, at, end, length)
    SLOT_FIELDS.pack_into(buf, 30, nslots + new, nfree - need, nrsvd, xct_rsvd, end + length, rsvd_tid)
    return True

def overwrite_plain(page: SlottedPage, slot: int, start: int, cut: int, data: bytes) -> bool:
    """:meth:`SlottedPage.splice` of ``data`` for ``cut`` bytes at ``start`` of ``slot``'s record when the record
    keeps its length (``len(data) == cut``): those bytes replaced in place, nothing else changes, as in
    :meth:`SlottedPage.splice`. False, the page unchanged, in any other case."""
    buf, size = page.buf, page.size
    if len(data) != cut or not 0 <= slot < NSLOTS.unpack_from(buf, 30)[0]:
        return False
    offset, length = SLOT.unpack_from(buf, size - FOOTER_SIZE - SLOT_SIZE * (slot + 1))
    if not offset or not length or not 0 <= start <= start + cut <= length:
        return False
    buf[offset + start:offset + start + cut] = data
    return True
