"""Storage managers on simulated disks, for the transaction, file and restart tests."""

from __future__ import annotations

from minidb.io import CrashMode, SimDisk
from minidb.pagestore.sm import StorageManager


def fixed_clock() -> float:
    return 1_700_000_000.0


OPTIONS = {"clock": fixed_clock}


def new_sm(name: str = "sm", num_pages: int = 128, ext_sz: int = 4, page_size: int = 512, frames: int = 16,
           **options) -> StorageManager:
    return StorageManager.format(SimDisk(name), num_pages=num_pages, ext_sz=ext_sz, page_size=page_size,
                                 frames=frames, **{**OPTIONS, **options})


def reopen(sm: StorageManager, how: str = "crash", frames: int | None = None, **options) -> StorageManager:
    """End ``sm`` by a clean shutdown or a crash (unsynced writes lost), then open the disk again (restart)."""
    disk = sm.disk
    if how == "clean":
        sm.close()
    elif how == "crash":
        disk.crash(CrashMode.nothing())
    else:
        raise ValueError(how)
    return StorageManager.open(disk, frames=frames or len(sm.bp.frames), **{**OPTIONS, **options})


def open_again(disk: SimDisk, frames: int = 16, **options) -> StorageManager:
    return StorageManager.open(disk, frames=frames, **{**OPTIONS, **options})


def entries(sm: StorageManager, names: tuple[str, ...] | None = None, start=None) -> list:
    return [e for e in sm.log.scan(start) if names is None or e.type_name in names]
