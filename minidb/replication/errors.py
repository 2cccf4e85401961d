"""The errors of replication, each a :class:`~minidb.errors.MinidbError`.

Messages name what and where (VLSN, LSN, bucket, database) so the CLI can
print them as one line. An operation that raises one has changed nothing.
"""

from __future__ import annotations

from minidb.errors import CorruptionError, MinidbError, UserError


class VLSNIndexError(MinidbError):
    """The VLSN index cannot do what was asked (not attached to a log, no recovery under way)."""


class VLSNIndexCorruptionError(VLSNIndexError, CorruptionError):
    """The VLSN index and the log disagree (a gap, a VLSN the log does not hold, a bad record)."""


class VLSNRangeError(UserError):
    """A VLSN outside the range the index holds was asked for, or an impossible truncation."""


class WaitTimeoutError(MinidbError):
    """``wait_for_vlsn`` gave up: the VLSN was not logged within the timeout (JE's WaitTimeOutException)."""

    def __init__(self, vlsn: int, timeout: float, last: int):
        self.vlsn = vlsn
        self.timeout = timeout
        self.last = last
        super().__init__(f"VLSN {vlsn} was not logged within {timeout:g} s (the range ends at VLSN {last})")


class IndexClosedError(MinidbError):
    """The VLSN index was closed (its environment closed or crashed) while a feeder waited on it."""


class WaitCancelledError(MinidbError):
    """A wait for a VLSN was cancelled by its own waiter's ``WaitCancel`` (a feeder that stops)."""


class ReplicationNetworkError(MinidbError):
    """Talking to another node failed: a bad frame, a refused handshake, a closed connection."""


class WireFormatError(ReplicationNetworkError):
    """A frame is not a valid minidb replication frame (bad magic, truncated, bad checksum, unknown type,
    oversize); the message names the peer and the byte offset."""


class WireVersionError(WireFormatError):
    """A frame of another wire version."""


class HandshakeError(ReplicationNetworkError):
    """A handshake was refused (another group, an unknown node, a bad frame, another version); the
    connection is closed and nothing was written."""


class ConnectionClosedError(ReplicationNetworkError):
    """The connection was closed (by this end, the peer, or a network failure)."""


class GroupConfigError(UserError):
    """A replication group's description is wrong (a duplicate name or address, a bad priority, an unknown
    node)."""


class ReplicaWriteError(UserError):
    """A write on a node that is not the master (JE's ReplicaWriteException); the message names the master."""


class UnknownMasterError(ReplicaWriteError):
    """A write on a node that knows no master (JE's UnknownMasterException)."""


class ReplayError(MinidbError):
    """A replica cannot replay an entry of the master's stream (out of VLSN order, an unknown transaction)."""


class FeederError(MinidbError):
    """A feeder cannot serve a replica (it is not the master, the replica asks for VLSNs it no longer
    holds or has not logged yet)."""


class TailTruncationError(VLSNRangeError):
    """``truncate_from_tail`` was called outside a syncup rollback: a crash would undo it."""


class ElectionError(MinidbError):
    """An election cannot run as asked (a bad election setting, a node that is not a member)."""


class AcceptorStateCorruptionError(ElectionError, CorruptionError):
    """A node's durable acceptor state (its election promises) is damaged; the message names the file and
    offset. Nothing is forgotten silently: a lost promise could let two masters be elected for one term."""


class InsufficientReplicasError(MinidbError):
    """Too few replicas are connected for a commit's ack policy (JE's InsufficientReplicasException);
    raised before the Commit is logged: nothing was written by the commit."""


class InsufficientAcksError(MinidbError):
    """A commit's replicas did not all acknowledge it in time (JE's InsufficientAcksException).

    The commit is durable on the master (logged with its sync policy); the message says how many acks
    of how many arrived, from which nodes, and which nodes did not answer.
    """

    def __init__(self, message: str, txn_id: int, vlsn: int, acked_by: tuple[str, ...], missing: tuple[str, ...],
                 required: int):
        super().__init__(message)
        self.txn_id = txn_id
        self.vlsn = vlsn
        self.acked_by = acked_by
        self.missing = missing
        self.required = required


class SyncupError(MinidbError):
    """A syncup failed (a bad answer from the feeder, a node that is not quiescent); nothing was rolled back."""


class NetworkRestoreRequiredError(SyncupError):
    """JE's ``InsufficientLogException``: no common sync point with the master, or a rollback past its limit;
    the node must be restored from another node's files (a network restore). Nothing was changed."""


class RollbackLimitError(NetworkRestoreRequiredError):
    """The rollback would undo more committed transactions than ``txn_rollback_limit`` (JE's
    ``RollbackProhibitedException``); nothing was changed."""

class NetworkRestoreError(MinidbError):
    """A network restore did not finish (the member refused, the connection dropped, a file came wrong):
    nothing was installed; the node keeps its own files and may try again."""


class RestoreChecksumError(NetworkRestoreError, CorruptionError):
    """A file a network restore received is not the file the member listed (its length or CRC-32 differ, a
    chunk arrived out of place), or the staged log does not verify; names the file and the offset. Nothing
    was installed, and the staged files are discarded."""

    def __init__(self, file_name: str, offset: int, what: str):
        self.file_name = file_name
        self.offset = offset
        super().__init__(f"{file_name} at offset 0x{offset:x}: {what}")


class StagedRestoreCorruptionError(CorruptionError):
    """A network restore's install found a listed file missing or of the wrong length: the directory was
    changed behind it. Names the file; nothing more is removed."""


__all__ = ["VLSNIndexError", "VLSNIndexCorruptionError", "VLSNRangeError", "WaitTimeoutError", "IndexClosedError",
           "ReplicationNetworkError", "WireFormatError", "WireVersionError", "HandshakeError", "ConnectionClosedError",
           "GroupConfigError", "ReplicaWriteError", "UnknownMasterError", "ReplayError", "TailTruncationError",
           "FeederError", "ElectionError", "AcceptorStateCorruptionError", "InsufficientReplicasError",
           "InsufficientAcksError", "SyncupError", "NetworkRestoreRequiredError", "RollbackLimitError",
           "NetworkRestoreError", "RestoreChecksumError", "StagedRestoreCorruptionError"]
