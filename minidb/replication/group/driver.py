"""A group driver on the in-memory network: a master, its feeders and replicas, moved one step at a time.

For tests, notebooks and the bench's single-process baseline: the driver
opens the handshakes, makes one :class:`~minidb.replication.stream.feeder.Feeder`
per replica on the master and one :class:`~minidb.replication.stream.replica.Replica`
per replica node, and :meth:`InMemoryGroup.pump` is one step of the
script: deliver what is in flight, let every feeder and replica read and
send. It is the ``pump`` a commit waiting for acks calls (:mod:`.ack`)::

    group = InMemoryGroup(envs={"n1": n1, "n2": n2, "n3": n3}, master="n1")
    txn = group.master.begin(Durability(SYNC, NO_SYNC, SIMPLE_MAJORITY))
    ...
    group.master.commit(txn, clock=clock, pump=group.pump)    # returns once n2 or n3 acked

Invariant: nothing moves except inside :meth:`pump` (and :meth:`settle`,
which pumps until nothing moves); a partition or delay scripted on
``group.net`` holds its frames until healed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork
from minidb.replication.stream.replica import Replica

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment


class InMemoryGroup:
    """A master and its replicas on one :class:`InMemoryNetwork` (see the module documentation)."""

    def __init__(self, envs: dict[str, "ReplicatedEnvironment"], master: str, net: InMemoryNetwork | None = None):
        self.net = net or InMemoryNetwork()
        self.envs = dict(envs)
        self.master = self.envs[master]
        self.master.become_master()
        self.listener = self.net.listen(self.master.node_name)
        self.feeders: dict[str, Feeder] = {}
        self.replicas: dict[str, Replica] = {}
        for name, env in self.envs.items():
            if name != master:
                self.join(env)

    def join(self, env: "ReplicatedEnvironment") -> None:
        """Connect ``env`` to the master: the handshake, then a feeder and a replica for it."""
        name, master = env.node_name, self.master.node_name
        feeder_channel, replica_channel = handshake(self.net, self.listener, self.master, env)
        self.envs[name] = env
        self.feeders[name] = Feeder(self.master, feeder_channel, name)
        self.replicas[name] = Replica(env, replica_channel, master)
        self.net.deliver()
        self.feeders[name].pump()  # reads the StartStream: the feeder is active from here on

    def leave(self, name: str) -> None:
        """Stop feeding ``name`` (its feeder releases its files; its replica is forgotten)."""
        self.feeders.pop(name).close()
        self.replicas.pop(name)

    def pump(self) -> int:
        """One step: deliver what is in flight, then every feeder and replica reads and sends; how much moved."""
        moved = self.net.deliver()
        moved += sum(f.pump() for f in self.feeders.values())
        moved += sum(r.pump() for r in self.replicas.values())
        return moved

    def settle(self, max_rounds: int = 10_000) -> int:
        """Pump until nothing moves (frames held by a partition or delay stay in flight); rounds pumped."""
        return settle(self.pump, self.net, max_rounds)


def handshake(net: InMemoryNetwork, listener, master: "ReplicatedEnvironment", env: "ReplicatedEnvironment"):
    """``env`` connects to ``master`` (listening on ``listener``) and both sides shake hands, the network
    moving until they are done: the master's channel to ``env`` (for its feeder) and ``env``'s (for its
    replica)."""
    group, name = master.group, env.node_name
    initiator = HandshakeInitiator(net.connect(master.node_name, name), group.name, group.node(name))
    acceptor = HandshakeAcceptor(listener.accept(), group, master.node_name)
    while acceptor.poll() is None or initiator.poll() is None:
        net.deliver()
    return acceptor.channel, initiator.channel


def settle(pump, net: InMemoryNetwork, max_rounds: int = 10_000) -> int:
    """Call ``pump`` until neither it nor the network moves anything (at most ``max_rounds``); rounds pumped."""
    for rounds in range(1, max_rounds + 1):
        if not pump() and not net.deliver():
            return rounds
    return max_rounds


__all__ = ["InMemoryGroup", "handshake", "settle"]
