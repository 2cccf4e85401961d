"""The storage manager (Shore's ``ss_m``): one volume, its log, buffer pool, transactions and files.

This is the page store's front door. It puts the parts together on one
:class:`~minidb.io.Disk` (the volume file ``v1.vol``, the log files and the
``master`` file side by side) and runs restart whenever it opens::

    sm = StorageManager.format(SimDisk("demo"), num_pages=128, page_size=512)
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"hello")
    sm.close()
    sm = StorageManager.open(disk)          # restart: analysis, redo, undo
    print(sm.restart_report.summary())

**Locks.** ``locking=LockManager()`` (or a
:class:`~minidb.pagestore.transactions.locking.ShoreLocking`) makes every operation take
its locks from Shore's lock manager, so transactions in several threads
wait for each other and a deadlock's victim aborts; without it, no locks
are taken (one thread).

Its parts stay reachable for tests, pictures and the curious: ``sm.log``
(:mod:`minidb.log`), ``sm.bp`` (the buffer pool), ``sm.volume`` (the volume
manager), ``sm.xcts`` (the transaction manager), ``sm.files`` (the file
manager), ``sm.checkpointer``. The record operations are the file
manager's, repeated here for convenience.

**Opening** (:meth:`StorageManager.open`) checks that the log is whole
(:func:`~minidb.pagestore.restart.master.check_volume_and_log`: a volume without its
log, or with a log that ends before the last checkpoint, is corruption, as
is a master record without its volume),
reads the log (cutting a torn tail), mounts the volume and restarts (:mod:`minidb.pagestore.restart`); with
``restart=False`` it stops before the first pass and returns the
:class:`~minidb.pagestore.restart.Restart` in ``sm.restart``, for stepping
through the passes one at a time.

**Closing** cleanly aborts the transactions still active, writes every
dirty page, takes a checkpoint (whose dirty page table is now empty) and
closes the log and the volume, so the next restart reads only that
checkpoint.

**Checkpoints** are taken on demand (:meth:`checkpoint`), at the end of
restart, at a clean close and, with ``chkpt_every=N``, after a commit once
N bytes were logged since the last one (Shore's checkpoint thread is
"kicked" by the log manager).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, ContextManager

from minidb.io import Disk
from minidb.log.lsn import LSN
from minidb.log.manager import DEFAULT_BUFFER_SIZE, DEFAULT_FILE_MAX, LogManager
from minidb.pagestore.buffer.bufferpool import BufferPool
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.restart.chkpt import Checkpointer, CheckpointResult
from minidb.pagestore.files.file import FileManager, Policy
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.lock import LockManager
from minidb.pagestore.restart.master import check_volume_and_log
from minidb.pagestore.transactions.locking import Locking, ShoreLocking
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE
from minidb.pagestore.pages.rectag import Record
from minidb.pagestore.restart import Restart, RestartReport
from minidb.pagestore.transactions.rollback import UndoStep
from minidb.pagestore.volume.volfile import VolumeFile
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ
from minidb.pagestore.volume.volume import Volume
from minidb.pagestore.transactions.xct import SavePoint, Xct
from minidb.pagestore.transactions.xctmgr import XctManager, transaction_block


class StorageManager:
    """One volume with its log, buffer pool, transactions and files (see the module documentation)."""

    def __init__(self, disk: Disk, log: LogManager, bp: BufferPool, volume: Volume, locking: Locking | None = None,
                 max_small_rec: int | None = None, chkpt_every: int | None = None, trace: bool = False,
                 index_fanout: int | None = None):
        self.disk = disk
        self.log = log
        self.bp = bp
        self.volume = volume
        self.xcts = XctManager(volume, locking, trace=trace)
        self.files = FileManager(volume, self.xcts, max_small_rec, trace=trace, index_fanout=index_fanout)
        self.checkpointer = Checkpointer(disk, log, bp, self.xcts, trace=trace)
        self.chkpt_every = chkpt_every
        self.restart: Restart | None = None
        self.restart_report: RestartReport | None = None
        self._logged_at_chkpt = 0
        self._closed = False

    # -- opening and closing ------------------------------------------------------------------
    @classmethod
    def format(cls, disk: Disk, num_pages: int = 1024, ext_sz: int = DEFAULT_EXT_SZ,
               page_size: int = DEFAULT_PAGE_SIZE, frames: int = 64, **options: Any) -> "StorageManager":
        """Format a new volume on ``disk`` and open it (an empty restart); ``options`` are :meth:`open`'s."""
        log = cls._open_log(disk, options.get("file_max", DEFAULT_FILE_MAX),
                            options.get("buffer_size", DEFAULT_BUFFER_SIZE), options.get("clock", time.time))
        bp = BufferPool(frames, page_size=page_size, log=log)
        Volume.format(disk, bp, log, num_pages=num_pages, ext_sz=ext_sz, page_size=page_size)
        log.close()
        return cls.open(disk, frames=frames, **options)

    @classmethod
    def open(cls, disk: Disk, frames: int = 64, restart: bool = True, locking: Locking | LockManager | None = None,
             max_small_rec: int | None = None, chkpt_every: int | None = None, trace: bool = False,
             restart_trace: bool = True, file_max: int = DEFAULT_FILE_MAX, buffer_size: int = DEFAULT_BUFFER_SIZE,
             clock: Callable[[], float] = time.time, index_fanout: int | None = None) -> "StorageManager":
        """Open the volume on ``disk`` and restart (see the module documentation)."""
        check_volume_and_log(disk)  # before opening the log, which may cut its tail
        probe = VolumeFile(disk, 1)  # first: no volume, no log created; the header gives the page size
        size = probe.page_size
        probe.close()
        log = cls._open_log(disk, file_max, buffer_size, clock)
        try:
            bp = BufferPool(frames, page_size=size, log=log, trace=trace)
            volume = Volume(disk, bp, log, trace=trace)
        except BaseException:
            log.close(sync=False)
            raise
        if isinstance(locking, LockManager):
            locking = ShoreLocking(locking)
        sm = cls(disk, log, bp, volume, locking, max_small_rec, chkpt_every, trace, index_fanout)
        sm.restart = Restart(disk, volume, sm.xcts, sm.checkpointer, trace=restart_trace)
        if restart:
            sm.restart_report = sm.restart.run()
        return sm

    @staticmethod
    def _open_log(disk: Disk, file_max: int, buffer_size: int, clock: Callable[[], float]) -> LogManager:
        return LogManager(disk, file_max=file_max, buffer_size=buffer_size, clock=clock)

    def close(self) -> None:
        """A clean shutdown: active transactions aborted, every page written, a checkpoint."""
        if self._closed:
            return
        for xct in self.xcts.active():
            self.xcts.abort(xct)
        self.bp.force_all()
        self.checkpoint()
        self.volume.close()
        self.log.close()
        self._closed = True

    def checkpoint(self) -> CheckpointResult:
        result = self.checkpointer.take()
        self._logged_at_chkpt = self.log.stats["nBytes"]
        return result

    # -- transactions -----------------------------------------------------------------------------
    def begin(self) -> Xct:
        if self._closed:
            raise BadRequestError(f"{self.disk.where()}: the storage manager is closed; open it again")
        return self.xcts.begin()

    def commit(self, xct: Xct, durable: bool = True) -> LSN:
        lsn = self.xcts.commit(xct, durable)
        if self.chkpt_every and self.log.stats["nBytes"] - self._logged_at_chkpt >= self.chkpt_every:
            self.checkpoint()
        return lsn

    def abort(self, xct: Xct) -> list[UndoStep]:
        return self.xcts.abort(xct)

    def save_point(self, xct: Xct) -> SavePoint:
        return self.xcts.save_point(xct)

    def rollback_to(self, xct: Xct, save_point: SavePoint) -> list[UndoStep]:
        return self.xcts.rollback_to(xct, save_point)

    def transaction(self, durable: bool = True) -> ContextManager[Xct]:
        """``with sm.transaction() as t:``: commit at the end of the block, abort on an exception."""
        return transaction_block(self, durable)

    # -- files and records (the file manager's operations) ------------------------------------------
    def create_file(self, xct: Xct) -> StoreId:
        return self.files.create_file(xct)

    def destroy_file(self, xct: Xct, fid: StoreId) -> None:
        self.files.destroy_file(xct, fid)

    def create_rec(self, xct: Xct, fid: StoreId, body: bytes, hdr: bytes = b"",
                   policy: Policy = Policy.DEFAULT) -> RecordId:
        return self.files.create_rec(xct, fid, body, hdr, policy)

    def read_rec(self, xct: Xct, rid: RecordId) -> Record:
        return self.files.read_rec(xct, rid)

    def update_rec(self, xct: Xct, rid: RecordId, start: int, data: bytes) -> None:
        self.files.update_rec(xct, rid, start, data)

    def append_rec(self, xct: Xct, rid: RecordId, data: bytes) -> None:
        self.files.append_rec(xct, rid, data)

    def truncate_rec(self, xct: Xct, rid: RecordId, amount: int) -> None:
        self.files.truncate_rec(xct, rid, amount)

    def free_rec(self, xct: Xct, rid: RecordId) -> None:
        self.files.free_rec(xct, rid)

    def scan(self, xct: Xct, fid: StoreId) -> Iterator[Record]:
        return self.files.scan(xct, fid)

    # -- looking -------------------------------------------------------------------------------------
    def contents(self) -> dict[StoreId, dict[RecordId, tuple[bytes, bytes]]]:
        """Every file's records as {file: {rid: (header, body)}}, read in one transaction."""
        with self.transaction(durable=False) as xct:
            return {fid: {rec.rid: (rec.hdr, rec.body) for rec in self.files.scan(xct, fid)}
                    for fid in self.files.files()}

    def check(self) -> list[str]:
        """Consistency problems of the volume's maps (empty when all is well)."""
        return self.volume.check()

    def __repr__(self) -> str:
        return f"StorageManager({self.volume!r}, {self.xcts!r})"
