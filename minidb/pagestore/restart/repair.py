"""Torn pages at restart: a page whose last write reached the disk only in part, rebuilt from its image.

A page whose last write was torn has different LSNs in its header and
footer, or a checksum that does not match (:mod:`minidb.pagestore.pages.page`).
Redo cannot start from it, so restart *repairs* it from the page's newest full
image (a ``page_image``, or the ``page_format`` of a fresh page) at or after
the page's recovery LSN in the dirty page table, then redoes the page's later
entries on it (:func:`rebuild_page`). A page can only be torn by a write of a
dirty page, and a dirty page's recovery LSN is the LSN of its image
(:mod:`minidb.pagestore.wal.pageimage`), so the image is there, and the log
before the redo LSN is never read: it may be gone (scavenged). The pages of
TMP, LOAD and INSERT stores are never in a checkpoint's table, so a repair
reads one only from its ``page_format``, which is its image. A bad page with
no image there (not in the dirty page table, or damaged rather than torn) is
corruption, named (:class:`~minidb.pagestore.errors.PageStoreCorruptionError`),
never silently replaced.

Redo fixes every page through :func:`fix_or_repair`; after its scan, redo
reads the pages of the dirty page table it has not fixed and store 0's pages
(:func:`read_other_pages`), so no torn page is left behind (a bad page
anywhere else is found when it is read).

Worked example: p(1.3.13) is in the dirty page table with recovery LSN
0x1/0x600, the LSN of the ``page_image`` logged when it became dirty, and
its last write was torn. Redo's fix finds the mismatch; a scan from
0x1/0x600 finds that image, restores it and redoes the page's two later
entries: ``p(1.3.13) repaired from its image at 0x1/0x600 and 2 later
entries (log read from 0x1/0x600)``.

These are given to every redo pass, the reference's
(:mod:`~minidb.pagestore.restart.redo`) and a course project's, which
decide only which entries to redo.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from minidb.log.lsn import LSN
from minidb.pagestore.buffer.latch import EX, SH
from minidb.pagestore.errors import BadPageError, PageStoreCorruptionError
from minidb.pagestore.ids import PageId
from minidb.pagestore.restart.results import PageRepair, RedoResult
from minidb.pagestore.wal.logdef import PAGE_FORMAT, PAGE_IMAGE, PAGESTORE_TYPES, UNLOGGED_PAGE_IMAGE
from minidb.pagestore.wal.logrec import REDO
from minidb.stats import Trace

__all__ = ["fix_or_repair", "rebuild_page", "read_other_pages"]


def fix_or_repair(log: Any, volume: Any, pid: PageId, dirty: Mapping[tuple[int, int], Any], done: RedoResult,
                  trace: Trace, mode: Any = EX) -> Any:
    """Fix ``pid``, repairing it from its image first if it is torn on disk."""
    bp = volume.bp
    try:
        return bp.fix(pid, mode)
    except BadPageError as torn:
        trace.emit("redo: %s", torn)
        known = dirty.get(pid.key)
        if known is None:
            raise PageStoreCorruptionError(f"{torn}; {pid} is not in the dirty page table, so the log holds "
                                           f"no image to repair it from") from None
        repair = rebuild_page(log, volume, pid, known.rec_lsn, str(torn))
        done.pages_repaired.append(repair)
        trace.emit("redo: %s", repair)
        return bp.fix(pid, mode)


def rebuild_page(log: Any, volume: Any, pid: PageId, start: LSN, why: str = "bad page") -> PageRepair:
    """Rebuild page ``pid`` in the pool from its newest image at or after ``start`` and the entries after it."""
    image, later = None, []
    for entry in log.scan(start):
        entry_type = entry.entry_type
        if (entry_type is None or not entry_type.redoable or entry_type.owner != PAGESTORE_TYPES.owner
                or (entry.values["vol"], entry.values["page"]) != pid.key):
            continue
        if entry_type in (PAGE_IMAGE, PAGE_FORMAT, UNLOGGED_PAGE_IMAGE):
            image, later = entry, []
        elif image is not None:
            later.append(entry)
    if image is None:
        raise PageStoreCorruptionError(f"{why}; the log from {pid}'s recovery LSN {start} on holds no image "
                                       f"of it to repair it from")
    bp = volume.bp
    page = bp.fix(pid, EX, virgin=True)
    try:
        for entry in [image] + later:
            REDO[entry.type_name](page, entry.values)
            page.lsn = entry.lsn
        bp.lower_rec_lsn(page, image.lsn)
    finally:
        bp.unfix(page)
    return PageRepair(pid, start, image.lsn, len(later))


def read_other_pages(log: Any, volume: Any, dirty: Mapping[tuple[int, int], Any], done: RedoResult,
                     seen: set[tuple[int, int]], trace: Trace) -> None:
    """Read the pages that may be torn but that no entry made redo fix (``seen``): the rest of the dirty
    page table, and store 0's pages of every mounted volume, so that damage to a map is found at restart."""
    others = [d.pid for key, d in sorted(dirty.items()) if key not in seen]
    for each in volume.mounted():
        others += [PageId(each.vid, 0, n) for n in range(1, each.header.store0_pages)
                   if (each.vid, n) not in seen and (each.vid, n) not in dirty]
    for pid in others:
        volume.bp.unfix(fix_or_repair(log, volume, pid, dirty, done, trace, mode=SH))
