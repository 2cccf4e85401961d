"""Replication: VLSNs and the VLSN index (Berkeley DB JE's ``VLSNIndex``, ``VLSNBucket``), and the group's foundation.

Replication sits above the log store: it imports :mod:`minidb.logstore`,
never the reverse; the log store calls it through its hooks (the
checkpoint's step 6, recovery listeners) and the log's ``vlsn_allocator``
and listeners.

Built: VLSN allocation, the index (buckets, range, tracker), lookups and
scanners, waiting for new VLSNs, the flush at checkpoints, recovery's merge,
truncation from the head and from the tail (the latter only inside a syncup
rollback), the ``Matchpoint`` entry; the group's foundation: nodes and their
states (only the master writes and allocates VLSNs; a replica replays the
master's entries with the master's VLSNs and txn ids), the wire format, two
transports (in-memory and TCP) and the handshake, feeders and replicas
streaming the log by VLSN, durability by acks (JE's Durability: sync
policies, ack policies, commits waiting for acks; feeders protect the log
files they still have to send); elections (Paxos rounds, durable acceptor
state, JE's rule for the winner); syncup (the matchpoint search) and its
rollback (RollbackStart/End, INVISIBLE entries, finished by recovery after a
crash); network restore (a member's log files over the wire, staged, verified
and installed at once, the files sent protected). Where the
modules mention them, they describe the callers the index is made for (a
feeder reads forward by VLSN and waits for new ones; syncup searches backward
and truncates the tail); tests, the tour and notebook 12 play those callers.

Public surface::

    ReplicatedEnvironment, open_replicated,  an environment with VLSNs and its index; a node of a
    ReplicatedDatabase                       group: become_master/replica, check_master, replay (env.py)
    RepGroup, RepNode, NodeState             a group, its nodes, MASTER/REPLICA/UNKNOWN (group/membership.py)
    wire                                     the framed message format: encode, decode, Message (stream/wire.py)
    InMemoryNetwork, TcpNetwork,             two transports with one interface; the handshake
    HandshakeAcceptor, HandshakeInitiator    (stream/network.py)
    Feeder, Replica                          the stream from the master to a replica (stream/feeder.py, stream/replica.py)
    ElectionNode, ElectionConfig, Acceptor,  elections: proposer, acceptor, learner; proposal numbers;
    Proposal, choose_master                  JE's rule for the winner (group/elections.py)
    Durability, SyncPolicy, ReplicaAckPolicy JE's durability of a replicated commit (stream/durability.py)
    FeederTxns, CommitToken                  commits waiting for acks; env.begin/commit/start_commit (stream/ack.py)
    InMemoryGroup                            a master and replicas on the in-memory network, pumped (group/driver.py)
    FailoverGroup                            every node in memory: elections, failover, rejoin (group/failover.py)
    ReplicaFeederSyncup, search_matchpoint,  syncup: the matchpoint by LSN-neutral checksum (syncup/syncup.py)
    MatchpointSearchResults, item_checksum
    RollbackResult, roll_back                the rollback after the matchpoint, hard recovery (syncup/rollback.py)
    RollbackPeriod                           the checkpoints recovery may not use (syncup/periods.py)
    ReplicationConfig                        txn_rollback_limit (config.py)
    NetworkRestore, LogFileFeeder,           network restore: the node's side, the member's side and its
    FileChecksums, finish_restore            checksum cache, the staged install finished at open (restore/)
    VLSNIndex, FlushResult,                  the index: put, lookups, scanners, waits,
    HeadTruncationResult                     flushing, truncation, recovery (vlsn/index.py)
    VLSNIndexConfig                          stride, max mappings, max distance... (vlsn/config.py)
    VLSNBucket, GhostBucket                  sparse mappings of one log file (vlsn/bucket.py)
    VLSNRange                                first, last, last_sync, last_txn_end (vlsn/range.py)
    VLSNTracker                              the buckets in memory and the range (vlsn/tracker.py)
    VLSNRecoveryTracker, merge, MergeResult  recovery's tracking pass and merge (vlsn/recovery.py)
    ForwardVLSNScanner, BackwardVLSNScanner  finding entries by VLSN in the log (vlsn/scanner.py)
    LogItem, LogItemCache, VLSNAwaitLatch    waiting for new VLSNs (vlsn/wait.py)
    VLSNAllocator, NULL_VLSN, encode_key     VLSNs, their allocation, their keys (vlsn/allocator.py)
    REPLICATION_TYPES, MATCHPOINT,           replication's entry types (logdef.py)
    ROLLBACK_START, ROLLBACK_END
    VLSNIndexError, VLSNRangeError,          errors (errors.py)
    ReplicaWriteError, HandshakeError,
    NetworkRestoreRequiredError, RollbackLimitError, SyncupError,
    NetworkRestoreError, RestoreChecksumError, ...

The rooms, each a folder with its reading order in its ``__init__``: ``vlsn/`` (the VLSN index),
``stream/`` (feeders, replicas, the wire, acks), ``group/`` (membership, elections, failover, and
``node``, one node as a process over TCP for ``minidb group``), ``syncup/`` (the matchpoint and the
rollback), ``restore/`` (network restore). Beside them: ``env`` (the replicated environment, which
builds the parts), ``logdef`` (replication's entry types), ``errors``, ``cases`` (the worked examples). Its crash tests (a
replicated workload, a rollback, a group of three) are in :mod:`minidb.crashtest`, above it.
"""

