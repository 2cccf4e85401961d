"""Small volumes on simulated disks, for the page store's tests."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from minidb.io import SimDisk
from minidb.log import LogManager, file_number
from minidb.pagestore import BufferPool, Volume
from minidb.pagestore.volume.volfile import volume_file_name


def fixed_clock() -> float:
    return 1_700_000_000.0


@dataclass
class Setup:
    disk: SimDisk
    log: LogManager
    bp: BufferPool
    vol: Volume

    def reopen(self, frames: int | None = None, use_caches: bool = True) -> "Setup":
        """Close everything cleanly and mount again (fresh pool, empty caches)."""
        self.vol.close()
        self.log.close()
        return mount(self.disk, frames or len(self.bp.frames), use_caches=use_caches)

    def snapshot(self) -> tuple:
        """What an error must not change: the write record, the log's end, the maps."""
        return (len(self.disk.events), self.log.last_lsn, self.vol.dump_extents(), self.vol.dump_stores(),
                self.vol.cache_state())


def new_volume(num_pages: int = 64, ext_sz: int = 4, page_size: int = 512, frames: int = 16,
               use_caches: bool = True, trace: bool = True, name: str = "vol") -> Setup:
    disk = SimDisk(name)
    log = LogManager(disk, clock=fixed_clock)
    bp = BufferPool(frames, page_size=page_size, log=log, trace=trace)
    vol = Volume.format(disk, bp, log, num_pages=num_pages, ext_sz=ext_sz, use_caches=use_caches)
    return Setup(disk, log, bp, vol)


def mount(disk: SimDisk, frames: int = 16, use_caches: bool = True, page_size: int = 512) -> Setup:
    log = LogManager(disk, clock=fixed_clock)
    bp = BufferPool(frames, page_size=page_size, log=log, trace=True)
    vol = Volume(disk, bp, log, use_caches=use_caches)
    return Setup(disk, log, bp, vol)


def log_durable_ends(disk: SimDisk, upto: int) -> dict[int, int]:
    """For each log file, how many bytes were durable just after event ``upto``.

    The log only appends, so a file's durable end is the end of its furthest
    write issued before its last fsync.
    """
    written: dict[str, int] = {}
    durable: dict[str, int] = {}
    for event in disk.events[: upto + 1]:
        if file_number(event.name) is None:
            continue
        if event.kind == "write":
            written[event.name] = max(written.get(event.name, 0), event.offset + len(event.data))
        elif event.kind == "truncate":
            written[event.name] = min(written.get(event.name, 0), event.size)
            durable[event.name] = min(durable.get(event.name, 0), event.size)
        elif event.kind == "fsync":
            durable[event.name] = written.get(event.name, 0)
    return {file_number(name): end for name, end in durable.items()}


def page_writes(disk: SimDisk, vid: int = 1) -> list:
    name = volume_file_name(vid)
    return [e for e in disk.events if e.kind == "write" and e.name == name]


def wait_for_latch(latch, held, wanted, while_blocked=lambda: None) -> tuple:
    """Hold ``latch`` in ``held``; another thread asks for ``wanted`` and blocks (``on_block`` tells, no
    sleep); ``while_blocked()`` runs then; a release wakes the waiter. Returns what ``while_blocked`` and
    the waiter's ``acquire`` returned."""
    latch.acquire(held)
    blocked = threading.Event()
    latch.on_block = lambda mode: blocked.set()
    got: list = []
    waiter = threading.Thread(target=lambda: got.append(latch.acquire(wanted)))
    waiter.start()
    blocked.wait()
    seen = while_blocked()
    latch.release()  # the waiter is counted: it is woken even if it waits on the condition only now
    waiter.join()
    return seen, got
