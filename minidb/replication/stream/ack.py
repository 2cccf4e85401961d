"""The master's commits waiting for acknowledgements (JE's ``FeederTxns`` and its ``TxnInfo``).

A replicated commit (:mod:`.durability` tells the whole story) is registered
here by its transaction id *before* its Commit is logged, so that a feeder
sending the Commit knows it must ask for an ack (and with which replica sync
policy), and an ack that comes back at once finds its commit. Each feeder
passes the ``Ack`` messages it reads to :meth:`FeederTxns.note_ack`; when a
commit has the acks its policy asks for, its waiter is released.

A commit in flight is a :class:`CommitToken`, which a driver can hold and
look at while it waits (``waiting_for``: the replicas that have not acked)::

    token = master.start_commit(txn, Durability(SYNC, NO_SYNC, SIMPLE_MAJORITY), clock=clock)
    token.waiting_for        # ['n2', 'n3']: the Commit is logged on n1, nobody acked yet
    net.deliver(); ...       # the feeders and replicas move (the driver's script)
    token.wait(pump)         # returns the Commit's LSN once n2 or n3 acked; InsufficientAcksError at the deadline

Waiting: with a ``pump`` (the in-memory network) the token calls it until
the acks arrive; when a call moves nothing, the clock waits a step, so a
``ManualClock`` reaches the deadline deterministically and nothing sleeps.
Without a pump (TCP: feeder threads read the acks) it waits on an event with
the time left on the clock. Invariants: a commit is released only with the
acks its policy asks for, from distinct replicas, each for its own Commit
(the transaction id and the Commit's VLSN both match); an ack for a
transaction nobody waits for is ignored and counted (a late ack after a
timeout is normal); the registry forgets a commit once its wait ends.

Counting one ack is a pure decision, :func:`count_ack`: the replicas whose
acks count afterwards, and whether the commit may return. Worked example
(a group of five, ALL: 4 acks; the Commit is VLSN 9)::

    count_ack(4, 9, ("n2", "n3"), "n4", 9)        # (("n2", "n3", "n4"), False)  one more to go
    count_ack(4, 9, ("n2", "n3", "n4"), "n3", 9)  # (("n2", "n3", "n4"), False)  n3 again: counted once
    count_ack(4, 9, ("n2", "n3", "n4"), "n5", 8)  # (("n2", "n3", "n4"), False)  another Commit's ack
    count_ack(4, 9, ("n2", "n3", "n4"), "n5", 9)  # (("n2", "n3", "n4", "n5"), True)  released

An ack may come back before the master has read its Commit's VLSN (``None``
here): it counts, since the transaction id already matched. ``FeederTxns``
calls it in one place, through ``COUNT_ACK``, an exercise hook
(:mod:`minidb.impl`; exercise 13a).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from minidb import impl
from minidb.errors import UserError
from minidb.log import LSN
from minidb.logstore.eraser import SystemClock
from minidb.replication.errors import InsufficientAcksError, InsufficientReplicasError
from minidb.replication.stream.durability import DEFAULT_DURABILITY, Durability, SyncPolicy

if TYPE_CHECKING:
    from minidb.logstore import Transaction
    from minidb.replication.env import ReplicatedEnvironment

#: How long a commit waits for its acks unless told (JE's ``replicaAckTimeout`` default: 5 s).
DEFAULT_ACK_TIMEOUT_MS = 5000
#: How far a manual clock moves when a pump round moved nothing.
PUMP_STEP_MS = 100


@dataclass
class TxnInfo:
    """One commit waiting for acks: its transaction, its Commit's VLSN once logged, who acked."""

    txn_id: int
    durability: Durability
    required: int
    vlsn: int | None = None
    acked_by: list[str] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    done: bool = False  # has the acks it needs: count_ack said so (or it needs none)


def count_ack(required: int, commit_vlsn: int | None, acked_by: tuple[str, ...], replica: str,
              vlsn: int) -> tuple[tuple[str, ...], bool]:
    """``replica``'s ack of VLSN ``vlsn`` for a commit needing ``required`` acks, whose Commit is at
    ``commit_vlsn`` (None: not read yet), acked so far by ``acked_by``: who has acked now, and whether
    the commit may return (see the module documentation)."""
    if commit_vlsn is not None and vlsn != commit_vlsn:
        return acked_by, len(acked_by) >= required  # another Commit's ack: not this one's
    if replica not in acked_by:
        acked_by = (*acked_by, replica)
    return acked_by, len(acked_by) >= required


