"""The replica's side of the stream (JE's ``Replica`` and ``Replay``): receive the master's entries, replay them.

A replica opens a connection to the master (after the handshake,
:mod:`.network`), becomes a REPLICA of it and asks for the stream from the
next VLSN it needs (``StartStream``: its range's last plus one, so a replica
that starts late, or comes back, catches up from where it stopped). Each
``Entry`` it receives is written to its own log with the master's VLSN and
transaction id and applied to its tree
(:meth:`~minidb.replication.env.ReplicatedEnvironment.replay`); after
replaying a Commit it sends an ``Ack`` (the master's txn id and the
Commit's VLSN), which the feeder records. A Commit the master waits for
arrives as a ``Commit`` message carrying the replica sync policy
(:mod:`.durability`): the replica logs the Commit with that policy (SYNC:
fsynced; NO_SYNC: left in its log buffer) and only then acks it. Invariants: entries are replayed in VLSN order with no gap (replay
refuses anything else and writes nothing); a replica never allocates a VLSN.

With ``syncup=True`` the replica first syncs up with the feeder
(:class:`~minidb.replication.syncup.syncup.ReplicaFeederSyncup`: the matchpoint,
then the rollback of everything after it) and asks for the stream from the
matchpoint on: a replica that holds entries the master does not (a former
master) can rejoin.

Stepped like the feeder: :meth:`Replica.pump` replays whatever arrived
and returns how many entries it replayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log.types import type_by_code
from minidb.replication.errors import ReplayError
from minidb.replication.stream import wire
from minidb.replication.stream.durability import SYNC_BY_CODE
from minidb.replication.syncup.syncup import ReplicaFeederSyncup

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment


class Replica:
    """Replays the stream a feeder sends (see the module documentation)."""

    def __init__(self, env: "ReplicatedEnvironment", channel, master_name: str, syncup: bool = False,
                 rollback_limit: int | None = None):
        env.become_replica(master_name)
        self.env = env
        self.channel = channel
        self.master_name = master_name
        self.replayed = 0
        self.syncup = ReplicaFeederSyncup(env, channel, master_name, rollback_limit) if syncup else None
        self.start_vlsn: int | None = None
        if self.syncup is None or self.syncup.done:
            self._start_stream(env.next_stream_vlsn)

    def _start_stream(self, vlsn: int) -> None:
        self.start_vlsn = vlsn
        self.env.reopen_replay_txns()  # a transaction open at the stream's start is open here too
        self.channel.send(wire.encode(self.env.group.name, "StartStream", start_vlsn=vlsn))

    def pump(self, timeout: float | None = 0) -> int:
        """Replay every entry that has arrived (waiting up to ``timeout`` for a first one, over TCP); how many.

        With ``syncup``, first sync up with the feeder (:mod:`.syncup`, one step per call), then ask for
        the stream from the matchpoint on."""
        if self.start_vlsn is None:
            assert self.syncup is not None
            if not self.syncup.pump(timeout):
                return 0
            self._start_stream(self.syncup.start_vlsn)
        done = 0
        while (message := self.channel.receive(timeout)) is not None:
            timeout = 0
            if message.type not in ("Entry", "Commit"):
                continue
            entry_type = type_by_code(message["type_code"])
            if entry_type is None:
                raise ReplayError(f"{self.channel.where}: VLSN {message['vlsn']} has unknown entry type "
                                  f"0x{message['type_code']:02x}")
            sync = None
            if message.type == "Commit":
                sync = SYNC_BY_CODE.get(message["replica_sync"])
                if sync is None or entry_type.name != "Commit":
                    raise ReplayError(f"{self.channel.where}: VLSN {message['vlsn']}: a Commit message carries a "
                                      f"Commit entry and a sync policy 1..3, not {entry_type.name} and "
                                      f"{message['replica_sync']}")
            values = entry_type.decode(message["item"])
            self.env.replay(message["vlsn"], entry_type.name, values, message["db_name"] or None, sync)
            if entry_type.name == "Commit":
                self.channel.send(wire.encode(self.env.group.name, "Ack", txn_id=values["txn_id"],
                                              vlsn=message["vlsn"]))
            done += 1
        self.replayed += done
        return done

    def __repr__(self) -> str:
        return f"Replica({self.env.node_name} of {self.master_name}, {self.replayed} entries replayed)"


__all__ = ["Replica"]
