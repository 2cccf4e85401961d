"""The page store's storage layer: buffer-pool fixes, page cleaning, page allocation.

What it measures, each next to a baseline measured in the same run, on the
same files, with the same sequence of pages:

(a) *fix/unfix, hits*: ``fix(pid, SH)`` + ``unfix`` of pages already in the
    pool, in a seeded random order. Baseline: ``os.pread`` of the same pages
    from the volume file (served by the operating system's page cache): the
    cheapest way to get a page's bytes without a buffer pool of one's own.
(b) *fix/unfix, misses*: a pool of 16 frames over 2,048 pages, pages in a
    seeded random order, so nearly every fix misses and evicts a clean page
    (clock sweep, read through the disk layer, torn-page check). Baseline:
    ``os.pread`` of the same pages (page cache warm for both).
(c) *page cleaning*: 512 dirty pages (updates made and logged beforehand, the
    log synced, so the write-ahead rule costs nothing here) written by
    ``clean()``: sorted, contiguous pages coalesced into writes of up to 8
    pages, one fsync. Baseline: one ``os.pwrite`` per page, then one fsync.
(d) *page allocation*: ``alloc_page`` in append mode, then in compact mode
    refilling pages freed every other one: each allocation fixes extent-map
    pages and logs one ``alloc_pages_in_ext`` entry (plus ``create_ext_list``
    when an extent is added), without an fsync. Baseline: growing a file by
    one zeroed page with ``os.pwrite``, what a heap file without an extent
    map does to allocate a page.

Every figure is the median of :data:`REPEATS` repetitions, the scenarios
interleaved, in fresh files under
``bench/out/``; pages are 8192 bytes, extents 8 pages. Each repetition is made
under the main implementation and the reference (:func:`bench.report.both`;
log, buffer pool and volume are those :func:`bench.report.chosen` finds),
whose minidb rate gives the fast ÷ reference table.
"""

from __future__ import annotations

import os
import random

from tqdm import tqdm

from bench import report
from minidb import impl
from minidb.io import OSDisk
from minidb.log import TRACE, LogManager
from minidb.pagestore import EX, SH, AllocMode, BufferPool, PageId, PageTag, Volume
from minidb.pagestore.volume.volfile import volume_file_name

SEED = 2010
PAGE_SIZE = 8192
EXT_SZ = 8
REPEATS = report.REPEATS
HIT_FIXES, HIT_PAGES = 200_000, 256
MISS_FIXES, MISS_PAGES, MISS_FRAMES = 30_000, 2048, 16
CLEAN_PAGES = 512
ALLOC_PAGES = 8_000
VOLUME_PAGES = 16_384

MINIDB, RAW = "minidb", "raw"


def open_volume(path: str, frames: int) -> tuple[OSDisk, LogManager, BufferPool, Volume]:
    disk = OSDisk(os.path.join(path, "db"), create=True)
    log = impl.current(LogManager)(disk, file_max=256 * 1024 * 1024)
    bp = impl.current(BufferPool)(frames, page_size=PAGE_SIZE, log=log)
    vol = impl.current(Volume).format(disk, bp, log, num_pages=VOLUME_PAGES, ext_sz=EXT_SZ)
    return disk, log, bp, vol


def volume_path(disk: OSDisk) -> str:
    return disk.where(volume_file_name(1))


def fill_pages(vol: Volume, log: LogManager, bp: BufferPool, count: int) -> list[PageId]:
    """Allocate and format ``count`` pages of a new store, write them out: a volume with data."""
    store = vol.create_store()
    pids = []
    for _ in range(count):
        pid = vol.alloc_page(store, AllocMode.APPEND)
        page = bp.fix(pid, EX, virgin=True)
        page.format(pid, PageTag.FILE)
        page.insert(b"x" * 100)
        bp.unfix(page, dirty=True)
        pids.append(pid)
        if len(pids) % 256 == 0:
            bp.clean()
    log.sync()
    bp.force_all()
    return pids


def pread_pages(path: str, pages: list[int]) -> float:
    fd = os.open(path, os.O_RDONLY)
    try:
        def work() -> None:
            for number in pages:
                os.pread(fd, PAGE_SIZE, number * PAGE_SIZE)
        return report.timed(work)
    finally:
        os.close(fd)