def _count_from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., tuple[tuple[str, ...], bool]]:
    """A student's ``count_ack`` (exercise 13a has the engine's signature), its answer checked for form: the
    acks so far, at most this replica's added, each once, and a yes or no."""
    def count(required: int, commit_vlsn: int | None, acked_by: tuple[str, ...], replica: str,
              vlsn: int) -> tuple[tuple[str, ...], bool]:
        answer = student(required, commit_vlsn, tuple(acked_by), replica, vlsn)
        ok = isinstance(answer, tuple) and len(answer) == 2 and isinstance(answer[1], bool)
        after = tuple(answer[0]) if ok and isinstance(answer[0], (tuple, list)) else None
        if (after is None or after[:len(acked_by)] != tuple(acked_by) or len(set(after)) != len(after)
                or not set(after) - set(acked_by) <= {replica}):
            raise hook.wrong(f"returned {answer!r}, not (the acks so far, with at most {replica!r} added once, "
                             "released or not)")
        return after, answer[1]
    return count


COUNT_ACK = impl.register("13a_ack_policy", "count_ack", count_ack, _count_from_exercise)


class FeederTxns:
    """The master's registry of feeders and of commits awaiting acks (see the module documentation)."""

    def __init__(self, master: "ReplicatedEnvironment"):
        self.master = master
        self.feeders: dict[str, object] = {}  # replica name -> its Feeder
        self.pending: dict[int, TxnInfo] = {}
        self.ignored: list[str] = []  # why each ignored ack was ignored (the last 100)
        self._lock = threading.Lock()

    # -- the feeders ------------------------------------------------------------------------------
    def add_feeder(self, feeder) -> None:
        with self._lock:
            self.feeders[feeder.replica_name] = feeder

    def remove_feeder(self, feeder) -> None:
        with self._lock:
            if self.feeders.get(feeder.replica_name) is feeder:
                del self.feeders[feeder.replica_name]

    def active_replicas(self) -> list[str]:
        """The replicas whose feeder is streaming (the replica asked for its start, the channel is open)."""
        with self._lock:
            return sorted(name for name, f in self.feeders.items() if f.active)

    # -- commits ----------------------------------------------------------------------------------
    def register(self, txn_id: int, durability: Durability, required: int) -> TxnInfo:
        info = TxnInfo(txn_id, durability, required, done=required <= 0)
        with self._lock:
            self.pending[txn_id] = info
        return info

    def forget(self, info: TxnInfo) -> None:
        with self._lock:
            if self.pending.get(info.txn_id) is info:
                del self.pending[info.txn_id]

    def replica_sync(self, txn_id: int) -> SyncPolicy | None:
        """The replica sync policy of a commit that awaits acks (None: nobody waits for this one)."""
        with self._lock:
            info = self.pending.get(txn_id)
            return info.durability.replica_sync if info is not None else None

    def note_ack(self, replica: str, txn_id: int, vlsn: int) -> str | None:
        """Count ``replica``'s ack of txn ``txn_id``'s Commit at ``vlsn``; None, or why it was ignored."""
        with self._lock:
            info = self.pending.get(txn_id)
            if info is None:
                reason = f"ack from {replica} for txn {txn_id} (VLSN {vlsn}): no commit waits for it"
            else:
                before = tuple(info.acked_by)
                after, released = COUNT_ACK.call(info.required, info.vlsn, before, replica, vlsn)
                info.acked_by[:] = after
                info.done = info.done or released  # a commit released stays released
                if info.done:
                    info.released.set()
                if after != before or replica in before:
                    return None
                reason = (f"ack from {replica} for txn {txn_id} names VLSN {vlsn}, but its Commit has VLSN "
                          f"{info.vlsn}" if info.vlsn != vlsn else
                          f"ack from {replica} for txn {txn_id} (VLSN {vlsn}): not counted")
            self.ignored = [*self.ignored[-99:], reason]
            return reason


