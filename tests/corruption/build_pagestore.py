"""The page store: a volume with one file of records, a master checkpoint, some pages flushed.

The workload, on 512-byte pages: a file is created and records inserted in
committed transactions; every page is written to the volume and a
checkpoint taken (the ``master`` file then names it); more transactions
insert, update and free records, committed and durable, whose pages stay
in the buffer pool only; a last transaction inserts a record and stays
active (restart must undo it). The volume, the log and the master are
then exactly what a crash at that moment would leave.

The committed data is ``StorageManager.contents()``: every file's records
as {file: {record id: (header, body)}}. A log that ends before the
master's checkpoint or before the LSN of a page on the volume cannot be the
result of a crash (the checkpoint and the page were written only after the
log was durable that far), so ``prefix_floor`` is the end of the later of
the two.

:func:`build_scavenged` is the same workload with scavenging on: each
checkpoint removes the log files below it (recorded in ``loghead``), so the
``master`` file is the only way into the log and cutting or deleting it is
detected. It is read back without scavenging (which would delete files,
legitimately, where the harness checks that open deletes nothing).

The sibling (``variant=1``) writes the same records in capitals, with
another environment seed; snapshots are taken after every commit.
"""

from __future__ import annotations

from minidb.io import Disk, SimDisk
from minidb.log import LSN
from minidb.pagestore.pages.page import FOOTER_SIZE, HEADER, HEADER_SIZE
from minidb.pagestore.restart.master import MASTER_FILE, SLOT, read_master
from minidb.pagestore.sm import StorageManager

from tests.corruption.state import History, Layout, Snapshots, State, fixed_clock, image_of

PAGE_SIZE, NUM_PAGES, EXT_SZ, FRAMES = 512, 32, 4, 16
FILE_MAX = 2048
VOLUME = "v1.vol"


def open_sm(disk: Disk, scavenge: bool = False) -> StorageManager:
    return StorageManager.open(disk, frames=FRAMES, file_max=FILE_MAX, clock=fixed_clock, restart_trace=False,
                               scavenge=scavenge)


def read(disk: Disk) -> dict:
    return open_sm(disk).contents()


def build_scavenged() -> State:
    return build(scavenge=True)


def build(scavenge: bool = False, variant: int = 0) -> State:
    disk = SimDisk("pagestore-scavenged" if scavenge else "pagestore")
    StorageManager.format(disk, num_pages=NUM_PAGES, ext_sz=EXT_SZ, page_size=PAGE_SIZE, frames=FRAMES,
                          file_max=FILE_MAX, clock=fixed_clock, restart_trace=False, scavenge=scavenge,
                          env_seed=variant)
    sm = open_sm(disk, scavenge)
    history = History({})
    snapshots = Snapshots(disk)

    def value(data: bytes) -> bytes:
        return data.upper() if variant else data

    def commit(t) -> None:
        history.commit(sm.log.read(sm.commit(t)).end, sm.contents())
        snapshots.take()

    t = sm.begin()
    fid = sm.create_file(t)
    commit(t)
    rids = []
    for batch in range(3):
        t = sm.begin()
        rids += [sm.create_rec(t, fid, value(f"record {batch}.{i} ".encode() * (1 + i % 3)), hdr=b"h%d" % i)
                 for i in range(4)]
        commit(t)
    sm.bp.force_all()
    sm.checkpoint()
    snapshots.take()
    for i in range(3):
        t = sm.begin()
        sm.create_rec(t, fid, value(f"after checkpoint {i} ".encode() * 4))
        sm.update_rec(t, rids[i], 0, b"UPDATED" if not variant else b"updated")
        sm.free_rec(t, rids[-1 - i])
        commit(t)
    if scavenge:
        sm.checkpoint()  # writes the pages holding the older files and removes those files
        for i in range(4):  # then into a second file, so a non-last file can be damaged too
            t = sm.begin()
            sm.create_rec(t, fid, value(f"after scavenging {i} ".encode() * 12))
            commit(t)
    loser = sm.begin()
    lost = sm.create_rec(loser, fid, value(b"never committed"))
    t = sm.begin()
    sm.append_rec(t, rids[3], value(b" and more"))
    end = sm.log.read(sm.commit(t)).end  # its fsync makes the loser's entries durable as well
    model = {f: {rid: rec for rid, rec in recs.items() if rid != lost} for f, recs in sm.contents().items()}
    history.commit(end, model)
    files = image_of(disk)
    layouts = {VOLUME: Layout(PAGE_SIZE, HEADER_SIZE, FOOTER_SIZE), MASTER_FILE: Layout(SLOT.size, SLOT.size)}
    sibling = build(scavenge, variant + 1).files if variant == 0 else {}
    return State("pagestore-scavenged" if scavenge else "pagestore", files, model, history.at, read,
                 _floor(sm, disk, files[VOLUME]), layouts, sibling, snapshots.older(files))


def _floor(sm: StorageManager, disk: SimDisk, volume: bytes) -> LSN:
    """The end of the master checkpoint's ``chkpt_end`` or of the newest page LSN's entry, whichever is later."""
    pages = range(0, NUM_PAGES * PAGE_SIZE, PAGE_SIZE)  # (the checkpoint stamp's slots follow the pages)
    lsns = [LSN.unpack(packed) for packed in (HEADER.unpack_from(volume, at)[0] for at in pages) if packed]
    return sm.log.read(max([*lsns, read_master(disk).end])).end