from minidb.replication.config import ReplicationConfig
from minidb.replication.env import ReplicatedDatabase, ReplicatedEnvironment, open_replicated
from minidb.replication.errors import (
                                       AcceptorStateCorruptionError,
                                       ConnectionClosedError,
                                       ElectionError,
                                       FeederError,
                                       GroupConfigError,
                                       HandshakeError,
                                       IndexClosedError,
                                       InsufficientAcksError,
                                       InsufficientReplicasError,
                                       NetworkRestoreError,
                                       NetworkRestoreRequiredError,
                                       ReplayError,
                                       ReplicationNetworkError,
                                       ReplicaWriteError,
                                       RestoreChecksumError,
                                       RollbackLimitError,
                                       SyncupError,
                                       TailTruncationError,
                                       UnknownMasterError,
                                       VLSNIndexCorruptionError,
                                       VLSNIndexError,
                                       VLSNRangeError,
                                       WaitTimeoutError,
                                       WireFormatError,
                                       WireVersionError,
)
from minidb.replication.group.driver import InMemoryGroup
from minidb.replication.group.elections import Acceptor, ElectionConfig, ElectionNode, Proposal, choose_master
from minidb.replication.group.failover import FailoverGroup
from minidb.replication.group.membership import NodeState, RepGroup, RepNode
from minidb.replication.logdef import MATCHPOINT, REPLICATION_TYPES, ROLLBACK_END, ROLLBACK_START
from minidb.replication.restore import FileChecksums, LogFileFeeder, NetworkRestore, finish_restore
from minidb.replication.stream import wire
from minidb.replication.stream.ack import CommitToken, FeederTxns
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork, TcpNetwork
from minidb.replication.stream.replica import Replica
from minidb.replication.syncup.periods import RollbackPeriod
from minidb.replication.syncup.rollback import RollbackResult, roll_back
from minidb.replication.syncup.syncup import (
                                       MatchpointSearchResults,
                                       ReplicaFeederSyncup,
                                       item_checksum,
                                       search_matchpoint,
)
from minidb.replication.vlsn.allocator import FIRST_VLSN, NULL_VLSN, RANGE_KEY, VLSNAllocator, decode_key, encode_key
from minidb.replication.vlsn.bucket import GhostBucket, VLSNBucket
from minidb.replication.vlsn.config import VLSN_INDEX_DB, VLSNIndexConfig
from minidb.replication.vlsn.index import FlushResult, HeadTruncationResult, VLSNIndex
from minidb.replication.vlsn.range import EMPTY_RANGE, SYNC_TYPES, TXN_END_TYPES, VLSNRange
from minidb.replication.vlsn.recovery import MergeResult, VLSNRecoveryTracker, merge
from minidb.replication.vlsn.scanner import BackwardVLSNScanner, ForwardVLSNScanner
from minidb.replication.vlsn.tracker import VLSNTracker
from minidb.replication.vlsn.wait import LogItem, LogItemCache, VLSNAwaitLatch

__all__ = [
    "ReplicatedEnvironment", "open_replicated", "VLSNIndex", "FlushResult", "HeadTruncationResult",
    "VLSNIndexConfig", "VLSN_INDEX_DB", "VLSNBucket", "GhostBucket", "VLSNRange", "EMPTY_RANGE", "SYNC_TYPES",
    "TXN_END_TYPES", "VLSNTracker", "VLSNRecoveryTracker", "merge", "MergeResult", "ForwardVLSNScanner",
    "BackwardVLSNScanner", "LogItem", "LogItemCache", "VLSNAwaitLatch", "VLSNAllocator", "NULL_VLSN",
    "FIRST_VLSN", "RANGE_KEY", "encode_key", "decode_key", "REPLICATION_TYPES", "MATCHPOINT",
    "VLSNIndexError", "VLSNIndexCorruptionError", "VLSNRangeError", "WaitTimeoutError", "IndexClosedError",
    "ReplicatedDatabase", "RepGroup", "RepNode", "NodeState", "wire", "InMemoryNetwork", "TcpNetwork",
    "HandshakeAcceptor", "HandshakeInitiator", "ReplicationNetworkError", "WireFormatError", "WireVersionError",
    "HandshakeError", "ConnectionClosedError", "GroupConfigError", "ReplicaWriteError", "UnknownMasterError",
    "ReplayError", "TailTruncationError", "FeederError", "Feeder", "Replica",
    "ElectionNode", "ElectionConfig", "Acceptor", "Proposal", "choose_master", "ElectionError",
    "AcceptorStateCorruptionError", "Durability", "SyncPolicy",
    "ReplicaAckPolicy", "FeederTxns", "CommitToken", "InMemoryGroup", "InsufficientAcksError",
    "InsufficientReplicasError",
    "ReplicaFeederSyncup",
    "search_matchpoint", "MatchpointSearchResults", "item_checksum", "RollbackResult", "roll_back", "FailoverGroup",
    "ROLLBACK_START", "ROLLBACK_END", "NetworkRestoreRequiredError", "RollbackLimitError", "SyncupError",
    "NetworkRestore", "LogFileFeeder", "FileChecksums", "finish_restore", "NetworkRestoreError", "RestoreChecksumError",
    "ReplicationConfig", "RollbackPeriod",
]
