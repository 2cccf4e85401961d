"""The environment (JE's ``Environment``): a directory of log files holding databases.

In the log store the log is the database. An environment is one shared log
(:mod:`minidb.log`) on a disk (a directory of real files, or a simulated disk
that can crash); everything else is rebuilt from that log when the
environment opens, by recovery::

    env = Environment.open("/tmp/bank")          # or Environment.open(SimDisk("bank"))
    accounts = env.database("accounts")          # created if missing (a MapLN)
    accounts.put("alice", "100")
    with env.begin() as txn:
        accounts.put("bob", "50", txn=txn)       # committed, fsynced, at the end of the block
    env.checkpoint()                             # the ten steps; returns what it did
    env.close()                                  # a last checkpoint, then the log is closed

Its parts, a module or a folder each: the mapping tree of databases
(:mod:`.mapping_tree`), the trees and the node logger (:mod:`.tree`), records
(:mod:`.records`), transactions and locks (:mod:`.txn`), the evictor, the
dirty map and the checkpointer (:mod:`.checkpoint`), recovery
(:mod:`.recovery`), and the log cleaner with its utilization tracker
(:mod:`.cleaner`: ``env.clean_log()`` on demand, a thread when
``config.run_cleaner``; checkpoints delete the files it cleaned).

The environment is the *composition root*: ``_build_parts`` builds every part
and hands each the few collaborators it needs (the tree its cache, node logger
and dirty map; the transaction manager the records and locks; ...); what they
all share is one :class:`~minidb.logstore.core.EnvCore`. No part reaches a
sibling through another. Recovery is handed the parts
(:class:`~minidb.logstore.recovery.parts.Parts`) and asks each to take what it
found. Every entry the environment writes goes through
:meth:`EnvCore.log_entry <minidb.logstore.core.EnvCore.log_entry>`, which
counts it for the utilization tracker. Every public operation takes the
environment latch, then lets the evictor and the checkpointer (by log growth)
run: a single-writer engine, deterministic, with checkpoints that can
nevertheless be stepped through while other operations run between steps.
The one place an operation lets go of the latch midway is a record lock
wait (:mod:`.txn.locks`): it asks for the lock before it reads the tree, or
searches again after waiting.

For replication (:mod:`minidb.replication`) the environment offers: ``config.replicated`` (the
records of replicated databases and their Commit/Abort get VLSNs from
``env.log.vlsn_allocator``; :data:`~minidb.logstore.logdef.REPLICABLE_TYPES`),
internal databases that are never replicated (:meth:`internal_database`),
a checkpoint hook at step 6 and recovery listeners that see every entry from
CkptStart on (:class:`~minidb.logstore.config.EnvironmentHooks`). The first
open records in the mapping tree whether the environment is replicated;
from then on an open of the other kind is an
:class:`~minidb.logstore.errors.EnvironmentKindError`, raised before anything
is written (:mod:`.mapping_tree`).

``crash()`` (simulated disks only) drops everything not yet on the disk and
closes the environment; ``Environment.open`` on the same disk then recovers.

**Reads on a full disk.** A read writes only what the evictor must log to
keep the node budget (a dirty node it evicts, which may make the log write
its buffer out): that is why a get could meet a full disk. After a get or a
cursor step a full disk stops the eviction instead of failing the read (the
node stays resident and dirty, the log changed nothing,
``nEvictionsDeferred``), and a read starts no checkpoint, so reads go on
when the disk is full; the log's buffer is read in place, never flushed
for a read.

**Read-only** (``EnvironmentConfig(read_only=True)``, JE's
``setReadOnly``): opening runs recovery in memory and writes nothing to the
disk: the log is opened without its write handle (no file created, a torn
tail ignored, not cut), the kind of environment is not recorded, recovery
ends without its checkpoint, the evictor detaches clean nodes only, and
closing takes no checkpoint. An erasure the data eraser recorded but did not
finish is not finished (a writable open does that first): the log is given
the recorded intent, and accepts the entries it names as they are. A directory is opened through a read-only
:class:`~minidb.io.OSDisk`. Every write is refused with a
:class:`~minidb.logstore.errors.ReadOnlyEnvironmentError` (a ``UserError``)
before anything changes: put, delete, a new database, a checkpoint,
cleaning, the eraser; a transaction may begin and read, and its commit
logs nothing. So a full disk, or one only readable, can still be read;
opening an environment that does not exist yet (no log file) read-only is
refused. A replicated environment cannot be opened read-only
(:mod:`minidb.replication.env`: its recovery finishes the VLSN index by
writing).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from minidb.errors import DiskFullError, UserError
from minidb.io import CrashMode, Disk, OSDisk, SimDisk
from minidb.log import LSN, Provisional
from minidb.logstore.checkpoint.checkpointer import CHECKPOINTER
from minidb.logstore.checkpoint.dirty_map import DIRTY_IN_MAP
from minidb.logstore.checkpoint.records import CheckpointResult
from minidb.logstore.cleaner import CLEANER, CleanerThread, FileCleaning
from minidb.logstore.cleaner.utilization import UTILIZATION_TRACKER, FileSummary
from minidb.logstore.config import EnvironmentConfig, EnvironmentHooks
from minidb.logstore.core import EnvCore
from minidb.logstore.database import DATABASE, Database
from minidb.logstore.eraser.protocol import finish_recorded_erasure
from minidb.logstore.eraser.state import erasing_of
from minidb.logstore.errors import ReadOnlyEnvironmentError
from minidb.logstore.evictor import Evictor
from minidb.logstore.logdef import FILE_SUMMARY_LN
from minidb.logstore.mapping_tree import DbTree
from minidb.logstore.records import RecordOps
from minidb.logstore.recovery import RECOVERY_MANAGER, RecoveryInfo
from minidb.logstore.recovery.parts import Parts
from minidb.logstore.tree.node_logger import NodeLogger
from minidb.logstore.txn.locks import LOCK_TABLE
from minidb.logstore.txn.txn import Transaction, TxnManager

if TYPE_CHECKING:
    from minidb.log.types import EntryType
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.tree import DatabaseImpl


class Environment:
    """An open environment (see the module documentation)."""

    def __init__(self, disk: Disk, config: EnvironmentConfig | None = None, hooks: EnvironmentHooks | None = None,
                 phase_listener=None):
        self.disk = disk
        self.config = config or EnvironmentConfig()
        self.hooks = hooks or EnvironmentHooks()
        self.read_only = self.config.read_only
        self._in_after_operation = False
        self._open_and_recover(disk, phase_listener)
        self.cleaner_thread: CleanerThread | None = None
        if self.config.run_cleaner:
            self.cleaner_thread = CleanerThread(self.core, self.cleaner)
            self.cleaner_thread.start()

    def _open_and_recover(self, disk: Disk, phase_listener) -> None:
        # An erasure the eraser recorded but did not finish (a crash) is finished before the log is read:
        # afterwards every erased entry is in its erased form (minidb.logstore.eraser.protocol). Read only,
        # nothing is written: the log is told of the recorded intent instead, and accepts its half-erased entries.
        erasing = erasing_of(disk) if self.read_only else None
        if not self.read_only:
            finish_recorded_erasure(disk)
        recovery = RECOVERY_MANAGER.chosen()
        with recovery.opening():  # the log opened and recovered in one block (the twin pauses the collector)
            self.log = recovery.open_log(disk, file_max=self.config.file_max, buffer_size=self.config.buffer_size,
                                         clock=self.config.clock, readonly=self.read_only, erasing=erasing,
                                         env_seed=self.config.env_seed)
            if self.read_only and not self.log.end().files:
                self.log.close(sync=False)
                raise ReadOnlyEnvironmentError(f"{disk.where()}: no environment to open read-only (no log file)")
            self._build_parts()
            parts = Parts(self.core, self.utilization, self.locks, self.records, self.evictor, self.db_tree,
                          self.txn_manager, self.checkpointer)
            listener = None if phase_listener is None else (lambda phase: phase_listener(phase, self))
            with self.latch:
                self.core.recovering = True  # no checkpoint by log growth (and no eviction but recovery's own) meanwhile
                try:
                    self.recovery_info: RecoveryInfo = recovery(parts, listener).recover()
                except ReadOnlyEnvironmentError as refused:  # recovery of a first open that crashed must write
                    self.log.close(sync=False)
                    raise ReadOnlyEnvironmentError(f"{disk.where()}: cannot open read-only: recovery would have to "
                                                   f"write ({refused}); open it once for writing") from None
                except UserError:
                    self.log.close(sync=False)  # refused (another engine's log, the other kind of environment)
                    raise
                finally:
                    self.core.recovering = False

    def _build_parts(self) -> None:
        """The composition root: each part gets the few collaborators it needs, and nothing else. A part
        that must call one built after it (the node logger the cleaner, the cache the mapping tree) is given
        a function of the environment's, which calls it when the time comes."""
        self.utilization = UTILIZATION_TRACKER.call(self.log, self._write_file_summary,
                                                    self.config.cleaner_whole_summary_offsets)
        self.core = core = EnvCore(self.disk, self.config, self.hooks, self.log, self.utilization)
        core.after_operation = self.after_operation
        self.latch, self.trace, self.stats = core.latch, core.trace, core.stats
        self.locks = LOCK_TABLE.call(core)
        self.node_logger = NodeLogger(core, self.utilization, self.locks, self.db_by_id, self._migrate_marked,
                                      self._root_logged)
        self.dirty_map = DIRTY_IN_MAP.call(core, self.db_by_id, self._resident_nodes)
        self.evictor = Evictor(core, self.node_logger, self.dirty_map, self.db_by_id)
        self.records = RecordOps(core, self.utilization, self.locks)
        self.db_tree = DbTree(core, self.records, self.locks, self.utilization, self.evictor, self.node_logger,
                              self.dirty_map)
        self.txn_manager = TxnManager(core, self.utilization, self.locks, self.records, self.db_by_id)
        self.checkpointer = CHECKPOINTER.call(core, self.utilization, self.dirty_map, self.node_logger, self.db_tree,
                                         self.txn_manager)
        self.cleaner = CLEANER.call(core, self.utilization, self.locks, self.records, self.db_tree, self.txn_manager,
                                    self.checkpointer)
        self.checkpointer.cleaner = self.cleaner
        self.checkpointer.environment = self

    # The functions the composition root hands to parts built before what they call.
    def _write_file_summary(self, key: bytes, values: dict) -> LSN:
        # A record rewritten whole replaces its previous version: the profile's upkeep (see utilization).
        return self.records.write_internal(self.db_tree.utilization, key, FILE_SUMMARY_LN, values, upkeep=True)

    def _migrate_marked(self, bin_node: IN) -> None:
        self.cleaner.migrate_marked(bin_node)

    def _root_logged(self, db: DatabaseImpl) -> None:
        self.db_tree.modify_db_root(db)

    def _resident_nodes(self) -> list[IN]:
        return self.evictor.resident_nodes()

    @classmethod
    def open(cls, where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
             hooks: EnvironmentHooks | None = None, create: bool = True, phase_listener=None) -> "Environment":
        """Open (and recover) the environment in a directory or on a disk."""
        if not isinstance(where, (Disk, str, os.PathLike)):
            raise UserError(f"an environment is opened on a directory or a Disk, not {where!r}")
        if not isinstance(where, Disk):
            try:
                os.fsencode(where)
            except UnicodeEncodeError as e:  # a lone surrogate: no file name has it
                problem = f"{e.reason} at index {e.start}"
                raise UserError(f"directory {os.fspath(where)!r} is not a file name: {problem}") from None
        read_only = config is not None and config.read_only
        disk = where if isinstance(where, Disk) else OSDisk(os.fspath(where), create=create and not read_only,
                                                            readonly=read_only)
        return cls(disk, config, hooks, phase_listener)

    # -- the core's state and services, as the environment's -------------------------------
    @property
    def closed(self) -> bool:
        return self.core.closed

    @property
    def invalid(self) -> str | None:
        return self.core.invalid

    @property
    def recovering(self) -> bool:
        return self.core.recovering

    @property
    def last_node_id(self) -> int:
        return self.core.last_node_id

    def where(self) -> str:
        return self.disk.where()

    def check_usable(self) -> None:
        self.core.check_usable()

    def check_writable(self, what: str) -> None:
        self.core.check_writable(what)

    def invalidate(self, reason: str) -> None:
        self.core.invalidate(reason)

    def now_ms(self) -> int:
        return self.core.now_ms()

    def db_by_id(self, db_id: int) -> DatabaseImpl:
        return self.db_tree.require_id(db_id)

    def log_entry(self, entry_type: EntryType, values: dict[str, Any], *, provisional: Provisional = Provisional.NO,
                  replicated: bool = False, vlsn: int | None = None) -> LSN:
        """Append one entry to the log, counted for the utilization tracker (:meth:`EnvCore.log_entry`)."""
        return self.core.log_entry(entry_type, values, provisional=provisional, replicated=replicated, vlsn=vlsn)

    def after_operation(self, read: bool = False) -> None:
        """After each operation: eviction to the budget, a checkpoint if the log grew enough. After a
        ``read`` no checkpoint, and a full disk stops the eviction instead of failing the read; in a
        read-only environment only clean nodes are evicted (see the module documentation)."""
        if self._in_after_operation or self.closed or self.recovering:
            return
        config = self.config
        if read or self.read_only:
            if config.node_budget is not None and self.evictor.resident_count() > config.node_budget:
                self._evict_after_read()
            return
        budget, interval = config.node_budget, config.checkpoint_bytes_interval
        if ((budget is None or self.evictor.resident_count() <= budget)
                and (interval is None or self.checkpointer.bytes_since_last_end() < interval)
                and self.cleaner_thread is None):
            return  # the usual case, nothing to do: the tests of evict_to_budget and maybe_checkpoint, made here
        self._in_after_operation = True
        try:
            self.evictor.evict_to_budget()
            self.checkpointer.maybe_checkpoint()
            if self.cleaner_thread is not None:
                self.cleaner_thread.wake_if_due()
        finally:
            self._in_after_operation = False

    def _evict_after_read(self) -> None:
        try:
            self.evictor.evict_to_budget(clean_only=self.read_only)
        except DiskFullError as full:  # the dirty node stays resident, unlogged: the log changed nothing
            self.evictor.stats.add("nEvictionsDeferred")
            self.trace.emit("eviction after a read stopped over the budget: %s", full)

    # -- databases -------------------------------------------------------------------------
    def database(self, name: str, create: bool = True) -> Database:
        """The user database ``name``; created if missing (unless ``create`` is False)."""
        return self._database(name, internal=False, create=create)

    def internal_database(self, name: str, create: bool = True) -> Database:
        """An internal database (name starting with ``_``): never replicated (e.g. the VLSN index)."""
        return self._database(name, internal=True, create=create)

    def _database(self, name: str, internal: bool, create: bool) -> Database:
        with self.latch:
            self.check_usable()
            impl = self.db_tree.get(name)
            if impl is None:
                if not create:
                    self.db_tree.require(name)
                self.check_writable(f"create database {name!r}")
                impl = self.db_tree.create(name, internal=internal)
                self.after_operation()
            elif impl.internal != internal:
                kind = "an internal" if impl.internal else "a user"
                raise UserError(f"database {name!r} is {kind} database")
            return DATABASE.call(self, impl)

    def database_names(self, internal: bool = False) -> list[str]:
        return self.db_tree.names(internal)

    # -- transactions and checkpoints --------------------------------------------------------
    def begin(self, durability=None, *, internal: bool = False, lock_timeout: float | None = None) -> Transaction:
        """A transaction; ``internal`` ones (writing internal databases only) get negative ids (:class:`TxnManager`);
        ``lock_timeout`` (seconds; 0: no waiting) overrides the environment's for this transaction."""
        with self.latch:
            self.check_usable()
            return self.txn_manager.begin(durability, internal=internal, lock_timeout=lock_timeout)

    def checkpoint(self, minimize_recovery_time: bool = False) -> CheckpointResult:
        with self.latch:
            self.check_usable()
            self.check_writable("take a checkpoint")
            return self.checkpointer.run("api", minimize_recovery_time)

    def sync(self) -> None:
        """Make everything logged so far durable (an fsync of the log)."""
        with self.latch:
            self.check_usable()
            if not self.read_only:  # nothing was logged: nothing to make durable
                self.log.sync()

    def clean_log(self, max_files: int | None = None) -> list[FileCleaning]:
        """Clean log files while the cleaner selects one (JE's ``Environment.cleanLog``).

        The files cleaned are deleted after the next checkpoint's CkptEnd.
        """
        with self.latch:
            self.check_usable()
            self.check_writable("clean the log")
            done = self.cleaner.clean(max_files)
            self.after_operation()
            return done

    def is_entry_erased(self, lsn: LSN) -> bool:
        """Whether the data eraser erased the entry at ``lsn`` (its type byte is LOG_ERASED)."""
        with self.latch:
            if self.closed:  # an invalid environment may still be asked
                self.check_usable()
            return self.log.read(lsn).header.erased

    def utilization_report(self) -> list[FileSummary]:
        return self.utilization.report()

    # -- closing and crashing ------------------------------------------------------------------
    def close(self) -> None:
        """A last checkpoint, then close the log. Open transactions must be ended first."""
        self._stop_cleaner_thread()
        if not self.closed:
            for listener in self.hooks.close_listeners:  # before the latch: one may stop a thread that takes it
                listener()
        with self.latch:
            if self.closed:
                return
            if self.txn_manager.active and self.invalid is None:  # an invalid one: they are losers of recovery
                ids = ", ".join(str(t) for t in sorted(self.txn_manager.active))
                raise UserError(f"cannot close {self.where()}: transactions {ids} are still open")
            if self.invalid is None and not self.read_only:
                if self.checkpointer.current is not None:
                    self.checkpointer.current.finish()
                self.utilization.closing()  # the records that wait for the profile's upkeep go too
                self.checkpointer.run("close")
            self.log.close()
            self.core.closed = True
            self.evictor.clear()

    def crash(self, mode: CrashMode | None = None) -> None:
        """Simulate a power failure: what was not fsynced is lost as ``mode`` says (default: all of it)."""
        if not isinstance(self.disk, SimDisk):
            raise UserError(f"crash() needs a simulated disk; {self.where()} is a real directory")
        self._stop_cleaner_thread()
        with self.latch:
            self.disk.crash(mode or CrashMode.nothing())
            self.core.closed = True
            self.evictor.clear()
            self.locks.wake_waiters()  # a waiting operation finds the environment closed

    def _stop_cleaner_thread(self) -> None:
        if self.cleaner_thread is not None:
            self.cleaner_thread.stop()  # outside the latch: a run waiting for it can finish first

    def __enter__(self) -> "Environment":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        if not self.closed and exc_type is None:
            self.close()

    def __repr__(self) -> str:
        return f"Environment({self.where()}, databases={self.database_names()})"


def open_environment(where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
                     hooks: EnvironmentHooks | None = None, create: bool = True) -> Environment:
    return Environment.open(where, config, hooks, create)


__all__ = ["Environment", "open_environment"]
