"""Restart, pass 2: redo. Repeat history from the redo LSN, so the pages are as at the crash.

Redo reads the log forward from the redo LSN (analysis' smallest recovery
LSN) and, for each entry, decides (ARIES' test, Shore's "general protocol"):

1. not redoable (no flag R): ignored;
2. its page is not in the dirty page table, or the entry is older than the
   page's recovery LSN: the page on disk already has it, *skipped* without
   reading the page;
3. otherwise the page is fixed; if the *page LSN* is older than the entry,
   the entry's redo handler (the one that made the change in the first
   place) applies it and the page takes the entry's LSN: *redone*; if not,
   the page was written after the change: *skipped*.

Redo repeats *all* history, losers' entries and CLRs included; undo comes
after. It logs nothing; pages it changes are dirty in the pool and written
by the usual rules (the write-ahead rule holds: their LSNs are in the log).

**Torn pages.** A page whose last write reached the disk only in part has
different LSNs in its header and footer, or a checksum that does not match
(:mod:`minidb.pagestore.pages.page`). Redo cannot start from it, so it *rebuilds*
it: from the page's image when
the volume was formatted (store 0's pages) or from zeros (any other page),
applying every entry of the log that names the page, oldest first. The log
is never truncated here, so it holds the page's whole history since the
volume was formatted (a page of a file starts with ``page_format``). After
the scan, the pages of the dirty page table not yet read and store 0's
pages (whose advisory bucket maps change without log entries) are read as
well, so no torn page is left behind. Only these pages can have been
written since their last durable image; a bad page anywhere else is found
when it is read, and is corruption
(:class:`~minidb.pagestore.errors.BadPageError`).

Worked example: dirty page table {p(1.3.12): 0x1/0x3a0, p(1.3.13):
0x1/0x600}, redo LSN 0x1/0x3a0. Entry 0x1/0x3a0 on p(1.3.12), whose page LSN
on disk is 0x1/0x280: redone. Entry 0x1/0x420 on p(1.0.1), not in the table:
skipped. Entry 0x1/0x600 on p(1.3.13), page LSN 0x1/0x600 (written after
it): skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minidb.log.files import file_name
from minidb.log.lsn import LSN
from minidb.pagestore.errors import BadPageError
from minidb.pagestore.volume.format import format_pages
from minidb.pagestore.ids import PageId
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import REDO
from minidb.pagestore.restart.analysis import AnalysisResult
from minidb.stats import Trace


@dataclass
class RedoResult:
    start: LSN
    entries_read: int = 0
    redone: int = 0
    skipped_not_dirty: int = 0
    skipped_page_newer: int = 0
    torn_pages_rebuilt: int = 0
    decisions: list[tuple[LSN, str]] = field(default_factory=list)  # (entry, "redone" | "skipped")

    def summary(self) -> str:
        return (f"redo: from {self.start}, {self.entries_read} entries read, {self.redone} redone, "
                f"{self.skipped_not_dirty} skipped (page not dirty or older than its recovery LSN), "
                f"{self.skipped_page_newer} skipped (page LSN newer), {self.torn_pages_rebuilt} torn pages rebuilt")


def redo_pass(log: Any, volume: Any, result: AnalysisResult, trace: Trace | None = None) -> RedoResult:
    """Pass 2 (see the module documentation)."""
    trace = trace if trace is not None else Trace(enabled=False)
    bp = volume.bp
    done = RedoResult(result.redo_lsn)
    dirty = result.dirty_pages
    seen: set[tuple[int, int]] = set()
    if result.redo_lsn.is_null:
        trace.emit("redo: the dirty page table is empty: nothing to redo")
    else:
        trace.emit("redo: from %s", result.redo_lsn)
        for entry in log.scan(result.redo_lsn):
            done.entries_read += 1
            entry_type = entry.entry_type
            if entry_type is None or not entry_type.redoable or entry_type.owner != PAGESTORE_TYPES.owner:
                continue
            v = entry.values
            pid = PageId(v["vol"], v["store"], v["page"])
            known = dirty.get(pid.key)
            if known is None or entry.lsn < known.rec_lsn:
                done.skipped_not_dirty += 1
                done.decisions.append((entry.lsn, "skipped"))
                if trace.enabled:
                    why = "not in the dirty page table" if known is None else f"older than rec_lsn {known.rec_lsn}"
                    trace.emit("redo: %s %s %s: %s: skipped", entry.lsn, entry_type.name, pid, why)
                continue
            page = _fix(bp, log, volume, pid, done, trace)
            seen.add(pid.key)
            applied = False
            try:
                if page.lsn < entry.lsn:
                    old = page.lsn
                    REDO[entry_type.name](page, v)
                    page.lsn = entry.lsn
                    bp.lower_rec_lsn(page, entry.lsn)
                    applied = True
                    done.redone += 1
                    done.decisions.append((entry.lsn, "redone"))
                    trace.emit("redo: %s %s %s: page LSN %s is older: redone", entry.lsn, entry_type.name, pid, old)
                else:
                    done.skipped_page_newer += 1
                    done.decisions.append((entry.lsn, "skipped"))
                    trace.emit("redo: %s %s %s: page LSN %s is not older: skipped", entry.lsn, entry_type.name, pid,
                               page.lsn)
            finally:
                bp.unfix(page, dirty=applied)
    # Pages that may be torn but that no entry made us read: the rest of the dirty
    # page table, and store 0's pages (their bucket maps change without entries).
    others = [d.pid for key, d in sorted(dirty.items()) if key not in seen]
    others += [PageId(volume.vid, 0, n) for n in range(1, volume.header.store0_pages)
               if (volume.vid, n) not in seen and (volume.vid, n) not in dirty]
    for pid in others:
        bp.unfix(_fix(bp, log, volume, pid, done, trace, mode=SH))
    trace.emit("%s", done.summary())
    return done


def _fix(bp: Any, log: Any, volume: Any, pid: PageId, done: RedoResult, trace: Trace, mode: Any = EX) -> Any:
    """Fix ``pid``, rebuilding it from the log first if it is torn on disk."""
    try:
        return bp.fix(pid, mode)
    except BadPageError as torn:
        trace.emit("redo: %s", torn)
        count = rebuild_page(log, volume, pid)
        done.torn_pages_rebuilt += 1
        trace.emit("redo: %s rebuilt from its initial image and %d log entries", pid, count)
        return bp.fix(pid, mode)


def rebuild_page(log: Any, volume: Any, pid: PageId) -> int:
    """Rebuild page ``pid`` in the pool from its initial image and every entry naming it; return their number."""
    if getattr(log, "head", 1) > 1:
        raise BadPageError(f"{pid}: the page is torn on disk and cannot be rebuilt: the log before "
                           f"{file_name(log.head)} was scavenged, and with it the page's history")
    bp = volume.bp
    page = bp.fix(pid, EX, virgin=True)
    count = 0
    try:
        if pid.page < volume.header.store0_pages:
            page.buf[:] = format_pages(volume.header)[pid.page].buf
        else:
            page.buf[:] = bytes(len(page.buf))
        for entry in log.scan():
            entry_type = entry.entry_type
            if entry_type is None or not entry_type.redoable or entry_type.owner != PAGESTORE_TYPES.owner:
                continue
            v = entry.values
            if (v["vol"], v["page"]) != pid.key:
                continue
            if page.lsn < entry.lsn:
                REDO[entry_type.name](page, v)
                page.lsn = entry.lsn
                count += 1
    finally:
        bp.unfix(page, dirty=True)
    return count
