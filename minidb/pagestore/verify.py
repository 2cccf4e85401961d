"""Checking a whole page store: its log, its restart, its maps and every allocated page.

:func:`verify_pagestore` is what ``minidb verify DIR`` runs on a directory
holding a volume (``v1.vol``). It never changes the directory: it copies
the files into memory (a :class:`~minidb.io.SimDisk` whose messages name
the real files) and, on that copy,

1. checks that the volume and a whole log are there
   (:func:`~minidb.pagestore.restart.master.check_volume_and_log`);
2. opens the storage manager, so restart runs (redo rebuilds the pages a
   crash may have torn; anything it cannot rebuild is an error);
3. checks the extent and store maps (:meth:`Volume.check`);
4. reads every page of store 0 and every allocated page of every store
   through the buffer pool, which checks each page's checksum, its LSN
   pair and its LSN against the end of the log, and checks that the page's
   header names it. An allocated page that reads as zeros is lost if the
   log (which the page store never truncates) holds an entry that wrote
   it; otherwise it was allocated and never used (the volume layer alone
   allocates pages without formatting them);
5. checks the store directory and the root index
   (:func:`~minidb.pagestore.directory.check_directory`): both B+trees
   sound, every descriptor decodes, every store in use has its entry and
   every entry's stores are in use, every index's tree sound, every name
   pointing at an index (before the files are read through it);
6. checks the large records (:meth:`FileManager.check_large_records`):
   every page of a file's large-record store referenced by one record,
   once, and each record's data pages as many and as full as its length
   says.

The first problem raises a :class:`~minidb.errors.CorruptionError` (a
:class:`~minidb.pagestore.errors.PageStoreCorruptionError` naming the page
or volume, or a :class:`~minidb.errors.LogCorruptionError` naming the log
file and offset). Worked example: a 128-page volume of 512-byte pages with
one file of four small records has 4 stores (the directory, the root
index, the file's two stores) and 8 pages to check: the header, 4 map
pages, the roots of the directory and the root index, and the file's page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minidb.io import Disk, SimDisk
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.directory import check_directory
from minidb.pagestore.errors import VolumeCorruptionError
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import PageTag, lost_page
from minidb.pagestore.restart.master import MASTER_FILE
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES


@dataclass(frozen=True)
class PageStoreReport:
    volume: str
    stores: int
    pages: int

    def __str__(self) -> str:
        return f"page store {self.volume}: {self.stores} stores, {self.pages} pages checked"


class _MemoryCopy(SimDisk):
    """A copy of a disk in memory whose messages name the original's files."""

    def __init__(self, disk: Disk):
        super().__init__("verify")
        self.original = disk
        for name in disk.list():
            with disk.open(name) as src:
                data = src.read_all()
            with self.open(name, create=True) as dst:
                dst.write(0, data)
                dst.fsync()

    def where(self, name: str = "") -> str:
        return self.original.where(name)


def is_pagestore(disk: Disk) -> bool:
    """A volume, or the master record that only a page store writes (its volume lost)."""
    return disk.exists(volume_file_name(1)) or disk.exists(MASTER_FILE)


def verify_pagestore(disk: Disk) -> PageStoreReport:
    """Check the page store on ``disk`` without changing it (see the module documentation)."""
    sm = StorageManager.open(_MemoryCopy(disk), restart_trace=False)
    volume = sm.volume
    problems = volume.check()
    if problems:
        raise VolumeCorruptionError(f"{volume.file.where()}: inconsistent maps: {'; '.join(problems)}")
    wanted = [PageId(volume.vid, 0, n) for n in range(volume.header.store0_pages)]
    stores = volume.stores()
    for stid in stores:
        wanted += volume.store_pages(stid)
    written = {(e.values["vol"], e.values["page"]) for e in sm.log.scan()
               if e.entry_type is not None and e.entry_type.redoable and e.entry_type.owner == PAGESTORE_TYPES.owner}
    for pid in wanted:
        page = sm.bp.fix(pid, SH)
        try:
            if page.never_written() and pid.key not in written:
                continue  # allocated, never used
            if page.never_written() or page.pid != pid or page.tag == PageTag.FREE:
                raise lost_page(page, pid, f"{volume.file.where(pid.page)}: allocated to {pid.stid}, it")
        finally:
            sm.bp.unfix(page)
    _report(volume, "store directory", check_directory(volume, sm.directory, sm.root_index))
    _report(volume, "large records", sm.files.check_large_records())
    return PageStoreReport(volume.file.name, len(stores), len(wanted))


def _report(volume: Any, what: str, problems: list[str]) -> None:
    if problems:
        raise VolumeCorruptionError(f"{volume.file.where()}: {what}: {'; '.join(problems[:3])}"
                                    + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