# -- (a) and (b): fixes ---------------------------------------------------------------
def fixes(frames: int, page_count: int, fix_count: int, rng: random.Random) -> dict[str, float]:
    with report.scratch_dir("pagestore-fix-") as path:
        disk, log, bp, vol = open_volume(path, max(frames, 16))
        pids = fill_pages(vol, log, bp, page_count)
        sequence = [rng.choice(pids) for _ in range(fix_count)]
        small = impl.current(BufferPool)(frames, page_size=PAGE_SIZE, log=log)
        small.register(vol.file)
        for pid in pids[:frames]:  # warm: for hits, every page is resident
            small.unfix(small.fix(pid, SH))
        pread_pages(volume_path(disk), [p.page for p in pids])  # the OS page cache, warm for both

        def work() -> None:
            fix, unfix = small.fix, small.unfix
            for pid in sequence:
                unfix(fix(pid, SH))

        seconds = report.timed(work)
        raw = pread_pages(volume_path(disk), [p.page for p in sequence])
        log.close()
        return {MINIDB: fix_count / seconds, RAW: fix_count / raw,
                "hit_rate": small.stats["nHits"] / small.stats["nFixes"]}


# -- (c): the cleaner ------------------------------------------------------------------
def cleaning(rng: random.Random) -> dict[str, float]:
    with report.scratch_dir("pagestore-clean-") as path:
        disk, log, bp, vol = open_volume(path, CLEAN_PAGES + 16)
        pids = fill_pages(vol, log, bp, CLEAN_PAGES)
        for pid in rng.sample(pids, len(pids)):  # dirty every page, in random order
            page = bp.fix(pid, EX)
            page.insert(b"y" * 50)
            page.lsn = log.append(TRACE, {"message": f"update {pid}"})
            bp.unfix(page, dirty=True)
        log.sync()
        images = {}
        for pid in pids:
            page = bp.fix(pid, SH)
            images[pid.page] = bytes(page.buf)
            bp.unfix(page)
        writes_before = bp.stats["nWriteRequests"]
        seconds = report.timed(bp.clean)
        writes = bp.stats["nWriteRequests"] - writes_before
        fd = os.open(volume_path(disk), os.O_WRONLY)
        order = sorted(images)

        def raw_work() -> None:
            for number in order:
                os.pwrite(fd, images[number], number * PAGE_SIZE)
            os.fsync(fd)

        raw = report.timed(raw_work)
        os.close(fd)
        log.close()
        return {MINIDB: CLEAN_PAGES / seconds, RAW: CLEAN_PAGES / raw, "writes": writes}


# -- (d): allocation ---------------------------------------------------------------------
def allocation(mode: str) -> dict[str, float]:
    with report.scratch_dir("pagestore-alloc-") as path:
        disk, log, bp, vol = open_volume(path, 64)
        store = vol.create_store()
        if mode == "append":
            def work() -> None:
                for _ in range(ALLOC_PAGES):
                    vol.alloc_page(store, AllocMode.APPEND)
            count = ALLOC_PAGES
        else:
            pids = [vol.alloc_page(store, AllocMode.APPEND) for _ in range(2 * ALLOC_PAGES)]
            for pid in pids[::2]:
                vol.free_page(pid, free_empty_extent=False)

            def work() -> None:
                for _ in range(ALLOC_PAGES):
                    vol.alloc_page(store, AllocMode.COMPACT)
            count = ALLOC_PAGES
        seconds = report.timed(work)
        stats = vol.stats.as_dict()
        log.close()
        fd = os.open(os.path.join(path, "heap.dat"), os.O_WRONLY | os.O_CREAT, 0o644)
        zero = bytes(PAGE_SIZE)

        def raw_work() -> None:
            for number in range(count):
                os.pwrite(fd, zero, number * PAGE_SIZE)

        raw = report.timed(raw_work)
        os.close(fd)
        return {MINIDB: count / seconds, RAW: count / raw, "hits": stats["nReservedCacheHits"],
                "extents": stats["nExtentsAllocated"]}


# -- the report ------------------------------------------------------------------------------
SCENARIOS = [
    ("a", "(a) fix/unfix, hits", "fixes/s", "os.pread, same pages",
     lambda rng: fixes(HIT_PAGES, HIT_PAGES, HIT_FIXES, rng)),
    ("b", "(b) fix/unfix, misses", "fixes/s", "os.pread, same pages",
     lambda rng: fixes(MISS_FRAMES, MISS_PAGES, MISS_FIXES, rng)),
    ("c", "(c) page cleaner", "pages/s", "os.pwrite per page + fsync", lambda rng: cleaning(rng)),
    ("d", "(d) alloc_page, append", "pages/s", "os.pwrite growing a file", lambda rng: allocation("append")),
    ("e", "(e) alloc_page, compact (refill)", "pages/s", "os.pwrite growing a file",
     lambda rng: allocation("compact")),
]


