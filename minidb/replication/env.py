"""A replicated environment: a log store environment with VLSNs and a VLSN index.

JE's ``ReplicatedEnvironment``, reduced to what part 1 of replication needs:
a node's environment whose replicated databases log their records and
transaction ends with VLSNs, and whose :class:`~minidb.replication.vlsn.index.VLSNIndex`
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
   cleaned files, the index forgets the VLSNs they hold;
5. recovery asks :func:`~minidb.replication.syncup.periods.checkpoint_in_rollback_period`
   whether it may start from a checkpoint (``checkpoint_not_usable``): not
   from one inside a syncup's rollback period.

A rollback across a checkpoint ends with :meth:`ReplicatedEnvironment.hard_recover`:
steps 1-5 again, on the same disk, inside the same replicated environment
(:mod:`.syncup.rollback` says why in place). The node's replication settings
are a :class:`~minidb.replication.config.ReplicationConfig` (``rep_config``).

Before any of this, :meth:`~ReplicatedEnvironment.open` finishes a network
restore's install whose marker is durable, or discards the staging area of
one that never got that far (:func:`~minidb.replication.restore.staging.finish_restore`),
so a half-restored log never opens. The environment also keeps the
checksums a network restore's server caches per log file
(``file_checksums``, :mod:`minidb.replication.restore.server`); its data
eraser drops a file's cached checksum before it changes the file
(:meth:`~ReplicatedEnvironment.clear_cached_file_checksum`).

**Nodes and roles.** Opened with a ``group`` (:class:`~minidb.replication.group.membership.RepGroup`)
and its ``node_name``, the environment is one node of that group and starts
in state UNKNOWN; :meth:`~ReplicatedEnvironment.become_master`,
:meth:`~ReplicatedEnvironment.become_replica` change it (an election's
learner calls them: :meth:`~minidb.replication.group.elections.ElectionNode.for_env`). Opened without a group it is a group of one
and its own master, as before. Only the master allocates VLSNs (the log's
``vlsn_allocator`` refuses on any other node) and writes: a replica's
databases refuse ``put`` and ``delete`` with
:class:`~minidb.replication.errors.ReplicaWriteError` naming the master
(UNKNOWN: :class:`~minidb.replication.errors.UnknownMasterError`), before
anything is locked or logged. A replica writes only the master's entries,
with the master's VLSNs and transaction ids, through
:meth:`~ReplicatedEnvironment.replay` (JE's ``Replay.replayEntry``): the
entry must carry the next VLSN of the stream; LNs go into the tree,
transactional ones under a transaction with the master's id, Commit and
Abort end it. Internal transactions (the VLSN index's flush) take negative
ids (:class:`~minidb.logstore.txn.txn.TxnManager`), so they never collide with
the master's ids::

    replica = ReplicatedEnvironment.open(SimDisk("n2"), group=group, node_name="n2")
    replica.become_replica("n1")
    replica.database("accounts").put("k", "v")   # ReplicaWriteError: node n2 is a replica; write on master n1 (n1)
    replica.replay(1, "LN_TX", {"txn_id": 7, ...}, db_name="accounts")   # VLSN 1, txn 7: the master's

The environment's log records that it is replicated (the mapping tree's own
MapLN, :mod:`minidb.logstore.mapping_tree`): ``Environment.open`` refuses it,
and ``ReplicatedEnvironment.open`` refuses a plain environment, each with an
:class:`~minidb.logstore.errors.EnvironmentKindError` naming the directory
and having written nothing, so no entry is ever logged without its VLSN and
no VLSN is handed out twice. A read-only open (``EnvironmentConfig(read_only=True)``)
is refused with a ``UserError`` before anything is read: recovery finishes
the VLSN index by writing.
"""

from __future__ import annotations

import dataclasses
import os

