"""The volume's crash test: the write-ahead rule and redo, at every crash point.

A seeded workload formats a small volume and runs random volume operations
(create stores, allocate pages in append and compact mode, free pages, drop
stores) through a buffer pool of two to four frames, so extent-map and
store-map pages are evicted and written at arbitrary moments, with
occasional page cleaning and log syncs. Then, for every write, truncate and
fsync after formatting, and each way a crash can treat unsynced writes
(nothing, everything, torn variants of the last write, random subsets):

1. the log is opened on the crashed image (cutting a torn tail) and the
   volume mounted with a fresh buffer pool;
2. every surviving log entry is redone (:func:`minidb.pagestore.wal.logrec.redo`:
   applied only where the page LSN is older than the entry);
3. every store-0 page must then be *byte for byte* the page that applying
   the surviving entries to the freshly formatted volume gives.

A page written before the log covered its LSN would carry a change whose
entry the crash lost; redo cannot take it back, so step 3 catches any breach
of the write-ahead rule. A page whose write was torn is *detected* when it
is read (its header and footer LSNs differ, or its checksum does not
match): that is the expected outcome of a torn page write, not a violation
(here redo is run alone; restart repairs such a page from its full page
image, :mod:`minidb.pagestore.wal.pageimage`). Any
other failure is a violation.

This checks the storage layer alone. Transactions, rollback and checkpoints
come with the next layer and its own crash test.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from minidb.crashtest.sweep import SweepResult, sweep_crash_points
from minidb.errors import MinidbError
from minidb.io import SimDisk
from minidb.log import LogManager
from minidb.pagestore import (
    BUFFER_POOL,
    PAGESTORE_TYPES,
    SH,
    AllocMode,
    BadPageError,
    PageId,
    PageStoreError,
    Volume,
    VolumeFullError,
    VolumeHeader,
    redo,
    volume_file_name,
)
from minidb.pagestore.volume.format import format_pages
from minidb.pagestore.wal.logrec import REDO

PAGE_SIZE, NUM_PAGES, EXT_SZ = 512, 64, 4
FILE_MAX = 4096


def _clock() -> float:
    return 0.0


@dataclass(frozen=True)
class Workload:
    disk: SimDisk
    frames: int
    formatted_at: int  # the event index of the fsync that made the volume durable
    models: tuple[dict[int, bytes], ...]  # store-0 page images after the first k page-store entries


def run_workload(seed: int, ops: int) -> Workload:
    rng = random.Random(seed)
    frames = rng.choice([2, 3, 4])
    disk = SimDisk(f"crashtest-volume-{seed}")
    log = LogManager(disk, file_max=FILE_MAX, buffer_size=rng.choice([64, 512, 4096]), clock=_clock)
    bp = BUFFER_POOL.call(frames, page_size=PAGE_SIZE, log=log)
    vol = Volume.format(disk, bp, log, num_pages=NUM_PAGES, ext_sz=EXT_SZ)
    formatted_at = max(e.index for e in disk.events if e.kind == "fsync" and e.name == volume_file_name(1))
    stores, pages = [vol.create_store()], []
    for _ in range(ops):
        roll = rng.random()
        try:
            if roll < 0.1 and len(stores) < 5:
                stores.append(vol.create_store())
            elif roll < 0.55:
                pages.append(vol.alloc_page(rng.choice(stores), rng.choice(list(AllocMode))))
            elif roll < 0.8 and pages:
                vol.free_page(pages.pop(rng.randrange(len(pages))))
            elif roll < 0.85 and len(stores) > 1:
                gone = stores.pop(rng.randrange(len(stores)))
                vol.drop_store(gone)
                pages = [p for p in pages if p.stid != gone]
            elif roll < 0.93:
                bp.clean()
            else:
                log.sync()
        except VolumeFullError:
            pass
    log.flush()
    return Workload(disk, frames, formatted_at, _models(vol.header, log))


def _models(header: VolumeHeader, log: LogManager) -> tuple[dict[int, bytes], ...]:
    """Store-0 pages after each prefix of the log, by applying the entries to formatted pages."""
    pages = {p.pid.page: p for p in format_pages(header)}
    models = [{n: bytes(p.buf) for n, p in pages.items()}]
    for entry in log.scan():
        if entry.entry_type is None or entry.entry_type.owner != PAGESTORE_TYPES.owner:
            continue
        page = pages[entry.values["page"]]
        REDO[entry.type_name](page, entry.values)
        page.lsn = entry.lsn
        models.append({n: bytes(p.buf) for n, p in pages.items()})
    return tuple(models)


def check_point(workload: Workload, image: SimDisk) -> str | None:
    """None if redo on the crashed image gives the model's pages (or finds a torn page); else what is wrong."""
    try:
        log = LogManager(image, file_max=FILE_MAX, clock=_clock)
        entries = [e for e in log.scan() if e.entry_type is not None
                   and e.entry_type.owner == PAGESTORE_TYPES.owner]
        bp = BUFFER_POOL.call(workload.frames, page_size=PAGE_SIZE, log=log)
        vol = Volume(image, bp, log)
        for entry in entries:
            redo(bp, entry)
        model = workload.models[len(entries)]
        for number in range(1, vol.header.store0_pages):
            page = bp.fix(PageId(1, 0, number), SH)
            try:
                if bytes(page.buf) != model[number]:
                    return (f"after redo of {len(entries)} entries, store-0 page {number} has LSN {page.lsn}, "
                            f"not the model's page")
            finally:
                bp.unfix(page)
    except BadPageError:
        return None  # a torn page write, detected when read back (LSN pair or checksum)
    except (MinidbError, PageStoreError) as e:
        return f"recovery failed: {e}"
    return None


def crash_sweep(seed: int, ops: int, torn_variants: int = 1, random_variants: int = 1) -> SweepResult:
    """Every crash point of workload ``seed``; what a crash image must hold does not depend on when the crash
    came, so each distinct image is checked once."""
    workload = run_workload(seed, ops)
    return sweep_crash_points(workload.disk, workload.formatted_at + 1, seed,
                              lambda image, event: check_point(workload, image), (), torn_variants,
                              random_variants, restart_crashes=0.0, memo_key=lambda event: None)