def closing(ratio: dict[str, float], writes: float) -> str:
    """What the ratios say, in words (written from the measured numbers)."""
    return (
        f"A fix that hits runs at {ratio['a']:.2f}× the rate of one `os.pread` of the same page from the "
        "page cache: it takes the pool mutex, looks the page up, pins it and takes its latch, all in Python. "
        f"A miss runs at {ratio['b']:.2f}×: it adds the clock sweep, the read through the disk layer into the "
        f"frame and the torn-page check. The cleaner runs at {ratio['c']:.2f}× page-by-page `os.pwrite` with "
        f"the same fsync: its {CLEAN_PAGES} pages went out in {writes:g} writes instead of "
        f"{CLEAN_PAGES}, but copying each page under its latch and the bookkeeping in Python cost more than "
        f"the saved system calls. An allocation runs at {ratio['d']:.2f}× (append) and {ratio['e']:.2f}× "
        "(compact) of growing a file by a page: it fixes store-map and extent-map pages, encodes, checksums "
        "and buffers a log entry, and keeps the caches, the price of knowing after a crash exactly which "
        "pages each store owns."
    )


def run() -> str:
    pairs: dict[str, list[tuple[dict[str, float], dict[str, float] | None]]] = {key: [] for key, *_ in SCENARIOS}
    with tqdm(total=len(SCENARIOS) * REPEATS, desc="bench pagestore", unit="run") as progress:
        for repeat in range(REPEATS):
            for key, title, *_rest, measure in SCENARIOS:
                progress.set_postfix_str(title)
                pairs[key].append(report.both(lambda measure=measure, seed=SEED + repeat: measure(random.Random(seed))))
                progress.update()
    results = {key: [main for main, _ in runs] for key, runs in pairs.items()}
    speedups = [report.Speedup.of(title, unit, report.pick(pairs[key], MINIDB)) for key, title, unit, *_ in SCENARIOS]
    rows, ratios = [], []
    ratio: dict[str, float] = {}
    for key, title, unit, baseline, _ in SCENARIOS:
        mine = report.median([r[MINIDB] for r in results[key]])
        raw = report.median([r[RAW] for r in results[key]])
        ratio[key] = mine / raw
        rows.append([title, "minidb", f"{report.fmt_rate(mine)} {unit}"])
        rows.append(["", baseline, f"{report.fmt_rate(raw)} {unit}"])
        ratios.append([title, report.fmt_ratio(mine / raw)])
    hit_rate = report.median([r["hit_rate"] for r in results["b"]])
    writes = report.median([r["writes"] for r in results["c"]])
    hits = report.median([r["hits"] for r in results["e"]])
    extents = report.median([r["extents"] for r in results["d"]])
    return "\n".join([
        "## Page store: buffer pool and page allocation (`bench/pagestore_bench.py`)",
        "",
        f"Measured {report.run_date()} on {report.machine_line()};",
        f"files on {report.file_system()}.",
        "",
        f"Pages of {PAGE_SIZE} bytes, extents of {EXT_SZ} pages, a volume of {VOLUME_PAGES:,} pages; "
        f"median of {REPEATS} runs. The baselines do the same I/O on the same pages with no software "
        "in the way; the ratio is minidb's rate over the baseline's.",
        "",
        f"- **(a)** {HIT_FIXES:,} fixes (SH) and unfixes of {HIT_PAGES} resident pages in random order.",
        f"- **(b)** {MISS_FIXES:,} fixes of random pages out of {MISS_PAGES:,} through {MISS_FRAMES} frames "
        f"(hit rate {hit_rate:.1%}): each miss runs the clock and reads a page.",
        f"- **(c)** {CLEAN_PAGES} dirty pages written by the cleaner in {writes:g} writes (sorted, coalesced, "
        "one fsync), against one `os.pwrite` per page and one fsync.",
        f"- **(d)** {ALLOC_PAGES:,} page allocations in append mode ({extents:g} extents linked), each logged, "
        "no fsync.",
        f"- **(e)** {ALLOC_PAGES:,} compact allocations refilling pages freed every other one "
        f"({hits:g} reserved-page cache hits).",
        "",
        report.table(["scenario", "system", "rate"], rows, right=[2]),
        "",
        report.table(["scenario", "minidb ÷ baseline"], ratios, right=[1]),
        "",
        closing(ratio, writes),
        "",
        report.speedup_table(speedups),
    ])