from minidb.errors import UserError
from minidb.io import CrashMode, Disk, OSDisk
from minidb.log import LSN, LogManager
from minidb.logstore import Database, DataEraser, Environment, EnvironmentConfig, EnvironmentHooks, Transaction
from minidb.logstore.checkpoint.records import CheckpointResult
from minidb.logstore.logdef import USER_LN_TYPES
from minidb.logstore.recovery import RecoveryInfo
from minidb.logstore.tree.tree import DatabaseImpl
from minidb.replication.config import ReplicationConfig
from minidb.replication.errors import (
    GroupConfigError,
    ReplayError,
    ReplicaWriteError,
    SyncupError,
    UnknownMasterError,
    VLSNIndexError,
)
from minidb.replication.group.membership import NodeState, RepGroup
from minidb.replication.logdef import MATCHPOINT, TERM_START
from minidb.replication.restore.checksums import FileChecksums
from minidb.replication.restore.staging import finish_restore
from minidb.replication.stream import ack
from minidb.replication.stream.durability import Durability as RepDurability
from minidb.replication.syncup.periods import checkpoint_in_rollback_period
from minidb.replication.syncup.rollback import (
    PendingRollback,
    RollbackResult,
    finish_pending,
    redo_marks_and_undo,
    reopen_replay_txns,
    roll_back,
    undo_again,
)
from minidb.replication.vlsn.config import VLSNIndexConfig
from minidb.replication.vlsn.index import VLSN_INDEX, VLSNIndex
from minidb.replication.vlsn.range import VLSNRange


def _holds(impl: DatabaseImpl, key: bytes) -> bool:
    """Does the tree hold a live record for ``key`` (whoever wrote it)?"""
    bin_node = impl.tree.search(key)
    index, exact = bin_node.find(key)
    return exact and not bin_node.known_deleted[index]


class ReplicatedDatabase(Database):
    """A replicated database's handle: writes only on the master (reads anywhere)."""

    def __init__(self, rep_env: "ReplicatedEnvironment", impl: DatabaseImpl):
        super().__init__(rep_env.env, impl)
        self.rep_env = rep_env

    def put(self, key, data, txn=None) -> LSN:
        self.rep_env.check_master(f"put into {self.name!r}")
        return super().put(key, data, txn)

    def delete(self, key, txn=None) -> LSN | None:
        self.rep_env.check_master(f"delete from {self.name!r}")
        return super().delete(key, txn)


