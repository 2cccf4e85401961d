"""A replicated environment: a log store environment with VLSNs and a VLSN index.

JE's ``ReplicatedEnvironment``, reduced to what part 1 of replication needs:
a node's environment whose replicated databases log their records and
transaction ends with VLSNs, and whose :class:`~minidb.replication.index.VLSNIndex`
maps them to LSNs, is flushed at every checkpoint and recovered with the
environment::

    env = ReplicatedEnvironment.open(SimDisk("node1"))
    db = env.database("accounts")            # replicated (internal databases never are)
    db.put("alice", "100")                   # LN with VLSN 1
    with env.begin() as txn:
        db.put("bob", "50", txn=txn)         # LN_TX, VLSN 2
    #                                          Commit, VLSN 3
    env.log_matchpoint()                     # Matchpoint, VLSN 4
    env.vlsn_index.range                     # first 1, last 4, last_sync 4, last_txn_end 3
    env.crash(); env = ReplicatedEnvironment.open(disk)    # recovery merges; the next VLSN is 5

How it plugs into the log store (which never imports replication):

1. before the environment opens, the index starts a recovery tracker and
   becomes a *recovery listener* (every entry from the last CkptStart on)
   and the *step-6 hook* of every checkpoint (``EnvironmentHooks``);
2. the environment opens and recovers; its final checkpoint's step 6 loads
   the flushed index from ``_vlsn_index``, merges the recovery tracker into
   it and flushes the result (:meth:`VLSNIndex.on_checkpoint`);
3. then the index's allocator becomes ``env.log.vlsn_allocator`` (called
   under the log write latch) and its ``put`` a log listener (called after
   the latch is released);
4. the index's ``truncate_head_for_file`` becomes a deletion listener of the
   log cleaner's protection registry: before checkpoint step 9 deletes
   cleaned files, the index forgets the VLSNs they hold.

The environment's log records that it is replicated (the mapping tree's own
MapLN, :mod:`minidb.logstore.mapping_tree`): ``Environment.open`` refuses it,
and ``ReplicatedEnvironment.open`` refuses a plain environment, each with an
:class:`~minidb.logstore.errors.EnvironmentKindError` naming the directory
and having written nothing, so no entry is ever logged without its VLSN and
no VLSN is handed out twice.
"""

from __future__ import annotations

import dataclasses
import os

from minidb.io import CrashMode, Disk
from minidb.log import LSN, LogManager
from minidb.logstore import (Database, DataEraser, Environment, EnvironmentConfig, EnvironmentHooks,
                             Transaction)
from minidb.logstore.checkpointer import CheckpointResult
from minidb.logstore.recovery import RecoveryInfo
from minidb.replication.config import VLSNIndexConfig
from minidb.replication.errors import VLSNIndexError
from minidb.replication.index import VLSNIndex
from minidb.replication.logdef import MATCHPOINT
from minidb.replication.range import VLSNRange


class ReplicatedEnvironment:
    """An open replicated environment (see the module documentation)."""

    def __init__(self, env: Environment, vlsn_index: VLSNIndex, node_id: int = 1):
        self.env = env
        self.vlsn_index = vlsn_index
        self.node_id = node_id

    @classmethod
    def open(cls, where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
             index_config: VLSNIndexConfig | None = None, hooks: EnvironmentHooks | None = None,
             create: bool = True, phase_listener=None, node_id: int = 1) -> "ReplicatedEnvironment":
        """Open (and recover) a replicated environment and its VLSN index."""
        config = dataclasses.replace(config or EnvironmentConfig(), replicated=True)
        index = VLSNIndex(index_config)
        index.begin_recovery()
        hooks = dataclasses.replace(hooks or EnvironmentHooks())
        hooks.flush_vlsn_index = [*hooks.flush_vlsn_index, index.on_checkpoint]
        hooks.recovery_listeners = [*hooks.recovery_listeners, index.recovery_listener]
        hooks.recovery_read_done = [*hooks.recovery_read_done, index.recovery_read_done]
        env = Environment.open(where, config, hooks, create, phase_listener)
        if index.env is not env or index.merge_result is None:
            raise VLSNIndexError(f"{env.where()}: recovery did not finish the VLSN index")
        env.log.vlsn_allocator = index.allocator
        env.log.add_listener(index.log_listener)
        env.cleaner.protector.add_deletion_listener(index.before_file_deletion)  # before the cleaner deletes
        return cls(env, index, node_id)

    def data_eraser(self, config=None, clock=None, **hooks) -> DataEraser:
        """The log store's data eraser, with the VLSN index truncated before each file it changes."""
        return DataEraser(self.env, config, clock, truncate_vlsn_index=self.vlsn_index.release_file_for_erasure,
                          **hooks)

    # -- the log store environment ------------------------------------------------------------
    @property
    def log(self) -> LogManager:
        return self.env.log

    @property
    def disk(self) -> Disk:
        return self.env.disk

    @property
    def recovery_info(self) -> RecoveryInfo:
        return self.env.recovery_info

    @property
    def range(self) -> VLSNRange:
        return self.vlsn_index.range

    def where(self) -> str:
        return self.env.where()

    def database(self, name: str, create: bool = True) -> Database:
        """A replicated database (its records and their transactions' ends get VLSNs)."""
        return self.env.database(name, create)

    def internal_database(self, name: str, create: bool = True) -> Database:
        """An internal database: never replicated."""
        return self.env.internal_database(name, create)

    def begin(self, durability=None) -> Transaction:
        return self.env.begin(durability)

    def checkpoint(self, minimize_recovery_time: bool = False) -> CheckpointResult:
        return self.env.checkpoint(minimize_recovery_time)

    def sync(self) -> None:
        self.env.sync()

    # -- replication's own entries -------------------------------------------------------------
    def log_matchpoint(self) -> LSN:
        """Log a Matchpoint (a sync point of the replication stream); returns its LSN."""
        env = self.env
        with env.latch:
            env.check_usable()
            lsn = env.log_entry(MATCHPOINT, {"master_node_id": self.node_id, "time_ms": env.now_ms()},
                                replicated=True)
            env.after_operation()
            return lsn

    # -- closing -----------------------------------------------------------------------------------
    def close(self) -> None:
        """A last checkpoint (which flushes the index), then close; waiting feeders are released."""
        try:
            self.env.close()
        finally:
            if self.env.closed:
                self.vlsn_index.close()

    def crash(self, mode: CrashMode | None = None) -> None:
        """Simulate a power failure (simulated disks only); the index is lost with the memory."""
        self.env.crash(mode)
        self.vlsn_index.close()

    @property
    def closed(self) -> bool:
        return self.env.closed

    def __enter__(self) -> "ReplicatedEnvironment":
        return self

    def __exit__(self, exc_type, *exc: object) -> None:
        if not self.env.closed and exc_type is None:
            self.close()

    def __repr__(self) -> str:
        return f"ReplicatedEnvironment({self.where()}, VLSNs {self.vlsn_index.range})"


def open_replicated(where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
                    index_config: VLSNIndexConfig | None = None) -> ReplicatedEnvironment:
    return ReplicatedEnvironment.open(where, config, index_config)


__all__ = ["ReplicatedEnvironment", "open_replicated"]
