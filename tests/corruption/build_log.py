"""The shared log alone: Trace entries, some replicated (with a VLSN), over several small files.

The committed data is the list of entries a reader returns, each as
(LSN, type, VLSN, values), without the ``FileHeader`` entries that the log
writes for itself. Every entry is durable once synced, so the data of a
log prefix ending at an LSN is simply the entries before it.

The sibling (``variant=1``) writes the same messages with ``y`` for ``x``
and another environment seed; snapshots are taken at every sync.
"""

from __future__ import annotations

import random

from minidb.io import Disk, SimDisk
from minidb.log import LSN, TRACE, LogManager

from tests.corruption.state import Snapshots, State, fixed_clock, image_of

FILE_MAX = 512
ENTRIES = 24
SEED = 11


def open_log(disk: Disk, variant: int = 0) -> LogManager:
    return LogManager(disk, file_max=FILE_MAX, clock=fixed_clock, env_seed=variant)


def read(disk: Disk) -> tuple:
    log = open_log(disk)
    try:
        return entries_of(log)
    finally:
        log.close(sync=False)


def entries_of(log: LogManager) -> tuple:
    return tuple((e.lsn, e.type_name, e.vlsn, e.values) for e in log.scan() if e.type_name != "FileHeader")


def build(variant: int = 0) -> State:
    disk = SimDisk("log")
    log = open_log(disk, variant)
    snapshots = Snapshots(disk)
    rng = random.Random(SEED)
    model = []
    for i in range(ENTRIES):
        values = {"message": f"entry {i} " + "xy"[variant] * rng.randrange(40)}
        vlsn = i // 3 + 1 if i % 3 == 0 else None
        model.append((log.append(TRACE, values, vlsn=vlsn), "Trace", vlsn, values))
        if i % 4 == 3:
            log.sync()
            snapshots.take()
    model = tuple(model)
    assert entries_of(log) == model
    log.close()

    def model_at(end: LSN) -> tuple:
        return tuple(entry for entry in model if entry[0] < end)

    files = image_of(disk)
    sibling = build(variant + 1).files if variant == 0 else {}
    return State("log", files, model, model_at, read, sibling=sibling, older=snapshots.older(files))