class ReplicatedEnvironment:
    """An open replicated environment (see the module documentation)."""

    def __init__(self, env: Environment, vlsn_index: VLSNIndex, node_id: int = 1, group: RepGroup | None = None,
                 node_name: str | None = None, rep_config: ReplicationConfig | None = None):
        self.env = env
        self.rep_config = rep_config or ReplicationConfig()
        self._opening: _Opening | None = None  # how open() opened it (hard recovery opens it again so)
        self.vlsn_index = vlsn_index
        self.node_id = node_id
        self.group = group
        self.node_name = node_name or "standalone"
        self.state = NodeState.MASTER if group is None else NodeState.UNKNOWN
        self.master_name: str | None = self.node_name if group is None else None
        self.replay_txns: dict[int, Transaction] = {}  # the master's txn id -> the replica's transaction
        self.feeder_txns = ack.FeederTxns(self)  # the feeders, and the commits waiting for their acks
        self._txn_durability: dict[int, RepDurability] = {}  # begun with a replication Durability
        self.recovered_rollback: RollbackResult | None = None  # a rollback a crash cut short, finished at open
        env.log.vlsn_allocator = self._allocate_vlsn
        # a network restore's server caches them (restore/server.py); a rollback's tail truncation drops them
        self.file_checksums = FileChecksums(env.disk, lambda: self.vlsn_index.stats["nTailTruncations"])
        self._hear_erasures(env)
        self.finished_restore: str | None = None  # what the open did with a network restore's staging area

    @classmethod
    def open(cls, where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
             index_config: VLSNIndexConfig | None = None, hooks: EnvironmentHooks | None = None,
             create: bool = True, phase_listener=None, node_id: int = 1, group: RepGroup | None = None,
             node_name: str | None = None, rep_config: ReplicationConfig | None = None) -> "ReplicatedEnvironment":
        """Open (and recover) a replicated environment and its VLSN index.

        With ``group`` and ``node_name`` it is that node of the group, in state UNKNOWN; without, a
        group of one and its master. ``rep_config``: the node's replication settings (``txn_rollback_limit``).
        """
        if group is not None or node_name is not None:
            if not isinstance(group, RepGroup):
                raise GroupConfigError(f"node {node_name!r}: a node opens with its RepGroup, not {group!r}")
            group.node(node_name)  # a member, else GroupConfigError
        if config is not None and config.read_only:  # recovery finishes the VLSN index by writing
            place = where.where() if isinstance(where, Disk) else os.fspath(where)
            raise UserError(f"{place}: a replicated environment cannot be opened read-only (its recovery "
                            "finishes the VLSN index by writing)")
        config = dataclasses.replace(config or EnvironmentConfig(), replicated=True)
        restored = _finish_network_restore(where)
        opened = _Opening(config, index_config, hooks, phase_listener)
        env, index, recovered = opened.open(where, create)
        rep_env = cls(env, index, node_id, group, node_name, rep_config)
        rep_env.recovered_rollback = recovered
        rep_env.finished_restore = restored
        rep_env._opening = opened
        return rep_env

    def hard_recover(self, why: str) -> RecoveryInfo:
        """JE's hard recovery, in place: the log store environment and the VLSN index are closed without a
        checkpoint and opened again on the same disk, so recovery rebuilds the tree from the log
        (:mod:`.syncup.rollback`). This node keeps its state, its master and its group; the replay
        transactions and the database handles of the environment closed are gone (the recovered open
        replay transactions are opened again by :meth:`reopen_replay_txns`)."""
        if self._opening is None:
            raise SyncupError(f"{self.where()}: hard recovery ({why}) opens the environment again as "
                              "ReplicatedEnvironment.open did, but this one was not opened by it")
        old, index = self.env, self.vlsn_index
        old.invalidate(f"hard recovery: {why}")
        old.close()  # invalid: no checkpoint (its tree still holds what was rolled back); the log is closed
        index.close()
        self.replay_txns.clear()
        self._txn_durability.clear()
        self.env, self.vlsn_index, self.recovered_rollback = self._opening.open(old.disk, create=False)
        self.env.log.vlsn_allocator = self._allocate_vlsn
        self._hear_erasures(self.env)
        self.file_checksums.clear_all()  # the log's tail changed under them
        self.env.trace.emit("hard recovery (%s): %s", why, self.env.recovery_info.summary())
        return self.env.recovery_info

    # -- the node's state ------------------------------------------------------------------------
    def become_master(self, term: int | None = None) -> None:
        """This node is the master: it writes, and allocates VLSNs after the last one it holds.

        ``term``: the election term it was elected for (:mod:`.elections`). When it is newer than the
        last TermStart in the log, a TermStart of that term is logged first (replicated, with the next
        VLSN), so that the entries this master writes are known as its term's: elections compare logs
        by it. Without a term (a group set up by hand, :class:`~minidb.replication.group.driver.InMemoryGroup`)
        nothing is logged."""
        with self.env.latch:
            self.vlsn_index.allocator.reset(max(self.range.last, self.vlsn_index.allocator.last))
            self.state, self.master_name = NodeState.MASTER, self.node_name
            if not self.env.closed:
                self.reopen_replay_txns()  # the transactions its old master never ended: aborted next
            self._end_replay_txns()
            if term is not None and not self.env.closed and term > self.last_term:
                self.env.check_usable()
                self.env.log_entry(TERM_START, {"term": term, "master_node_id": self.node_id,
                                                "time_ms": self.env.now_ms()}, replicated=True)

    @property
    def last_term(self) -> int:
        """The term of the last TermStart in the VLSN range (0 for none): how elections rank this log.

        Read from the log each time, newest entry first (a TermStart is logged at the start of each
        master's term, so the walk is short), so a rollback or a crash can never leave it stale."""
        with self.env.latch:
            current = self.range
            if current.is_empty:
                return 0
            scanner = self.vlsn_index.backward_scanner()
            for vlsn in range(current.last, current.first - 1, -1):
                entry = scanner.find(vlsn)
                if entry.type_name == "TermStart":
                    return entry["term"]
            return 0

    def become_replica(self, master_name: str) -> None:
        """This node is a replica of ``master_name`` (a member of the group, not this node)."""
        if self.group is None:
            raise GroupConfigError(f"{self.where()} is not in a group: it cannot be a replica")
        self.group.node(master_name)
        if master_name == self.node_name:
            raise GroupConfigError(f"node {self.node_name} cannot be a replica of itself")
        with self.env.latch:
            self.state, self.master_name = NodeState.REPLICA, master_name

    def become_unknown(self) -> None:
        """The master is lost: no writes until a new one is known."""
        with self.env.latch:
            self.state, self.master_name = NodeState.UNKNOWN, None

    def check_master(self, what: str) -> None:
        """Raise unless this node is the master: ReplicaWriteError names the master."""
        if self.state is NodeState.MASTER:
            return
        group = self.group.name if self.group is not None else "?"
        if self.state is NodeState.REPLICA and self.master_name is not None:
            master = self.group.node(self.master_name) if self.group is not None else None
            where = f" ({master.address})" if master is not None else ""
            raise ReplicaWriteError(f"cannot {what}: node {self.node_name} is a replica of group {group!r}; "
                                    f"write on the master {self.master_name}{where}")
        raise UnknownMasterError(f"cannot {what}: node {self.node_name} of group {group!r} knows no master "
                                 f"(state {self.state.value})")

    def _allocate_vlsn(self) -> int:
        """The log's VLSN allocator (under the log write latch): only the master hands out VLSNs."""
        self.check_master("allocate a VLSN")
        return self.vlsn_index.allocator.bump()

    def data_eraser(self, config=None, clock=None, **hooks) -> DataEraser:
        """The log store's data eraser; before each file it changes, the VLSN index is truncated past it,
        and the file's cached checksum dropped (:meth:`clear_cached_file_checksum`, through the
        environment's ``before_file_erased`` hooks)."""
        return DataEraser(self.env, config, clock, truncate_vlsn_index=self.vlsn_index.release_file_for_erasure,
                          **hooks)

    def _hear_erasures(self, env: Environment) -> None:
        """Drop a file's cached checksum before the eraser changes its bytes (a new list of hooks: the
        caller's are not changed)."""
        env.hooks.before_file_erased = [*env.hooks.before_file_erased, self.clear_cached_file_checksum]

    def clear_cached_file_checksum(self, number: int) -> bool:
        """Forget log file ``number``'s checksum cached for network restores (JE's
        ``RepImpl.clearedCachedFileChecksum``): its bytes are about to change. Whether one was cached."""
        return self.file_checksums.clear(number)

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

    def database(self, name: str, create: bool = True) -> ReplicatedDatabase:
        """A replicated database (its records and their transactions' ends get VLSNs); writes on the master only.

        Creating one is a write: on a replica only an existing database can be opened."""
        if create and self.state is not NodeState.MASTER and self.env.db_tree.get(name) is None:
            self.check_master(f"create database {name!r}")
        return ReplicatedDatabase(self, self.env.database(name, create).impl)

    def internal_database(self, name: str, create: bool = True) -> Database:
        """An internal database: never replicated."""
        return self.env.internal_database(name, create)

    def begin(self, durability=None, *, lock_timeout: float | None = None) -> Transaction:
        """A transaction; ``durability`` a log store sync policy, or a replication :class:`~.durability.Durability`;
        ``lock_timeout`` as for the log store's ``begin``.

        With a replication Durability the master checks first that enough replicas are connected for its
        ack policy (:class:`~minidb.replication.errors.InsufficientReplicasError`, nothing logged);
        :meth:`commit` then waits for the acks.
        """
        if not isinstance(durability, RepDurability):
            return self.env.begin(durability, lock_timeout=lock_timeout)
        self.check_master("begin a replicated transaction")
        ack.check_replicas(self, durability, "begin")
        txn = self.env.begin(durability.master_sync, lock_timeout=lock_timeout)
        self._txn_durability[txn.id] = durability
        return txn

    def start_commit(self, txn: Transaction, durability: RepDurability | None = None, *, clock=None,
                     timeout_ms: int = ack.DEFAULT_ACK_TIMEOUT_MS) -> ack.CommitToken:
        """Log ``txn``'s Commit (its begin's Durability unless given) and return the wait for its acks (:mod:`.ack`)."""
        durability = durability or self._txn_durability.get(txn.id) or ack.DEFAULT_DURABILITY
        token = ack.start_commit(self, txn, durability, clock=clock, timeout_ms=timeout_ms)
        self._txn_durability.pop(txn.id, None)
        return token

    def commit(self, txn: Transaction, durability: RepDurability | None = None, *, clock=None,
               timeout_ms: int = ack.DEFAULT_ACK_TIMEOUT_MS, pump=None) -> LSN:
        """Commit ``txn`` with JE's durability: log it, then wait for the acks its policy asks for.

        ``pump`` moves the feeders and replicas (the in-memory network's driver); without it the wait is
        a real one on an event (feeder threads, TCP). :class:`~minidb.replication.errors.InsufficientAcksError`
        if too few acks arrive before ``timeout_ms`` on ``clock`` (the commit stays durable here).
        """
        return self.start_commit(txn, durability, clock=clock, timeout_ms=timeout_ms).wait(pump)

    def checkpoint(self, minimize_recovery_time: bool = False) -> CheckpointResult:
        return self.env.checkpoint(minimize_recovery_time)

    def sync(self) -> None:
        self.env.sync()

    # -- replication's own entries -------------------------------------------------------------
    def log_matchpoint(self) -> LSN:
        """Log a Matchpoint (a sync point of the replication stream); returns its LSN."""
        env = self.env
        self.check_master("log a Matchpoint")
        with env.latch:
            env.check_usable()
            lsn = env.log_entry(MATCHPOINT, {"master_node_id": self.node_id, "time_ms": env.now_ms()},
                                replicated=True)
            env.after_operation()
            return lsn

    def roll_back(self, matchpoint_vlsn: int, matchpoint_lsn: LSN, limit: int | None = None) -> RollbackResult | None:
        """Roll back everything logged after the matchpoint (syncup's rollback, :mod:`.rollback`)."""
        return roll_back(self, matchpoint_vlsn, matchpoint_lsn, limit)

    def reopen_replay_txns(self) -> list[int]:
        """Open again the replicated transactions whose records survive but whose end does not (:mod:`.rollback`)."""
        with self.env.latch:
            return reopen_replay_txns(self)

    # -- a replica writes the master's entries ------------------------------------------------------
    def replay(self, vlsn: int, type_name: str, values: dict, db_name: str | None = None,
               sync_policy=None) -> LSN:
        """Write the master's entry ``type_name`` (its ``values``) with the master's ``vlsn`` and txn id.

        The replica's replay (JE's ``Replay.replayEntry``; the feeder's stream is the next part): a MapLN
        creates database ``db_name`` (the master's creation, in the stream before the database's first
        record); LNs go into the tree of database ``db_name``, transactional ones under a transaction
        with the master's ``txn_id``; Commit and Abort end
        it; a Matchpoint is logged. Only a replica replays, and only the next VLSN of the stream:
        anything else is a :class:`ReplayError` and nothing is written. Returns the entry's LSN.
        ``sync_policy``: how a Commit is logged (the master's replica sync policy; default: the
        environment's durability).
        """
        env = self.env
        with env.latch:
            env.check_usable()
            if self.state is not NodeState.REPLICA:
                raise ReplayError(f"node {self.node_name} is {self.state.value}: only a replica replays the "
                                  f"master's entries (VLSN {vlsn})")
            expected = self.next_stream_vlsn
            if vlsn != expected:
                raise ReplayError(f"node {self.node_name} expects VLSN {expected} next; the master's {type_name} "
                                  f"has VLSN {vlsn}")
            lsn = self._replay(vlsn, type_name, values, db_name, sync_policy)
            self.vlsn_index.allocator.reset(vlsn)
            env.after_operation()
            return lsn

    @property
    def next_stream_vlsn(self) -> int:
        """The VLSN this node's stream continues with (what a replica asks its feeder for)."""
        current = self.range
        return (current.last if not current.is_empty else self.vlsn_index.allocator.last) + 1

    def _replay(self, vlsn: int, type_name: str, values: dict, db_name: str | None, sync_policy=None) -> LSN:
        env = self.env
        txn_id = values.get("txn_id")
        if type_name == "Matchpoint":
            return env.log_entry(MATCHPOINT, values, vlsn=vlsn)
        if type_name == "TermStart":
            return env.log_entry(TERM_START, values, vlsn=vlsn)
        if type_name in ("Commit", "Abort"):
            txn = self.replay_txns.get(txn_id)
            if txn is None:
                raise ReplayError(f"node {self.node_name}: {type_name} of txn {txn_id} (VLSN {vlsn}) ends a "
                                  "transaction this replica never saw")
            if sync_policy is not None:
                txn.durability = sync_policy
            end = txn.commit if type_name == "Commit" else txn.abort
            lsn = end(vlsn=vlsn, time_ms=values.get("time_ms"))  # the master's entry, as the master logged it
            del self.replay_txns[txn_id]
            return lsn
        if type_name != "MapLN" and type_name not in USER_LN_TYPES:
            raise ReplayError(f"node {self.node_name}: {type_name} (VLSN {vlsn}) is not an entry of the "
                              "replication stream")
        if not isinstance(db_name, str):
            raise ReplayError(f"node {self.node_name}: {type_name} (VLSN {vlsn}) needs the database's name")
        impl = env.db_tree.get(db_name)
        if type_name == "MapLN":  # the creation of a replicated database, before its first record
            db_id = values["db_id"]  # the master's id: the database's LNs carry it, the same on every node
            taken = env.db_tree.get_by_id(db_id)
            if impl is not None or taken is not None or values["name"] != db_name or values["internal"]:
                why = ("holds already" if impl is not None else f"holds id {db_id} as {taken.name!r}" if taken
                       else "cannot create")
                raise ReplayError(f"node {self.node_name}: MapLN (VLSN {vlsn}) creates database "
                                  f"{values['name']!r} (id {db_id}, stream name {db_name!r}), which this replica {why}")
            return env.db_tree.create(db_name, db_id=db_id, vlsn=vlsn).created_lsn
        deleted = type_name.startswith("DEL_")
        key = values["key"]
        if impl is None:
            raise ReplayError(f"node {self.node_name}: {type_name} (VLSN {vlsn}) writes {key!r} into database "
                              f"{db_name!r}, which the stream never created on this replica")
        if deleted and not _holds(impl, key):
            raise ReplayError(f"node {self.node_name}: {type_name} (VLSN {vlsn}) deletes {key!r} from {db_name!r}, "
                              "which this replica does not hold")
        txn = None
        if txn_id is not None:
            txn = self.replay_txns.get(txn_id)
            if txn is None:
                txn = self.replay_txns[txn_id] = env.txn_manager.begin(txn_id=txn_id)
        lsn = env.records.write(impl, key, None if deleted else values["data"], txn, vlsn=vlsn)
        assert lsn is not None
        return lsn

    def _end_replay_txns(self) -> None:
        """The new master aborts the replayed transactions the old master never ended (an Abort in its stream)."""
        for txn in list(self.replay_txns.values()):
            if not self.env.closed:
                txn.abort()
        self.replay_txns.clear()

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


