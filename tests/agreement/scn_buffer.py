"""The buffer pool's fixes counted: hits, misses and evictions in a pool smaller than the volume.

``fixes_in_a_small_pool`` formats a volume, fills pages of a store, then
fixes seeded pages SH and EX through a pool of a few frames (so fixes hit,
miss and evict dirty and clean victims), changes some, asks for a page whose
latch is held EX conditionally (a conditional fix that fails) and fixes with
wrong arguments (the error's words); the pages are forced and the disk
crashes. The pool drives the pages itself, no file manager in between, so
the fixes asked are the same under every implementation. The pool's
counters, each page's bytes read back, and the disk's bytes and events must
be the reference's.

``fixes_in_a_pool_short_of_clean_frames`` does the same through a pool of
24 frames over 60 pages, most fixes EX and changing the page, so the clock's
pass 1 passes its ``dirty_skips`` and the pool writes dirty victims with the
dirty frames ahead of the hand.
"""

from __future__ import annotations

import random
from typing import Any

from minidb import impl
from minidb.errors import MinidbError
from minidb.io import CrashMode, SimDisk
from minidb.log import LogManager
from minidb.pagestore import EX, SH, AllocMode, BufferPool, PageTag, Volume

from tests.agreement.scenarios import disk_state, scenario

PAGE_SIZE = 512


@scenario("pagestore.buffer.bufferpool.BufferPool")
def fixes_in_a_small_pool(seed: int) -> dict[str, Any]:
    return _fixes(seed, frames=5, pages=16, ex_share=0.3)


@scenario("pagestore.buffer.bufferpool.BufferPool")
def fixes_in_a_pool_short_of_clean_frames(seed: int) -> dict[str, Any]:
    return _fixes(seed, frames=24, pages=60, ex_share=0.9)


def _fixes(seed: int, frames: int, pages: int, ex_share: float) -> dict[str, Any]:
    rng = random.Random(seed)
    disk = SimDisk(f"scn-buffer-{seed}")
    log = impl.current(LogManager)(disk, file_max=64 * 1024, clock=lambda: 1_700_000_000.0)
    bp = impl.current(BufferPool)(frames, page_size=PAGE_SIZE, log=log)
    vol = Volume.format(disk, bp, log, num_pages=pages + 48, ext_sz=4, page_size=PAGE_SIZE)
    store = vol.create_store()
    pids = []
    for _ in range(pages):
        pid = vol.alloc_page(store, AllocMode.APPEND)
        page = bp.fix(pid, EX, virgin=True)
        page.format(pid, PageTag.FILE)
        bp.unfix(page, dirty=True)
        pids.append(pid)
    answers: list[Any] = []
    for i in range(300):
        pid = rng.choice(pids[: rng.choice([3, pages])])  # a few hot pages, and the rest
        mode = EX if rng.random() < ex_share else SH
        page = bp.fix(pid, mode)
        if mode is EX and rng.random() < max(0.5, ex_share):
            if page.usable_space() > 40:
                page.insert(b"%d" % i)
            bp.unfix(page, dirty=True)
        else:
            answers.append(page.records())
            bp.unfix(page)
    held = bp.fix(pids[0], EX)
    answers.append(bp.fix(pids[0], SH, conditional=True))
    bp.unfix(held)
    for wrong in (("p(1.3.4)", SH), (pids[1], "SH")):
        try:
            bp.fix(*wrong)
        except MinidbError as e:
            answers.append((type(e).__name__, str(e)))
    log.sync()
    bp.force_all()
    counters = bp.stats.as_dict()
    disk.crash(CrashMode.random(seed))
    return {"answers": answers, "counters": counters, "disk": disk_state(disk)}
