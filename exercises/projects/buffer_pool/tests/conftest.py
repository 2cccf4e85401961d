"""What the buffer pool project's tests share: a small volume on a simulated disk, built with the pool the
engine's hot spot chooses (the reference's, or the student's: see exercises/projects/conftest.py)."""

from __future__ import annotations

import pytest

from minidb.io import SimDisk
from minidb.log import LSN, TRACE, LogManager
from minidb.pagestore import BUFFER_POOL, EX, PageId, PageTag, Volume

from tests.pagestore.helpers import Setup, fixed_clock, log_durable_ends, page_writes

PAGE_SIZE = 512


class Kit:
    """Builders and probes for the tests (a fixture, so that test files import nothing of each other)."""

    page_size = PAGE_SIZE

    @staticmethod
    def pid(n: int) -> PageId:
        return PageId(1, 1, n)

    @staticmethod
    def new_volume(frames: int = 16, num_pages: int = 64, name: str = "vol") -> Setup:
        disk = SimDisk(name)
        log = LogManager(disk, clock=fixed_clock)
        bp = BUFFER_POOL.call(frames, page_size=PAGE_SIZE, log=log, trace=True)
        vol = Volume.format(disk, bp, log, num_pages=num_pages, ext_sz=4)
        return Setup(disk, log, bp, vol)

    @staticmethod
    def mount(disk: SimDisk, frames: int = 16) -> Setup:
        log = LogManager(disk, clock=fixed_clock)
        bp = BUFFER_POOL.call(frames, page_size=PAGE_SIZE, log=log, trace=True)
        return Setup(disk, log, bp, Volume(disk, bp, log))

    def update(self, s: Setup, n: int, text: str = "x", virgin: bool = False) -> LSN:
        """The protocol by hand: fix EX, change, log, set the page LSN, unfix dirty."""
        page = s.bp.fix(self.pid(n), EX, virgin=virgin)
        if virgin or page.tag == PageTag.FREE:
            page.format(self.pid(n), PageTag.FILE)
        page.insert(text.encode())
        lsn = s.log.append(TRACE, {"message": f"update page {n}: {text}"})
        page.lsn = lsn
        s.bp.unfix(page, dirty=True)
        return lsn

    page_writes = staticmethod(page_writes)  # the disk's writes of volume 1's file, in order
    log_durable_ends = staticmethod(log_durable_ends)  # per log file, the bytes durable after an event


@pytest.fixture
def kit() -> Kit:
    return Kit()