class _Opening:
    """How a replicated environment is opened (the hooks that plug the VLSN index and the rollbacks into the
    log store), kept so that hard recovery can open it again the same way."""

    def __init__(self, config: EnvironmentConfig, index_config: VLSNIndexConfig | None,
                 hooks: EnvironmentHooks | None, phase_listener):
        self.config, self.index_config, self.hooks, self.phase_listener = config, index_config, hooks, phase_listener

    def open(self, where, create: bool) -> tuple[Environment, VLSNIndex, RollbackResult | None]:
        index = VLSN_INDEX.call(self.index_config)
        tracker = index.begin_recovery()
        finishing = _PendingRollbackRedo(index, tracker, self.phase_listener)
        hooks = dataclasses.replace(self.hooks or EnvironmentHooks())
        hooks.flush_vlsn_index = [*hooks.flush_vlsn_index, index.on_checkpoint, finishing.step6]
        hooks.recovery_listeners = [*hooks.recovery_listeners, index.recovery_listener]
        hooks.recovery_read_done = [*hooks.recovery_read_done, index.recovery_read_done]
        hooks.checkpoint_not_usable = [*hooks.checkpoint_not_usable, checkpoint_in_rollback_period]
        env = Environment.open(where, self.config, hooks, create, finishing.phase_done)
        if index.env is not env or index.merge_result is None:
            raise VLSNIndexError(f"{env.where()}: recovery did not finish the VLSN index")
        env.log.add_entry_listener(index.entry_listener)
        env.cleaner.protector.add_deletion_listener(index.before_file_deletion)  # before the cleaner deletes
        return env, index, finishing.result


