"""Durability of a replicated commit as JE defines it: a sync policy on each side and an ack policy.

JE's ``Durability`` has three parts, and so does :class:`Durability` here:

- ``master_sync`` (a :data:`SyncPolicy`): how the master logs its Commit:
  ``SYNC`` (written and fsynced before the commit returns), ``WRITE_NO_SYNC``
  (written to the file, not fsynced: a crash of the operating system may lose
  it) or ``NO_SYNC`` (left in the log buffer: a crash of the process loses it);
- ``replica_sync``: how each replica logs the Commit it replays, *before* it
  acknowledges it (an ack promises what the replica's sync policy promises);
- ``replica_ack`` (a :class:`ReplicaAckPolicy`): how many replicas must
  acknowledge the commit before it returns on the master: ``ALL`` of them,
  a ``SIMPLE_MAJORITY`` of the group (the master counts itself: with three
  nodes, one replica's ack makes two of three), or ``NONE``.

How a commit goes (:func:`~minidb.replication.stream.ack.commit`, the master's side;
:mod:`.ack` keeps the commits waiting for acks)::

    1. enough replicas connected for the ack policy?  no -> InsufficientReplicasError (nothing logged)
    2. log the Commit with master_sync                 (from here the commit is durable on the master)
    3. the feeders send it as a Commit message carrying replica_sync
    4. each replica replays it, logs it with replica_sync, then acks
    5. enough acks before the timeout?                  no -> InsufficientAcksError (still committed)

Invariant: an acknowledged commit is on the acking replica with at least the
durability of ``replica_sync``; the master never reports success with fewer
acks than the policy asks for. The timeout is measured on a clock object
(``now_ms``/``wait_ms``: the log store's ``ManualClock`` in tests, real time
over TCP). Example::

    Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY)   # JE's COMMIT_NO_SYNC-like
    ReplicaAckPolicy.SIMPLE_MAJORITY.required_acks(3)   # 1: the master and one replica make a majority of 3
    ReplicaAckPolicy.ALL.required_acks(3)               # 2

Every count of required acks goes through :func:`required_acks` (``REQUIRED_ACKS``, an exercise hook,
:mod:`minidb.impl`; exercise 13a): with ``MINIDB_IMPL=student`` the student's count decides, for every
commit and for the group's own writes.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from minidb import impl
from minidb.errors import UserError
from minidb.logstore.config import Durability as _LogDurability

#: JE's ``Durability.SyncPolicy``: the log store's commit durability (SYNC, WRITE_NO_SYNC, NO_SYNC).
SyncPolicy = _LogDurability

#: Sync policies on the wire (the ``replica_sync`` byte of a ``Commit`` message).
SYNC_CODES = {SyncPolicy.SYNC: 1, SyncPolicy.WRITE_NO_SYNC: 2, SyncPolicy.NO_SYNC: 3}
SYNC_BY_CODE = {code: policy for policy, code in SYNC_CODES.items()}


class ReplicaAckPolicy(enum.Enum):
    """JE's ``Durability.ReplicaAckPolicy``: how many replicas must acknowledge a commit."""

    ALL = "all"
    SIMPLE_MAJORITY = "simple_majority"
    NONE = "none"

    def required_acks(self, group_size: int) -> int:
        """Acks from replicas a commit needs in a group of ``group_size`` nodes (the master counts itself)."""
        return REQUIRED_ACKS.call(self, group_size)  # the one call site


def required_acks(policy: ReplicaAckPolicy, group_size: int) -> int:
    """Acks from replicas a commit under ``policy`` needs in a group of ``group_size`` nodes (master included)."""
    if policy is ReplicaAckPolicy.ALL:
        return group_size - 1
    if policy is ReplicaAckPolicy.SIMPLE_MAJORITY:
        return group_size // 2  # a majority is size // 2 + 1 nodes, the master being one of them
    return 0


def required_acks_by_name(policy: str, group_size: int) -> int:
    """:func:`required_acks` in exercise 13a's form: the policy by its name (``"ALL"``...)."""
    return required_acks(ReplicaAckPolicy[policy], group_size)


def _required_from_exercise(hook: impl.Hook, student: Callable) -> Callable[[ReplicaAckPolicy, int], int]:
    """A student's ``required_acks`` (exercise 13a: the policy by name), its answer checked: a count of replicas."""
    def required(policy: ReplicaAckPolicy, group_size: int) -> int:
        answer = student(policy.name, group_size)
        if type(answer) is not int or not 0 <= answer <= max(0, group_size - 1):
            raise hook.wrong(f"returned {answer!r} for {policy.name} in a group of {group_size}, not a number of "
                             f"replicas from 0 to {max(0, group_size - 1)}")
        return answer
    return required


REQUIRED_ACKS = impl.register("13a_ack_policy", "required_acks", required_acks, _required_from_exercise)


@dataclass(frozen=True)
class Durability:
    """JE's ``Durability(masterSync, replicaSync, replicaAck)`` (see the module documentation)."""

    master_sync: SyncPolicy = SyncPolicy.SYNC
    replica_sync: SyncPolicy = SyncPolicy.NO_SYNC
    replica_ack: ReplicaAckPolicy = ReplicaAckPolicy.SIMPLE_MAJORITY

    def __post_init__(self) -> None:
        for name in ("master_sync", "replica_sync"):
            value = getattr(self, name)
            if not isinstance(value, SyncPolicy):
                raise UserError(f"Durability: {name} is a SyncPolicy (SYNC, WRITE_NO_SYNC, NO_SYNC), not {value!r}")
        if not isinstance(self.replica_ack, ReplicaAckPolicy):
            raise UserError(f"Durability: replica_ack is a ReplicaAckPolicy (ALL, SIMPLE_MAJORITY, NONE), "
                            f"not {self.replica_ack!r}")

    def __str__(self) -> str:
        return f"{self.master_sync.name},{self.replica_sync.name},{self.replica_ack.name}"


#: JE's default (``Durability.COMMIT_SYNC``'s sync, replicas NO_SYNC, a simple majority of acks).
DEFAULT_DURABILITY = Durability()


__all__ = ["SyncPolicy", "ReplicaAckPolicy", "Durability", "DEFAULT_DURABILITY", "SYNC_CODES", "SYNC_BY_CODE",
           "required_acks", "required_acks_by_name", "REQUIRED_ACKS"]