class CommitToken:
    """A replicated commit: logged on the master, maybe still waiting for acks (see the module documentation)."""

    def __init__(self, master: "ReplicatedEnvironment", info: TxnInfo, lsn: LSN, clock, timeout_ms: int):
        self.master = master
        self.info = info
        self.lsn = lsn
        self.clock = clock
        self.timeout_ms = timeout_ms
        self.started_ms = clock.now_ms()
        self.deadline_ms = self.started_ms + timeout_ms
        self.finished = False

    @property
    def acked_by(self) -> list[str]:
        return list(self.info.acked_by)

    @property
    def waiting_for(self) -> list[str]:
        """The connected replicas that have not acknowledged yet (while acks are still needed)."""
        if self.info.done:
            return []
        return [n for n in self.master.feeder_txns.active_replicas() if n not in self.info.acked_by]

    @property
    def done(self) -> bool:
        return self.info.done

    def wait(self, pump: Callable[[], int] | None = None, step_ms: int = PUMP_STEP_MS) -> LSN:
        """Wait for the acks; the Commit's LSN, or :class:`InsufficientAcksError` at the deadline."""
        try:
            while not self.info.done:
                moved = pump() if pump is not None else 0
                if self.info.done:
                    break
                left = self.deadline_ms - self.clock.now_ms()
                if left <= 0:
                    raise self._insufficient()
                if pump is None:
                    self.info.released.wait(left / 1000)  # a feeder thread sets it (TCP)
                elif not moved:
                    self.clock.wait_ms(min(step_ms, left))
            return self.lsn
        finally:
            self.finished = True
            self.master.feeder_txns.forget(self.info)

    def _insufficient(self) -> InsufficientAcksError:
        info = self.info
        acked = tuple(info.acked_by)
        group = self.master.group
        others = [n.name for n in group.nodes if n.name != self.master.node_name] if group is not None else []
        missing = tuple(n for n in others if n not in acked)
        return InsufficientAcksError(
            f"txn {info.txn_id} is committed on master {self.master.node_name} (Commit VLSN {info.vlsn}, "
            f"{info.durability.master_sync.name}) but got {len(acked)} of {info.required} acks required by "
            f"{info.durability.replica_ack.name} within {self.timeout_ms} ms: acked by "
            f"{', '.join(acked) or 'none'}; no ack from {', '.join(missing) or 'none'}",
            info.txn_id, info.vlsn or 0, acked, missing, info.required)

    def __repr__(self) -> str:
        state = "acked" if self.done else f"waiting for {', '.join(self.waiting_for) or 'nobody connected'}"
        return (f"CommitToken(txn {self.info.txn_id}, VLSN {self.info.vlsn}, {len(self.info.acked_by)}/"
                f"{self.info.required} acks, {state})")


def check_replicas(master: "ReplicatedEnvironment", durability: Durability, what: str) -> int:
    """The acks ``durability`` needs; :class:`InsufficientReplicasError` if fewer replicas are connected."""
    if not isinstance(durability, Durability):
        raise UserError(f"{what} on {master.node_name}: durability is a replication Durability(master_sync, "
                        f"replica_sync, replica_ack), not {durability!r}")
    size = len(master.group.nodes) if master.group is not None else 1
    required = durability.replica_ack.required_acks(size)
    active = master.feeder_txns.active_replicas()
    if len(active) < required:
        raise InsufficientReplicasError(
            f"{what} on master {master.node_name}: {durability.replica_ack.name} needs acks from {required} "
            f"replica(s) of a group of {size}, but {len(active)} are connected ({', '.join(active) or 'none'}); "
            "nothing was logged")
    return required


def start_commit(master: "ReplicatedEnvironment", txn: "Transaction", durability: Durability = DEFAULT_DURABILITY,
                 *, clock=None, timeout_ms: int = DEFAULT_ACK_TIMEOUT_MS) -> CommitToken:
    """Log ``txn``'s Commit with ``durability.master_sync`` and return the token that waits for its acks."""
    master.check_master(f"commit txn {txn.id}")
    required = check_replicas(master, durability, f"commit of txn {txn.id}")
    if not txn.writes:
        required = 0  # a transaction that wrote nothing logs no Commit: nothing to acknowledge
    info = master.feeder_txns.register(txn.id, durability, required)
    try:
        txn.durability = durability.master_sync
        lsn = txn.commit()
    except BaseException:
        master.feeder_txns.forget(info)
        raise
    if not lsn.is_null:
        info.vlsn = master.log.read(lsn).vlsn
    if info.done:
        info.released.set()
    return CommitToken(master, info, lsn, clock or SystemClock(), timeout_ms)


def commit(master: "ReplicatedEnvironment", txn: "Transaction", durability: Durability = DEFAULT_DURABILITY, *,
           clock=None, timeout_ms: int = DEFAULT_ACK_TIMEOUT_MS, pump: Callable[[], int] | None = None) -> LSN:
    """Commit ``txn`` on the master and wait for its acks (see the module documentation)."""
    return start_commit(master, txn, durability, clock=clock, timeout_ms=timeout_ms).wait(pump)


__all__ = ["FeederTxns", "TxnInfo", "CommitToken", "check_replicas", "start_commit", "commit", "count_ack",
           "COUNT_ACK",
           "DEFAULT_ACK_TIMEOUT_MS", "PUMP_STEP_MS"]