class _PendingRollbackRedo:
    """Finishes, while the environment opens, a rollback a crash cut short (:mod:`.rollback`): the marks and
    the undo when recovery has rebuilt the tree (before its checkpoint), the index and RollbackEnd in that
    checkpoint's step 6 (after the index is merged). The finished rollbacks after the CkptStart recovery
    starts from are undone again on the recovered tree at the same time (:func:`~.rollback.undo_again`)."""

    def __init__(self, index: VLSNIndex, tracker, phase_listener):
        self.index, self.tracker, self.phase_listener = index, tracker, phase_listener
        self.pending: PendingRollback | None = None
        self.result: RollbackResult | None = None

    def phase_done(self, name: str, env: Environment) -> None:
        if name == "utilization":  # newest first: the pending rollback, then the finished ones undone again
            for rollback in reversed(self.tracker.rollbacks):
                if rollback is self.tracker.pending_rollback:
                    self.pending = rollback
                    redo_marks_and_undo(env, rollback)
                else:
                    undo_again(env, rollback)
        if self.phase_listener is not None:
            self.phase_listener(name, env)

    def step6(self, run) -> str | None:
        if self.pending is None:
            return None
        pending, self.pending = self.pending, None
        self.result = finish_pending(run.env, self.index, pending)
        return self.result.describe()


def _finish_network_restore(where: Disk | str | os.PathLike) -> str | None:
    """Before the log is read: finish a network restore's install, or discard its incomplete staging area
    (:mod:`.restore.staging`), so that a half-restored log never opens."""
    if isinstance(where, Disk):
        return finish_restore(where)
    if os.path.isdir(where):
        return finish_restore(OSDisk(where))
    return None


def open_replicated(where: Disk | str | os.PathLike, config: EnvironmentConfig | None = None,
                    index_config: VLSNIndexConfig | None = None) -> ReplicatedEnvironment:
    return ReplicatedEnvironment.open(where, config, index_config)


__all__ = ["ReplicatedEnvironment", "open_replicated"]
