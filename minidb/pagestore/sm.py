"""The storage manager (Shore's ``ss_m``): its volumes, their log, buffer pool, transactions and files.

This is the page store's front door. It puts the parts together on one
:class:`~minidb.io.Disk` (the volume file ``v1.vol``, the log files and the
``master`` file side by side) and runs restart whenever it opens::

    sm = StorageManager.format(SimDisk("demo"), num_pages=128, page_size=512)   # env_seed=...: see minidb.log.envid
    with sm.transaction() as t:
        fid = sm.create_file(t)
        rid = sm.create_rec(t, fid, b"hello")
    sm.close()
    sm = StorageManager.open(disk)          # restart: analysis, redo, undo
    print(sm.restart_report.summary())

**Volumes** (:mod:`minidb.pagestore.mounts`): ``v = sm.add_volume(num_pages=64)``
formats and mounts another volume beside the log (``v2.vol``) and returns its
number; ``sm.volumes()`` lists the mounted ones; ``sm.dismount_volume(v)``
(refused while the volume has active work) and ``sm.mount_volume(v)``.
``create_file(t, volume=v)``, ``create_index(..., volume=v)`` and
``create_rtree(..., volume=v)`` place a store on ``v`` (the first volume by
default); every other operation goes to the volume its id names. A
transaction may change stores of several volumes; restart mounts the
volumes the log lists before redo. ``sm.volume``, ``sm.files``,
``sm.directory``, ... are the first volume's parts; ``sm.mounts.get(v)``
has another's.

**Locks.** ``locking=LockManager()`` (or a
:class:`~minidb.pagestore.transactions.locking.ShoreLocking`) makes every operation take
its locks from Shore's lock manager, so transactions in several threads
wait for each other and a deadlock's victim aborts; without it, no locks
are taken (one thread). Page allocation follows Shore's protocol (extent and
page locks, the extent lock's "has pages" bit, EX on an extent freed at
commit: :mod:`minidb.pagestore.transactions.locking`);
:meth:`set_escalation` sets the escalation thresholds of the page and store
levels, for the storage manager or one store; ``with sm.quark(t):`` releases
the locks taken inside the block at its end
(:mod:`minidb.pagestore.transactions.quark`).

Its parts stay reachable for tests, pictures and the curious: ``sm.log``
(:mod:`minidb.log`), ``sm.bp`` (the buffer pool), ``sm.volume`` (the volume
manager), ``sm.xcts`` (the transaction manager), ``sm.files`` (the file
manager), ``sm.checkpointer``. The record operations are the file
manager's, repeated here for convenience. ``sm.directory`` is the store
directory (store 1) and ``sm.root_index`` the root index (store 2), the
volume's two B+trees (:mod:`minidb.pagestore.directory`).

**Formatting** (:meth:`StorageManager.format`) checks its arguments first
(``num_pages`` 1 to 4,294,967,295, a page number being 4 bytes; ``ext_sz``,
``page_size``, ``frames``: a :class:`~minidb.pagestore.errors.BadRequestError`
naming the argument and its range, nothing written), and a format that fails
after that deletes the files it created: the disk is as it was, and
formatting again works. Formatting builds store 0's pages in memory (one
extent-map page per 253 extents of 8 KB pages), so a front end bounds the
size it asks for further (``minidb spark load --pages``).

**Opening** (:meth:`StorageManager.open`) checks that the log is whole
(:func:`~minidb.pagestore.restart.master.check_volume_and_log`: a volume without its
log, or with a log that ends before the last checkpoint, is corruption, as
is a master record without its volume),
reads the log (cutting a torn tail; every log file must carry the
environment id the volume header records, :mod:`minidb.pagestore.volume.volheader`:
a file copied in from another page store is refused by name), mounts the volume and restarts (:mod:`minidb.pagestore.restart`); with
``restart=False`` it stops before the first pass and returns the
:class:`~minidb.pagestore.restart.restart.Restart` in ``sm.restart``, for stepping
through the passes one at a time.

**Two-phase commit**: :meth:`prepare` makes a transaction PREPARED under a
global transaction id; :meth:`commit_prepared` and :meth:`abort_prepared`
end it by that id, before or after any number of checkpoints, crashes and
restarts; :meth:`in_doubt` lists the prepared ones
(:mod:`minidb.pagestore.transactions.prepare`).

**Closing** cleanly aborts the transactions still active (not the prepared
ones, which stay in doubt for the next run), writes every
dirty page, takes a checkpoint (whose dirty page table is now empty) and
closes the log and the volume, so the next restart reads only that
checkpoint.

**B+tree indexes** (:mod:`minidb.pagestore.btree`): ``create_index(t, "i4",
unique=True)`` makes an index (a store of kind INDEX, its root page in the
store directory) whose keys the key descriptor types; ``index_insert``,
``index_remove``, ``index_update``, ``index_lookup``, ``index_scan`` (ranges
forward or backward), ``destroy_index``; ``sm.indexes`` is the index
manager. ``create_index(t, "i4", name="orders")`` also names the index in
the root index (a name taken is refused, nothing created); ``find_index``
and ``index_names`` look names up; destroying an index drops its name.
``bulk_load_index(t, "i8", pairs, fill=0.9, name="ix")`` builds one
bottom-up from sorted pairs, logged as a LOAD store. Splits are kept when a
transaction rolls back; its keys are undone logically. With a lock manager,
index operations take key-value locks (ARIES/KVL: the key, the next key,
``k(1.5.EOF)`` past the last one); :meth:`lock_table` prints the lock table
with index keys decoded.

**R*-tree indexes** (:mod:`minidb.pagestore.rtree`): ``create_rtree(t,
name=None, fanout=None)`` makes an index of 2-D boxes (a store of kind
RTREE); ``rtree_insert(t, ix, (0, 0, 4, 2), b"el")``, ``rtree_remove``,
``rtree_search(t, ix, box, cond)`` with ``cond`` one of ``overlap``,
``cover``, ``inside``, ``exact``; ``destroy_rtree``; ``sm.rtrees`` is the
R*-tree manager. The whole index is locked (EX to change, SH to search);
restructuring is kept when a transaction rolls back, its entries undone
logically.

**Store properties**: ``create_file(t, property="tmp")`` (REGULAR, TMP, LOAD,
INSERT) and ``set_store_property`` choose how much of a file the log
records (:mod:`minidb.pagestore.pages.storeprop`); restart destroys TMP files.

**Checkpoints** are taken on demand (:meth:`checkpoint`), at the end of
restart, at a clean close and, with ``chkpt_every=N``, after a commit once
N bytes were logged since the last one.

**Background threads** (:mod:`minidb.pagestore.restart.background`):
``open(..., background=True)`` (or a ``Background(clock=..., chkpt_interval=...)``)
starts, once restart is done, Shore's checkpoint thread and page cleaner. Then
the commit that passes ``chkpt_every`` bytes, and the log when a partition
fills (an entry starts a new log file), *kick* the checkpoint thread instead
of checkpointing; a commit that finds ``clean_threshold`` of the frames dirty
kicks the cleaner. ``sm.background`` holds the threads, ``sm.background_stats``
their counters; :meth:`close` stops them before its last checkpoint, and a
crash of the disk stops them too. Off by default: without them every run of a
workload does the same things in the same order.

**Logging switched off** (:mod:`minidb.pagestore.transactions.logswitch`):
``with sm.logging_off(t):`` turns ``t``'s logging off for the block (Shore's
``xct_log_switch_t``), ``open(..., logging_enabled=False)`` every
transaction's. Then the files a transaction creates are LOAD files, changed
unlogged and forced at its commit (a crash before its commit point is durable
leaves nothing of them), and a change to anything other transactions share is
refused, as is preparing it.

**Log space** (:mod:`minidb.pagestore.wal.logspace`). ``log_size=BYTES``
bounds the log: ``partitions`` (Shore's 8 by default) preallocated log files
of ``log_size / partitions`` bytes each, with reservations so that aborts,
rollbacks and restart always have room, also on a full disk; forward work
that does not fit raises :class:`~minidb.pagestore.errors.OutOfLogSpaceError`
(``sm.log_space`` holds the accounting). Give the same ``log_size`` and
``partitions`` at every open. Without ``log_size`` the disk is the bound: on a
disk that tells its free space (an :class:`~minidb.io.OSDisk`, a
:class:`~minidb.io.SimDisk` with a ``capacity``) the same reservations are
made against it, so forward work is refused before an abort or restart could
meet a full disk; on one that tells none there is no accounting.

**Scavenging** (on with ``log_size``, or ``scavenge=True``): each checkpoint
first writes the dirty pages whose recovery LSN lies in an older log file than
the current one (they would hold those files); after it, :meth:`scavenge` removes the log files wholly below the
*scavenging bound*, the smallest of the master checkpoint's ``chkpt_begin``,
its smallest recovery LSN (the buffer pool's, when it was taken), the buffer
pool's smallest recovery LSN now, and the first LSN of the oldest active
transaction: restart reads nothing before it. ``archive(name, data)`` is
given each file before it goes; ``on_log_held(tid, first_lsn, files)`` is
called when the oldest transaction alone keeps ``files`` files from going.
The deletion is recorded first in the log head (:mod:`minidb.log.head`), so
readers do not take it for lost files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ContextManager

from minidb.io import Disk
from minidb.log.lsn import LSN
from minidb.log.manager import DEFAULT_BUFFER_SIZE, DEFAULT_FILE_MAX, MIN_FILE_MAX, LogManager
from minidb.pagestore.btree.bulkload import LoadReport
from minidb.pagestore.btree.index import INDEX_MANAGER
from minidb.pagestore.btree.keydesc import KeyDescriptor
from minidb.pagestore.buffer.bufferpool import BUFFER_POOL, BufferPool
from minidb.pagestore.directory import RootIndex, StoreDirectory
from minidb.pagestore.errors import BadRequestError
from minidb.pagestore.files.file import FILE_MANAGER, Policy
from minidb.pagestore.ids import RecordId, StoreId
from minidb.pagestore.lock import KEEP, LockId, LockManager
from minidb.pagestore.mounts import Mount, MountTable
from minidb.pagestore.pages.page import DEFAULT_PAGE_SIZE
from minidb.pagestore.pages.rectag import Record
from minidb.pagestore.pages.storeprop import StoreProperty
from minidb.pagestore.restart import RESTART, Restart, RestartReport
from minidb.pagestore.restart.background import Background, BackgroundThreads
from minidb.pagestore.restart.chkpt import Checkpointer, CheckpointResult
from minidb.pagestore.restart.master import read_master
from minidb.pagestore.rtree.box import Box
from minidb.pagestore.rtree.index import RTreeManager
from minidb.pagestore.transactions import logswitch
from minidb.pagestore.transactions.locking import Locking, ShoreLocking
from minidb.pagestore.transactions.prepare import InDoubt
from minidb.pagestore.transactions.quark import Quark
from minidb.pagestore.transactions.rollback import UndoStep
from minidb.pagestore.transactions.xct import SavePoint, Xct, XctState
from minidb.pagestore.transactions.xctmgr import TRANSACTION_BLOCK, XCT_MANAGER, all_or_nothing
from minidb.pagestore.volume.volfile import VolumeFile
from minidb.pagestore.volume.volheader import DEFAULT_EXT_SZ, VolumeHeader
from minidb.pagestore.volume.volume import Volume
from minidb.pagestore.wal.logspace import LogSpace, checkpoint_size

DEFAULT_PARTITIONS = 8  # Shore's number of log partitions


class StorageManager:
    """One volume with its log, buffer pool, transactions and files (see the module documentation)."""

    def __init__(self, disk: Disk, log: LogManager, bp: BufferPool, volume: Volume, locking: Locking | None = None,
                 max_small_rec: int | None = None, chkpt_every: int | None = None, trace: bool = False,
                 scavenge: bool = False, archive: Callable[[str, bytes], None] | None = None,
                 on_log_held: Callable[[int, LSN, int], None] | None = None, index_fanout: int | None = None,
                 logging_enabled: bool = True):
        self.disk = disk
        self.logging_enabled = logging_enabled
        self.log = log
        self.bp = bp
        self.volume = volume
        self.xcts = XCT_MANAGER.call(volume, locking, trace=trace)
        self._part_options = dict(max_small_rec=max_small_rec, trace=trace, index_fanout=index_fanout)
        self.mounts = MountTable(disk, log, self._build_mount, lambda vid: Volume(disk, bp, log, vid, trace=trace))
        first = self.mounts.attach(volume)
        self.directory, self.root_index, self.files = first.directory, first.root_index, first.files
        self.indexes, self.rtrees = first.indexes, first.rtrees
        self.checkpointer = Checkpointer(disk, log, bp, self.xcts, trace=trace, stamp=self._stamp_volumes,
                                         devices=self.mounts.devices)
        self.chkpt_every = chkpt_every
        self.scavenging = scavenge
        self.archive = archive
        self.on_log_held = on_log_held
        self.log_space: LogSpace | None = None
        if log.max_files is not None or log.room() is not None:  # a bounded log, or a disk with a bound
            waste = bp.page_size + 128  # the largest entry (a record chunk of a page): may not fit a file's end
            self.log_space = self.xcts.log_space = LogSpace(
                log, self.xcts.peek, self.xcts.peek_all, waste, checkpoint_size(0, 4) + waste)
        self.restart: Restart | None = None
        self.restart_report: RestartReport | None = None
        self._logged_at_chkpt = 0
        self._closed = False
        self.background: BackgroundThreads | None = None

    def _build_mount(self, volume: Volume) -> Mount:
        """A mounted volume's parts, handed the transaction manager (the composition root's work)."""
        if volume is not self.xcts.volume:
            self.xcts.attach(volume)
        options = self._part_options
        directory = StoreDirectory(volume)
        files = FILE_MANAGER.call(volume, self.xcts, options["max_small_rec"], trace=options["trace"],
                                  index_fanout=options["index_fanout"], directory=directory)
        return Mount(volume, directory, RootIndex(volume, self.xcts), files,
                     INDEX_MANAGER.call(volume, self.xcts, directory), RTreeManager(volume, self.xcts, directory))

    def _stamp_volumes(self, lsn: LSN) -> None:
        for volume in self.mounts.volumes():  # each fsynced with its stamp: its pages durable with the checkpoint
            volume.file.stamp_checkpoint(lsn)

    # -- volumes -------------------------------------------------------------------------------
    def add_volume(self, num_pages: int = 1024, ext_sz: int = DEFAULT_EXT_SZ) -> int:
        """Format another volume beside the log (``v<N>.vol``), mount it; return its number."""
        try:
            VolumeHeader.plan(2, num_pages, ext_sz, self.bp.page_size)
        except ValueError as e:
            raise BadRequestError(f"{self.disk.where()}: cannot add a volume: {e}") from None
        with self.checkpointer.serial:  # a checkpoint's device table never sees half a mount
            return self.mounts.add(num_pages, ext_sz)

    def volumes(self) -> list[int]:
        """The numbers of the mounted volumes."""
        return self.mounts.vids()

    def mount_volume(self, vid: int) -> None:
        """Mount volume ``vid`` again (its file is beside the log); its caches start empty."""
        with self.checkpointer.serial:
            self.mounts.mount(vid)

    def dismount_volume(self, vid: int) -> None:
        """Write volume ``vid``'s pages and dismount it; refused while it has active work
        (:mod:`minidb.pagestore.mounts`)."""
        with self.checkpointer.serial:
            self.mounts.dismount(vid, self.xcts)

    # -- opening and closing ------------------------------------------------------------------
    @classmethod
    def format(cls, disk: Disk, num_pages: int = 1024, ext_sz: int = DEFAULT_EXT_SZ,
               page_size: int = DEFAULT_PAGE_SIZE, frames: int = 64, **options: Any) -> "StorageManager":
        """Format a new volume on ``disk`` and open it (an empty restart); ``options`` are :meth:`open`'s.

        The arguments are checked before anything is written; a format that fails later (a full disk, a
        volume already there) deletes the files it created, so that formatting again works."""
        try:
            VolumeHeader.plan(1, num_pages, ext_sz, page_size)
        except ValueError as e:
            raise BadRequestError(f"{disk.where()}: cannot format: {e}") from None
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise BadRequestError(f"{disk.where()}: cannot format: frames: a buffer pool needs at least one frame, not {frames!r}")
        env_seed = options.pop("env_seed", None)
        existed = set(disk.list())
        try:
            log = cls._open_log(disk, options.get("file_max", DEFAULT_FILE_MAX),
                                options.get("buffer_size", DEFAULT_BUFFER_SIZE), options.get("clock", time.time),
                                options.get("log_size"), options.get("partitions", DEFAULT_PARTITIONS),
                                env_seed=env_seed)
            try:
                bp = BUFFER_POOL.call(frames, page_size=page_size, log=log)
                Volume.format(disk, bp, log, num_pages=num_pages, ext_sz=ext_sz, page_size=page_size)
            finally:
                log.close()
            return cls.open(disk, frames=frames, **options)
        except BaseException:
            for name in sorted(set(disk.list()) - existed):  # what this format created, and nothing else
                disk.delete(name)
            raise

    @classmethod
    def open(cls, disk: Disk, frames: int = 64, restart: bool = True, locking: Locking | LockManager | None = None,
             max_small_rec: int | None = None, chkpt_every: int | None = None, trace: bool = False,
             restart_trace: bool = True, file_max: int = DEFAULT_FILE_MAX, buffer_size: int = DEFAULT_BUFFER_SIZE,
             clock: Callable[[], float] = time.time, log_size: int | None = None,
             partitions: int = DEFAULT_PARTITIONS, scavenge: bool | None = None,
             archive: Callable[[str, bytes], None] | None = None,
             on_log_held: Callable[[int, LSN, int], None] | None = None,
             index_fanout: int | None = None, background: bool | Background = False,
             logging_enabled: bool = True) -> "StorageManager":
        """Open the volume on ``disk`` and restart (see the module documentation)."""
        restarter = RESTART.chosen()  # the Restart class (minidb.impl): it checks the volume and log first
        with restarter.opening(disk) as log_options:
            probe = VolumeFile(disk, 1)  # first: no volume, no log created; the header gives the page size
            size, env_id = probe.page_size, probe.header.env_id or None  # and the id its log files carry
            probe.close()
            log = cls._open_log(disk, file_max, buffer_size, clock, log_size, partitions, env_id=env_id,
                                **(log_options if restart else {}))  # what restart asks of the log it reads
            try:
                bp = BUFFER_POOL.call(frames, page_size=size, log=log, trace=trace)
                volume = Volume(disk, bp, log, trace=trace)
            except BaseException:
                log.close(sync=False)
                raise
            if isinstance(locking, LockManager):
                locking = ShoreLocking(locking)
            sm = cls(disk, log, bp, volume, locking, max_small_rec, chkpt_every, trace,
                     log_size is not None if scavenge is None else scavenge, archive, on_log_held, index_fanout,
                     logging_enabled)
            sm.restart = restarter(disk, volume, sm.xcts, sm.checkpointer, trace=restart_trace, files=sm.files,
                                   mounts=sm.mounts)
            if restart:
                sm.restart_report = sm.restart.run()
                if sm.scavenging:
                    sm.scavenge()
                if background:
                    sm.start_background(Background() if background is True else background)
            return sm

    # -- the background threads -----------------------------------------------------------------
    def start_background(self, options: Background) -> None:
        """Start the checkpoint thread and the page cleaner (see the module documentation)."""
        if self.background is not None:
            raise BadRequestError(f"{self.disk.where()}: the background threads run already")
        self.background = BackgroundThreads(self.disk, self.checkpoint, self.bp.clean, options,
                                            trace=self.checkpointer.trace.enabled, log_file=self.log.end_lsn.file)
        self.log.add_listener(lambda lsn, *_: self.background is not None and self.background.entry_logged(lsn))

    @property
    def background_stats(self) -> dict[str, Any]:
        """The background threads' counters (empty without them)."""
        return self.background.counters() if self.background is not None else {}

    @staticmethod
    def _open_log(disk: Disk, file_max: int, buffer_size: int, clock: Callable[[], float],
                  log_size: int | None = None, partitions: int = DEFAULT_PARTITIONS,
                  keep_opening_scan: bool = False, env_id: int | None = None,
                  env_seed: int | str | None = None, opening_end: Any = None) -> LogManager:
        # the volume's id; a new log's seed (minidb.log.envid); the log's end if restart's check just found it
        ids = dict(env_id=env_id, env_seed=env_seed, opening_end=opening_end)
        if log_size is None:
            return LogManager(disk, file_max=file_max, buffer_size=buffer_size, clock=clock,
                              keep_opening_scan=keep_opening_scan, **ids)
        if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 2:
            raise BadRequestError(f"partitions {partitions!r} must be a number of log files, at least 2")
        if not isinstance(log_size, int) or isinstance(log_size, bool) or log_size // partitions < MIN_FILE_MAX:
            raise BadRequestError(f"log_size {log_size!r} must be a number of bytes, at least {MIN_FILE_MAX} per "
                                  f"partition ({partitions} partitions)")
        return LogManager(disk, file_max=log_size // partitions, buffer_size=buffer_size, clock=clock,
                          max_files=partitions, preallocate=True, keep_opening_scan=keep_opening_scan, **ids)

    def close(self) -> None:
        """A clean shutdown: active transactions aborted, every page written, a checkpoint."""
        if self._closed:
            return
        failure = None
        if self.background is not None:
            try:
                self.background.stop()  # a round under way ends first; then this thread alone writes
            except BaseException as e:  # a thread's failure: raised once the close is done
                failure = e
        for xct in self.xcts.active():
            if xct.state != XctState.PREPARED:
                self.xcts.abort(xct)
        self.bp.force_all()
        self.checkpoint(final=True)
        self.mounts.close()
        self.log.close()
        self._closed = True
        if failure is not None:
            raise failure

    def checkpoint(self, final: bool = False) -> CheckpointResult:
        """Take a checkpoint, then scavenge if on. With a bounded log, a checkpoint that would leave
        less than the checkpoint reserve (kept for restart's and a clean close's, ``final``) is refused."""
        if self.scavenging:  # pages that hold old log files are written, so the files can go
            current = self.log.end_lsn.file
            self.bp.clean(lambda frame: frame.rec_lsn is not None and frame.rec_lsn.file < current)
        if self.log_space is not None and not final:
            self.log_space.check_checkpoint(checkpoint_size(len(self.bp.dirty_page_table()), len(self.xcts.active()),
                                                            len(self.mounts.vids())))
        result = self.checkpointer.take()
        self._logged_at_chkpt = self.log.stats["nBytes"]
        if self.scavenging:
            self.scavenge()
        return result

    def scavenge(self) -> list[str]:
        """Remove the log files wholly below the scavenging bound (see the module documentation);
        return their names."""
        self.log.sync()  # every transaction that ended has its end durable: only the active hold the log
        bound = self.scavenge_bound()
        if bound is None:
            return []
        holders = [x for x in self.xcts.active() if not x.first_lsn.is_null]
        oldest = min(holders, key=lambda x: x.first_lsn, default=None)
        if oldest is not None and oldest.first_lsn < bound:
            if self.on_log_held is not None and bound.file > oldest.first_lsn.file:
                self.on_log_held(oldest.txn_id, oldest.first_lsn, bound.file - oldest.first_lsn.file)
            bound = oldest.first_lsn
        return self.log.remove_head_files(bound.file, self.archive)

    def scavenge_bound(self) -> LSN | None:
        """The smallest of the master checkpoint's begin and smallest recovery LSN and the buffer
        pool's smallest recovery LSN (None: no checkpoint completed); active transactions aside."""
        record = read_master(self.disk)
        if record is None:
            return None
        bounds = [record.master, self.log.read(record.end).values["min_rec_lsn"], self.bp.min_rec_lsn()]
        return min(b for b in bounds if b is not None and not b.is_null)

    # -- transactions -----------------------------------------------------------------------------
    def begin(self) -> Xct:
        if self._closed:
            raise BadRequestError(f"{self.disk.where()}: the storage manager is closed; open it again")
        xct = self.xcts.begin()
        xct.log_off = not self.logging_enabled
        return xct

    def logging_off(self, xct: Xct) -> ContextManager[Xct]:
        """``with sm.logging_off(t):``: ``t``'s logging is off inside the block (see the module documentation)."""
        return logswitch.logging_off(xct)

    def _may_change(self, xct: Xct, store: StoreId | None, what: str) -> None:
        """Refuse a change that ``xct`` may not make with its logging off (nothing to check with it on)."""
        if xct.log_off:
            tmp = store is not None and self.mounts.of(store).files.store_property(store) == StoreProperty.TMP
            logswitch.check(xct, store, what, tmp)

    def commit(self, xct: Xct, durable: bool = True) -> LSN:
        lsn = self.xcts.commit(xct, durable)
        return self._kick_checkpointer(lsn) if self.chkpt_every or self.background else lsn

    def _kick_checkpointer(self, lsn: LSN) -> LSN:
        due = self.chkpt_every and self.log.stats["nBytes"] - self._logged_at_chkpt >= self.chkpt_every
        if self.background is None:
            if due:
                self.checkpoint()
            return lsn
        if due:
            self._logged_at_chkpt = self.log.stats["nBytes"]  # kicked once for these bytes
            self.background.kick_checkpoint(f"{self.chkpt_every} bytes logged")
        if len(self.bp.dirty_pages()) >= self.background.options.clean_threshold * len(self.bp.frames):
            self.background.kick_cleaner("dirty pages")
        return lsn

    def prepare(self, xct: Xct, gtid: bytes, coordinator: bytes = b"") -> LSN:
        """Prepare ``xct`` (phase one of two-phase commit) under ``gtid``; return its prepare point."""
        if xct.log_off:
            raise BadRequestError(f"T{xct.txn_id} cannot be prepared with its logging off: a prepared transaction "
                                  f"must roll back, or commit after a crash, from the log alone")
        return self.xcts.prepare(xct, gtid, coordinator)

    def commit_prepared(self, gtid: bytes, durable: bool = True) -> LSN:
        return self._kick_checkpointer(self.xcts.commit_prepared(gtid, durable))

    def abort_prepared(self, gtid: bytes) -> list[UndoStep]:
        return self.xcts.abort_prepared(gtid)

    def in_doubt(self) -> list[InDoubt]:
        """The prepared transactions waiting for their coordinator: gtid, tid, first LSN, locks."""
        return self.xcts.in_doubt()

    def abort(self, xct: Xct) -> list[UndoStep]:
        return self.xcts.abort(xct)

    def save_point(self, xct: Xct) -> SavePoint:
        return self.xcts.save_point(xct)

    def rollback_to(self, xct: Xct, save_point: SavePoint) -> list[UndoStep]:
        return self.xcts.rollback_to(xct, save_point)

    def transaction(self, durable: bool = True) -> ContextManager[Xct]:
        """``with sm.transaction() as t:``: commit at the end of the block, abort on an exception."""
        return TRANSACTION_BLOCK.call(self, durable)

    # -- locks ------------------------------------------------------------------------------------
    def quark(self, xct: Xct) -> Quark:
        """``with sm.quark(t):`` releases at its end the locks ``t`` took inside (extent locks excepted)."""
        return Quark(self.xcts, xct)

    def lock_table(self) -> str:
        """The lock manager's table as text, the keys of index locks decoded (``k(1.5.7)``; the root
        index's names as strings, ``k(1.2.'orders')``)."""
        return self._lock_manager("print the lock table of").dump(self._lock_name)

    def _lock_name(self, lock_id: LockId) -> str:
        mount = self.mounts.of(tuple(lock_id.numbers))
        if lock_id.code == "k" and lock_id.key and tuple(lock_id.numbers) == tuple(mount.root_index.stid):
            return mount.root_index.lock_name(lock_id)
        return mount.indexes.lock_name(lock_id)

    def _lock_manager(self, what: str) -> LockManager:
        manager = getattr(self.xcts.locks, "manager", None)
        if not isinstance(manager, LockManager):
            raise BadRequestError(f"{self.disk.where()}: no lock manager to {what}; open the storage "
                                  f"manager with locking=LockManager()")
        return manager

    def set_escalation(self, store: StoreId | None = None, page_threshold: Any = KEEP,
                       store_threshold: Any = KEEP) -> None:
        """Escalation thresholds (0 or None: never): ``page_threshold`` record locks under one page
        escalate to the page, ``store_threshold`` page locks under one store escalate to the store;
        for the whole storage manager, or for one ``store`` (a file's id is its small-record store)."""
        manager = self._lock_manager("escalate in")
        if store is not None and not isinstance(store, StoreId):
            raise BadRequestError(f"set_escalation: store must be a store id such as s(1.3), not {store!r}")
        manager.set_escalation_thresholds(page_threshold, store_threshold,
                                          LockId.store(store) if store is not None else None)

    # -- files and records (the file manager's operations) ------------------------------------------
    def create_file(self, xct: Xct, property: StoreProperty | str = StoreProperty.REGULAR,
                    volume: int | None = None) -> StoreId:
        """A new file on ``volume`` (the first by default); ``property`` REGULAR, TMP, LOAD or INSERT
        (:mod:`minidb.pagestore.files.storeprops`)."""
        return self.mounts.get(volume).files.create_file(xct, logswitch.property_for(xct, StoreProperty.parse(property)))

    def set_store_property(self, xct: Xct, fid: StoreId, prop: StoreProperty | str) -> None:
        """Make a TMP, LOAD or INSERT file REGULAR (its pages forced), or a REGULAR file INSERT."""
        self._may_change(xct, fid, "change the store property of")
        self.mounts.of(fid).files.set_store_property(xct, fid, prop)

    def store_property(self, fid: StoreId) -> StoreProperty:
        return self.mounts.of(fid).files.store_property(fid)

    def destroy_file(self, xct: Xct, fid: StoreId) -> None:
        self._may_change(xct, fid, "destroy")
        self.mounts.of(fid).files.destroy_file(xct, fid)

    def create_rec(self, xct: Xct, fid: StoreId, body: bytes, hdr: bytes = b"",
                   policy: Policy = Policy.DEFAULT) -> RecordId:
        self._may_change(xct, fid, "create a record in")
        return self.mounts.of(fid).files.create_rec(xct, fid, body, hdr, policy)

    def read_rec(self, xct: Xct, rid: RecordId) -> Record:
        return self.mounts.of(rid).files.read_rec(xct, rid)

    def update_rec(self, xct: Xct, rid: RecordId, start: int, data: bytes) -> None:
        self._may_change(xct, StoreId(rid.vol, rid.store), "change a record of")
        self.mounts.of(rid).files.update_rec(xct, rid, start, data)

    def append_rec(self, xct: Xct, rid: RecordId, data: bytes) -> None:
        self._may_change(xct, StoreId(rid.vol, rid.store), "change a record of")
        self.mounts.of(rid).files.append_rec(xct, rid, data)

    def truncate_rec(self, xct: Xct, rid: RecordId, amount: int) -> None:
        self._may_change(xct, StoreId(rid.vol, rid.store), "change a record of")
        self.mounts.of(rid).files.truncate_rec(xct, rid, amount)

    def free_rec(self, xct: Xct, rid: RecordId) -> None:
        self._may_change(xct, StoreId(rid.vol, rid.store), "change a record of")
        self.mounts.of(rid).files.free_rec(xct, rid)

    def scan(self, xct: Xct, fid: StoreId) -> Iterator[Record]:
        return self.mounts.counted_scan(fid, self.mounts.of(fid).files.scan(xct, fid))

    # -- B+tree indexes (the index manager's operations) ---------------------------------------------
    def create_index(self, xct: Xct, key_desc: str | KeyDescriptor, unique: bool = True,
                     name: str | None = None, volume: int | None = None) -> StoreId:
        """A new, empty B+tree index on ``volume`` (the first by default) whose keys ``key_desc`` describes
        (e.g. ``"i4"``, ``"u2,str"``); with ``name``, registered under it in that volume's root index (a
        name taken is refused first)."""
        self._may_change(xct, None, "create an index")
        mount = self.mounts.get(volume)
        return self._named(xct, mount, name, lambda: mount.indexes.create_index(xct, key_desc, unique))

    def _named(self, xct: Xct, mount: Mount, name: str | None, create: Callable[[], Any]) -> Any:
        """``create()`` a store and, with ``name``, register it in ``mount``'s root index, all or nothing."""
        if name is None:
            return create()
        mount.root_index.check_new(name, xct)
        with all_or_nothing(self.xcts, xct):
            made = create()
            stid = made if isinstance(made, StoreId) else made[0]  # an index, or (index, load report)
            mount.root_index.insert(xct, name, stid.store)
        return made

    def bulk_load_index(self, xct: Xct, key_desc: str | KeyDescriptor, pairs: Iterable[tuple[Any, bytes]],
                        unique: bool = True, fill: float = 0.9, name: str | None = None) -> tuple[StoreId, LoadReport]:
        """A new index built bottom-up from ``pairs`` sorted by key (a LOAD store until ``xct`` commits),
        named ``name`` in the root index if given; refuses unsorted or duplicate input, leaving nothing
        (:mod:`minidb.pagestore.btree.bulkload`)."""
        self._may_change(xct, None, "load an index")
        first = self.mounts.get(None)
        return self._named(xct, first, name, lambda: first.indexes.bulk_load(xct, key_desc, pairs, unique, fill))

    def destroy_index(self, xct: Xct, index: StoreId) -> None:
        """Destroy ``index`` (its store goes at commit) and drop its name, if it has one."""
        self._may_change(xct, None, "destroy an index")
        mount = self.mounts.of(index)
        with all_or_nothing(self.xcts, xct):
            mount.indexes.destroy_index(xct, index)
            name = mount.root_index.name_of(index.store)
            if name is not None:
                mount.root_index.remove(xct, name)


    def find_index(self, name: str, xct: Xct | None = None, volume: int | None = None) -> StoreId | None:
        """The index named ``name`` on ``volume`` (the first by default; None: no index has that name);
        with ``xct``, the name is locked SH (or the next name, if absent) to ``xct``'s end, so it cannot
        appear or go meanwhile."""
        mount = self.mounts.get(volume)
        snum = mount.root_index.find(name, xct)
        return None if snum is None else StoreId(mount.volume.vid, snum)

    def index_names(self, volume: int | None = None) -> dict[str, StoreId]:
        """Every named index of ``volume`` (the first by default), by name."""
        mount = self.mounts.get(volume)
        return {name: StoreId(mount.volume.vid, snum) for name, snum in mount.root_index.names()}

    def index_insert(self, xct: Xct, index: StoreId, key: Any, el: bytes) -> None:
        self._may_change(xct, None, "change the index")
        self.mounts.of(index).indexes.insert(xct, index, key, el)

    def index_remove(self, xct: Xct, index: StoreId, key: Any, el: bytes | None = None) -> bytes:
        self._may_change(xct, None, "change the index")
        return self.mounts.of(index).indexes.remove(xct, index, key, el)

    def index_update(self, xct: Xct, index: StoreId, key: Any, el: bytes, old_el: bytes | None = None) -> bytes:
        self._may_change(xct, None, "change the index")
        return self.mounts.of(index).indexes.update(xct, index, key, el, old_el)

    def index_lookup(self, xct: Xct, index: StoreId, key: Any) -> list[bytes]:
        return self.mounts.of(index).indexes.lookup(xct, index, key)

    def index_scan(self, xct: Xct, index: StoreId, lo: Any = None, hi: Any = None, lo_incl: bool = True,
                   hi_incl: bool = True, backward: bool = False) -> Iterator[tuple[Any, bytes]]:
        return self.mounts.counted_scan(index, self.mounts.of(index).indexes.scan(xct, index, lo, hi, lo_incl, hi_incl, backward))

    # -- R*-tree indexes (the R*-tree manager's operations) -------------------------------------------
    def create_rtree(self, xct: Xct, name: str | None = None, fanout: int | None = None,
                     volume: int | None = None) -> StoreId:
        """A new, empty R*-tree index of boxes on ``volume`` (the first by default;
        :mod:`minidb.pagestore.rtree`); with ``name``, registered under it in that volume's root index (a
        name taken is refused first); ``fanout``: a node's most entries."""
        self._may_change(xct, None, "create an R*-tree")
        mount = self.mounts.get(volume)
        return self._named(xct, mount, name, lambda: mount.rtrees.create(xct, fanout))

    def destroy_rtree(self, xct: Xct, index: StoreId) -> None:
        """Destroy the R*-tree ``index`` (its store goes at commit) and drop its name, if it has one."""
        self._may_change(xct, None, "destroy an R*-tree")
        mount = self.mounts.of(index)
        with all_or_nothing(self.xcts, xct):
            mount.rtrees.destroy(xct, index)
            name = mount.root_index.name_of(index.store)
            if name is not None:
                mount.root_index.remove(xct, name)

    def rtree_insert(self, xct: Xct, index: StoreId, box: Box | tuple[int, int, int, int], el: bytes) -> None:
        self._may_change(xct, None, "change the R*-tree")
        self.mounts.of(index).rtrees.insert(xct, index, box, el)

    def rtree_remove(self, xct: Xct, index: StoreId, box: Box | tuple[int, int, int, int], el: bytes) -> None:
        self._may_change(xct, None, "change the R*-tree")
        self.mounts.of(index).rtrees.remove(xct, index, box, el)

    def rtree_search(self, xct: Xct, index: StoreId, box: Box | tuple[int, int, int, int],
                     cond: str = "overlap") -> list[tuple[Box, bytes]]:
        return self.mounts.of(index).rtrees.search(xct, index, box, cond)

    # -- looking -------------------------------------------------------------------------------------
    def contents(self) -> dict[StoreId, dict[RecordId, tuple[bytes, bytes]]]:
        """Every file's records as {file: {rid: (header, body)}}, read in one transaction."""
        with self.transaction(durable=False) as xct:
            return {fid: {rec.rid: (rec.hdr, rec.body) for rec in files.scan(xct, fid)}
                    for files in self.mounts.file_managers() for fid in files.files()}

    def check(self) -> list[str]:
        """Consistency problems of the volumes' maps (empty when all is well)."""
        return [problem for volume in self.mounts.volumes() for problem in volume.check()]

    def __repr__(self) -> str:
        return f"StorageManager({self.volume!r}, {self.xcts!r})"
