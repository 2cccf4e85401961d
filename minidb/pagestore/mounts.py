"""The mount table: the volumes a page store has mounted (Shore's device table and ``vol_m``).

A page store always has its first volume, ``v(1)`` (the file ``v1.vol``,
formatted with the page store; :mod:`minidb.pagestore.volume.volfile`).
``sm.add_volume(num_pages=...)`` formats and mounts another beside the log,
``v(2)`` in ``v2.vol``, ``v(3)`` in ``v3.vol``, ...: the number of a new
volume is one more than the largest of the mounted volumes and the volume
files on the disk, so a number is never given twice while its file is
there, and an id names the same volume across restarts (its header
records it: :mod:`minidb.pagestore.volume.volheader`). Each volume is a
:class:`~minidb.pagestore.volume.volume.Volume` with its own store
directory, root index, file, index and R*-tree managers (a :class:`Mount`);
one buffer pool, one log, one transaction manager serve them all, and every
store, page and record id names its volume (``s(2.3)``, ``r(2.3.12.0)``), so
each operation goes to the volume its id names.

**Invariants.**

- The log records every mount and dismount: ``mount_vol`` once the
  volume is formatted (durable) and open, ``dismount_vol`` once its dirty
  pages are written; each is forced before the call returns. A checkpoint
  taken while any volume but ``v(1)`` is mounted lists them all in
  ``chkpt_dev_tab`` (:mod:`minidb.pagestore.wal.logdef`); with ``v(1)``
  alone it logs no device table, so a page store of one volume writes the
  very bytes it always did, and a log written before volumes could be
  added reads as one of ``v(1)`` alone.
- Restart mounts what the master checkpoint's device table and the
  ``mount_vol``/``dismount_vol`` entries after it list, before redo
  (:mod:`minidb.pagestore.restart.analysis`, :meth:`MountTable.remount`). A
  volume the log says is mounted whose file is gone is a
  :class:`~minidb.pagestore.errors.VolumeCorruptionError` naming the file:
  its pages would be lost silently otherwise.
- A volume mounted again starts with empty caches (the free-extent cache,
  the reserved-page and last-page caches: a new ``Volume``).
- ``v(1)`` is never dismounted: the checkpoint stamp that proves the
  volume belongs with its log, the master's checks and the default place
  of every store are on it.

**Dismounting** (:meth:`MountTable.dismount`) is refused, with a
:class:`~minidb.pagestore.errors.BadRequestError` naming the volume and the
reasons, while the volume has *active work*:

- a transaction that has not ended (active, aborting or prepared) logged a
  change to one of its pages (its log chain names the volume), or loads one
  of its stores (a LOAD or INSERT store, changed without log entries);
- a transaction holds a lock on the volume or on anything in it (a store,
  page, record, key or extent lock whose first number is the volume);
- a scan of one of its stores is open (``sm.scan`` or ``sm.index_scan``,
  an iterator neither exhausted nor closed).

Otherwise its dirty pages are written and dropped from the pool, its file
is closed and ``dismount_vol`` is logged and forced. Since nothing that has
not ended touched it, restart has nothing of it to redo (analysis drops its
pages from the dirty page table at the ``dismount_vol``) or undo.

Worked example: ``v = sm.add_volume(num_pages=64)`` formats ``v2.vol``,
logs ``mount_vol vol=2`` and returns 2; ``f = sm.create_file(t,
volume=2)`` gives ``s(2.3)``; a checkpoint logs ``chkpt_dev_tab vols=[1,
2]``; after a crash restart reads it, mounts ``v(2)`` and redoes the pages
of both volumes. ``sm.dismount_volume(2)`` once ``t`` has committed writes
``v(2)``'s pages and logs ``dismount_vol vol=2``; the next checkpoint has no
device table.

What it leaves out: a volume is not checked against the master checkpoint's
stamp (only ``v(1)`` is, :mod:`minidb.pagestore.restart.master`), ``minidb
verify`` checks ``v(1)``, and the prepare entries of two-phase commit name
the space of ``v(1)`` only (a transaction freeing space elsewhere cannot be
prepared). Mounting and dismounting run while no checkpoint is being taken
(the storage manager's caller serialises them with its other work).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from minidb.io import Disk
from minidb.log.lsn import LSN
from minidb.pagestore.errors import BadRequestError, VolumeCorruptionError
from minidb.pagestore.volume.format import format_volume
from minidb.pagestore.volume.volfile import volume_file_name
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ
from minidb.pagestore.volume.volume import Volume
from minidb.pagestore.wal.logdef import DISMOUNT_VOL, MOUNT_VOL

FIRST_VOLUME = 1
_VOLUME_FILE = re.compile(r"^v(\d+)\.vol$")


@dataclass
class Mount:
    """One mounted volume and the parts that work on its stores."""

    volume: Volume
    directory: Any  # store 1, the store directory
    root_index: Any  # store 2, the index names
    files: Any  # the file manager
    indexes: Any  # the B+tree index manager
    rtrees: Any  # the R*-tree manager


class MountTable:
    """The mounted volumes by number (see the module documentation)."""

    def __init__(self, disk: Disk, log: Any, build: Callable[[Volume], Mount],
                 open_volume: Callable[[int], Volume]):
        self.disk = disk
        self.log = log
        self._build = build  # a mounted volume's parts (the storage manager's composition)
        self._open = open_volume  # a Volume object on an existing file
        self._mounts: dict[int, Mount] = {}
        self.scans: Counter[int] = Counter()  # open scans by volume

    # -- looking up --------------------------------------------------------------------------
    def get(self, vid: int | None) -> Mount:
        """The mount of volume ``vid`` (the first volume for None)."""
        vid = FIRST_VOLUME if vid is None else vid
        if isinstance(vid, bool) or not isinstance(vid, int):
            raise BadRequestError(f"volume must be a volume number such as 2, not {vid!r}")
        mount = self._mounts.get(vid)
        if mount is None:
            mounted = ", ".join(f"v({n})" for n in self.vids())
            raise BadRequestError(f"volume v({vid}) is not mounted (mounted: {mounted})")
        return mount

    def volume(self, vid: int) -> Volume:
        return self.get(vid).volume

    def vids(self) -> list[int]:
        return sorted(self._mounts)

    def volumes(self) -> list[Volume]:
        return [self._mounts[vid].volume for vid in self.vids()]

    def mounts(self) -> list[Mount]:
        return [self._mounts[vid] for vid in self.vids()]

    def file_managers(self) -> list[Any]:
        return [mount.files for mount in self.mounts()]

    def devices(self) -> list[int] | None:
        """The device table a checkpoint logs: None while the first volume alone is mounted."""
        vids = self.vids()
        return None if vids == [FIRST_VOLUME] else vids

    # -- mounting ----------------------------------------------------------------------------
    def attach(self, volume: Volume) -> Mount:
        """Enter an open volume in the table (its parts built), without logging."""
        volume.mount_table = self
        mount = self._mounts[volume.vid] = self._build(volume)
        return mount

    def next_vid(self) -> int:
        on_disk = [int(m.group(1)) for name in self.disk.list() if (m := _VOLUME_FILE.match(name))]
        return max([*self.vids(), *on_disk, FIRST_VOLUME]) + 1

    def add(self, num_pages: int, ext_sz: int = DEFAULT_EXT_SZ) -> int:
        """Format a new volume (durable before anything refers to it), mount it, log the mount."""
        vid, first = self.next_vid(), self.volume(FIRST_VOLUME)
        format_volume(self.disk, vid, num_pages, ext_sz, first.header.page_size, first.header.env_id)
        self.mount(vid)
        return vid

    def mount(self, vid: int) -> Volume:
        """Mount the formatted volume ``vid`` and log ``mount_vol`` (forced)."""
        if isinstance(vid, bool) or not isinstance(vid, int) or vid < 1:
            raise BadRequestError(f"volume must be a volume number such as 2, not {vid!r}")
        if vid in self._mounts:
            raise BadRequestError(f"volume v({vid}) is mounted already")
        if not self.disk.exists(volume_file_name(vid)):
            raise BadRequestError(f"{self.disk.where(volume_file_name(vid))}: cannot mount v({vid}): no such "
                                  f"volume file (add_volume formats a new one)")
        volume = self._open_checked(vid)
        self.log.sync(self.log.append(MOUNT_VOL, {"vol": vid}))
        return volume

    def _open_checked(self, vid: int) -> Volume:
        volume = self._open(vid)
        first = self._mounts.get(FIRST_VOLUME)
        problem = None
        if first is not None and volume.header.page_size != first.volume.header.page_size:
            problem = f"its pages are {volume.header.page_size} bytes, the buffer pool's {first.volume.header.page_size}"
        elif first is not None and volume.header.env_id != first.volume.header.env_id:
            problem = f"it belongs to another page store (environment id {volume.header.env_id:#x})"
        if problem is not None:
            volume.close()
            raise VolumeCorruptionError(f"{volume.file.where()}: cannot mount v({vid}): {problem}")
        self.attach(volume)
        return volume

    def remount(self, vids: list[int]) -> list[str]:
        """Restart: mount the volumes of the device table ``vids`` that are not mounted yet (without logging:
        the log says so already); a missing volume file is damage, named."""
        done = []
        for vid in vids:
            if vid in self._mounts:
                continue
            name = volume_file_name(vid)
            if not self.disk.exists(name):
                raise VolumeCorruptionError(f"{self.disk.where(name)}: the log says volume v({vid}) is mounted, but "
                                            f"its file is missing: the page store lost a volume")
            self._open_checked(vid)
            done.append(f"mounted v({vid}) ({self.disk.where(name)}), as the device table says")
        return done

    # -- dismounting -------------------------------------------------------------------------
    def active_work(self, vid: int, xcts: Any) -> list[str]:
        """Why volume ``vid`` cannot be dismounted now (empty: it can); see the module documentation."""
        reasons = []
        if self.scans[vid]:
            reasons.append(f"{self.scans[vid]} open scan{'s' if self.scans[vid] > 1 else ''} of its stores")
        for xct in xcts.active():
            if any(stid.vol == vid for stid in xct.load_stores) or _chain_names(self.log, xct.last_lsn, vid):
                reasons.append(f"T{xct.txn_id} ({xct.state.name}) changed its pages")
            locks = [lid for lid in xcts.locks.held(xct) if lid.code != "u" and lid.numbers and lid.numbers[0] == vid]
            if locks:
                reasons.append(f"T{xct.txn_id} holds {len(locks)} lock{'s' if len(locks) > 1 else ''} on it "
                               f"({', '.join(str(lid) for lid in sorted(locks)[:3])})")
        return reasons

    def dismount(self, vid: int, xcts: Any) -> LSN:
        """Write volume ``vid``'s pages, close it, log ``dismount_vol`` (forced); refused with active work."""
        mount = self.get(vid)
        if vid == FIRST_VOLUME:
            raise BadRequestError(f"v({vid}) cannot be dismounted: it is the page store's first volume (its "
                                  f"checkpoint stamp and master checks, the default place of every store)")
        reasons = self.active_work(vid, xcts)
        if reasons:
            raise BadRequestError(f"v({vid}) cannot be dismounted: it has active work: {'; '.join(reasons)}")
        mount.volume.close()  # its dirty pages written (the log first), dropped from the pool
        del self._mounts[vid]
        mount.volume.mount_table = None
        lsn = self.log.append(DISMOUNT_VOL, {"vol": vid})
        self.log.sync(lsn)
        return lsn

    def close(self) -> None:
        """Close every volume, the first one last."""
        for vid in sorted(self._mounts, reverse=True):
            self._mounts[vid].volume.close()

    # -- open scans ----------------------------------------------------------------------------
    def names(self, ident: Any) -> bool:
        """Whether ``ident`` (a store, record or index id) names a mounted volume."""
        return isinstance(ident, tuple) and bool(ident) and isinstance(ident[0], int) and ident[0] in self._mounts

    def of(self, ident: Any) -> Mount:
        """The mount of the volume an id names (the first volume's, which refuses the id, if that volume is
        not mounted)."""
        return self.get(ident[0] if self.names(ident) else None)

    def counted_scan(self, ident: Any, rows: Iterator[Any]) -> Iterator[Any]:
        """``rows``, a scan of the store ``ident``, counted as open on its volume (a dismount waits for it)."""
        return self.counted(ident[0], rows) if self.names(ident) else rows

    def counted(self, vid: int, rows: Iterator[Any]) -> "OpenScan":
        """``rows`` (a scan of a store of ``vid``), counted as an open scan of the volume until it ends."""
        return OpenScan(self.scans, vid, rows)


class OpenScan:
    """A scan counted as open on its volume from its creation until it is exhausted or closed."""

    def __init__(self, scans: Counter[int], vid: int, rows: Iterator[Any]):
        self._scans, self._vid, self._rows = scans, vid, rows
        self._open = True
        scans[vid] += 1

    def __iter__(self) -> "OpenScan":
        return self

    def __next__(self) -> Any:
        try:
            return next(self._rows)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._open:
            self._open = False
            self._scans[self._vid] -= 1
            closing = getattr(self._rows, "close", None)
            if closing is not None:
                closing()

    def __del__(self) -> None:
        self.close()


def _chain_names(log: Any, lsn: LSN, vid: int) -> bool:
    """Whether a transaction's entries, walked back from ``lsn``, name volume ``vid``."""
    while not lsn.is_null:
        values = log.read(lsn).values
        if values.get("vol") == vid:
            return True
        lsn = values["txn_prev_lsn"]
    return False
