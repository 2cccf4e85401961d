"""Failover on the in-memory network: elections, the new master's feeders, syncup and rejoin, one step at a time.

:class:`FailoverGroup` runs every node of a group in one process, on one
:class:`~minidb.replication.stream.network.InMemoryNetwork` and one clock (the log
store's ``ManualClock``): each node has its
:class:`~minidb.replication.group.elections.ElectionNode` (heartbeats, Paxos
rounds, its durable ``election.acceptor``), and the master has one
:class:`~minidb.replication.stream.feeder.Feeder` per replica that follows it, on
the listener ``<master>/feeder`` (a partition cuts nodes, so both listeners
of a node are on its side). Nothing runs by itself: :meth:`FailoverGroup.pump`
is one step (deliver, every election node, then the stream links),
:meth:`FailoverGroup.elect` moves the clock until the group has a master
that every reachable node follows, :meth:`FailoverGroup.settle` pumps until
nothing moves::

    group = FailoverGroup({"n1": n1, "n2": n2, "n3": n3}, clock, reopen=open_node)
    group.elect()                        # "n1": equal logs, the first name (or the priority) wins
    ... write on group.master_env ...    # commits wait for acks through pump=group.pump
    group.crash("n1")                    # or group.partition({"n1"}, {"n2", "n3"})
    group.elect()                        # heartbeats stop; n2 and n3 elect the most up-to-date of them
    group.restart("n1"); group.elect()   # recovery, then n1 syncs up with the new master and rolls back

The links follow the elections, after every step (``_reconcile``): a node
that an election made REPLICA of master M gets a link to M (a handshake, a
feeder on M, a :class:`~minidb.replication.stream.replica.Replica` with
``syncup=True``: the matchpoint, the rollback of anything after it, then the
stream); a link whose master is deposed or down, or whose replica follows
another master or is down, is closed (a partition only holds its frames in
flight: a master cut off keeps its feeders, and its commits wait for acks
that do not come). A joining node whose rollback would pass the rollback limit, or that
shares no sync point with the master, gets a **network restore** (JE's
``NetworkRestore``, :mod:`minidb.replication.restore`: the node, stopped,
receives the master's log files over the in-memory network from a
``LogFileFeeder`` on the master's stream address, stages and verifies them
on its own disk, installs them and opens again; its election state stays
its own) and joins again. A crash of the node's disk during the restore, or
during the recovery that follows, leaves the node down like any crash (its
next open finishes the install or discards what was staged); a crash of the
master's disk, or a failed restore, opens the node again on its own files.

Invariants: only an election makes a node master (the learner calls
``become_master``); a replica follows only the master its election node
learned; a node crash (a ``SimulatedCrash`` from its disk, anywhere inside
a step, or :meth:`FailoverGroup.crash`) stops that node only: its election
node and links close, the others go on. Errors other than a closed
connection, a deposed feeder, a crash or a network restore are kept in
``errors`` (a crash test counts them as violations).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode, SimDisk
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.errors import (
    ConnectionClosedError,
    FeederError,
    NetworkRestoreError,
    NetworkRestoreRequiredError,
)
from minidb.replication.group.driver import settle
from minidb.replication.group.elections import ElectionConfig, ElectionNode
from minidb.replication.group.membership import NodeState
from minidb.replication.restore import LogFileFeeder, NetworkRestore
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork
from minidb.replication.stream.replica import Replica

#: Opens (and recovers) a node's environment on a disk: ``reopen(name, disk)``.
Reopen = Callable[[str, SimDisk], ReplicatedEnvironment]


@dataclass
class Link:
    """A stream from a master to one replica: the master's feeder and the replica's side."""

    master: str
    feeder: Feeder
    replica: Replica

    def close(self) -> None:
        if not self.feeder.closed:
            self.feeder.close()
        self.replica.channel.close()


class FailoverGroup:
    """Every node of a group in one process (see the module documentation)."""

    def __init__(self, envs: dict[str, ReplicatedEnvironment], clock, net: InMemoryNetwork | None = None,
                 election_config: ElectionConfig | None = None, reopen: Reopen | None = None):
        self.net = net or InMemoryNetwork()
        self.clock = clock
        self.election_config = election_config
        self.reopen = reopen
        self.envs: dict[str, ReplicatedEnvironment | None] = dict(envs)
        self.disks: dict[str, SimDisk] = {name: env.disk for name, env in envs.items()}  # each node's, for restarts
        self.elections: dict[str, ElectionNode] = {}
        self.links: dict[str, Link] = {}  # replica name -> its link
        self._feeder_listeners: dict[str, object] = {}
        self.crashes: list[str] = []  # the nodes that crashed, in order
        self.restores: list[str] = []  # the nodes restored from the master's files
        self.rollbacks: list[tuple[str, object]] = []  # (node, RollbackResult) of every syncup that rolled back
        self.errors: list[str] = []
        for name, env in envs.items():
            self.elections[name] = ElectionNode.for_env(env, self.net, clock, election_config)

    # -- who is who --------------------------------------------------------------------------------------
    def up(self) -> list[str]:
        return [name for name, env in self.envs.items() if env is not None and not env.closed]

    @property
    def master(self) -> str | None:
        """The master of the newest term among the running nodes (None: no master)."""
        masters = [n for n in self.up() if self.elections[n].state is NodeState.MASTER
                   and self.envs[n].state is NodeState.MASTER]
        return max(masters, key=lambda n: self.elections[n].term, default=None)

    @property
    def master_env(self) -> ReplicatedEnvironment | None:
        name = self.master
        return self.envs[name] if name is not None else None

    def followers(self, master: str) -> list[str]:
        """The running nodes reachable from ``master`` (a partition may cut some off)."""
        return [n for n in self.up() if n != master and not self.net.partitioned(n, master)]

    # -- stepping ----------------------------------------------------------------------------------------
    def pump(self) -> int:
        """One step: deliver, every election node, then (re)connect the links and pump them; how much moved."""
        moved = self.net.deliver()
        for name in self.up():
            moved += self._guard(name, self.elections[name].pump) or 0
        self._reconcile()
        for name, link in list(self.links.items()):
            moved += self._guard(link.master, link.feeder.pump, link=name) or 0
            if name in self.links:
                moved += self._guard(name, link.replica.pump, link=name) or 0
        return moved

    def settle(self, max_rounds: int = 10_000) -> int:
        """Pump until nothing moves (the clock stands still); rounds pumped."""
        return settle(self.pump, self.net, max_rounds)

    def elect(self, max_ms: int = 60_000, step_ms: int = 100) -> str | None:
        """Move the clock (``step_ms`` at a time) and pump until the group has a master that every node it
        reaches follows, synced up and caught up; that master, or None after ``max_ms`` (a minority)."""
        waited = 0
        while True:
            self.settle(max_rounds=500)
            master = self.master
            if master is not None and self.converged(master):
                return master
            if waited >= max_ms:
                return None
            self.clock.advance(step_ms)
            waited += step_ms

    def converged(self, master: str) -> bool:
        """Every node ``master`` reaches follows it through a synced-up link and holds its whole stream."""
        followers = self.followers(master)
        if 1 + len(followers) < self.envs[master].group.majority:
            return False  # a master cut off from the majority is about to be deposed
        last = self.envs[master].range.last
        for name in followers:
            link = self.links.get(name)
            if link is None or link.master != master or link.replica.start_vlsn is None:
                return False
            if self.envs[name].range.last != last:
                return False
        return True

    def _guard(self, name: str, step, link: str | None = None):
        """Run one node's step: a crash of its disk stops that node; a broken link is closed (and reopened
        by the next step if the elections still want it)."""
        try:
            return step()
        except SimulatedCrash:
            self.crash(name)
        except NetworkRestoreRequiredError as e:  # the rollback limit, or no common sync point
            self.restore(name, str(e))
        except (ConnectionClosedError, FeederError):
            self._drop(link)
        except Exception as e:  # kept for the caller: a crash test reports them
            self.errors.append(f"{name}: {type(e).__name__}: {e}")
            self._drop(link)
        return None

    # -- links follow the elections ------------------------------------------------------------------------
    def _reconcile(self) -> None:
        master = self.master
        for name, link in list(self.links.items()):
            election = self.elections[name]
            if link.master != master or name not in self.up() or election.master != master:
                self._drop(name)
        if master is None:
            return
        for name in self.followers(master):
            election = self.elections[name]
            if name not in self.links and election.state is NodeState.REPLICA and election.master == master:
                self._guard(name, lambda name=name: self._link(master, name))

    def _connect(self, master: str, name: str):
        """A connection from node ``name`` to ``master``'s stream address, past the handshake: (the node's
        channel, the master's)."""
        listener = self._feeder_listeners.get(master)
        if listener is None:
            listener = self._feeder_listeners[master] = self.net.listen(f"{master}/feeder")
        group = self.envs[master].group
        initiator = HandshakeInitiator(self.net.connect(f"{master}/feeder", name), group.name, group.node(name))
        acceptor = HandshakeAcceptor(listener.accept(), group, master)
        while acceptor.poll() is None or initiator.poll() is None:
            if not self.net.deliver():
                raise ConnectionClosedError(f"{name} -> {master}: the handshake did not finish")
        return initiator.channel, acceptor.channel

    def _link(self, master: str, name: str) -> None:
        mine, theirs = self._connect(master, name)
        feeder = Feeder(self.envs[master], theirs, name)
        self.links[name] = Link(master, feeder, _SyncupReplica(self, self.envs[name], mine, master))

    def _drop(self, name: str | None) -> None:
        link = self.links.pop(name, None) if name is not None else None
        if link is not None:
            link.close()

    # -- failures ------------------------------------------------------------------------------------------
    def crash(self, name: str, mode: CrashMode | None = None) -> None:
        """Node ``name`` loses power (simulated disk): its environment, election node and links stop."""
        env = self.envs[name]
        if env is not None and not env.closed:
            env.crash(mode)
        self._stop(name)
        self.crashes.append(name)

    def _stop(self, name: str) -> None:
        self.envs[name] = None
        self.elections[name].close()
        for replica, link in list(self.links.items()):
            if name in (replica, link.master):
                self._drop(replica)
        listener = self._feeder_listeners.pop(name, None)
        if listener is not None:
            listener.close()

    def restart(self, name: str, disk: SimDisk | None = None) -> ReplicatedEnvironment:
        """Open node ``name`` again on ``disk`` (recovery finishes a rollback a crash cut short); it joins
        through the next election steps (it learns the master, then syncs up). ``disk``: default, its last one."""
        if self.reopen is None:
            raise ValueError("FailoverGroup(reopen=...) is needed to restart a node")
        disk = self.disks[name] = disk or self.disks[name]
        env = self.envs[name] = self.reopen(name, disk)
        self.elections[name] = ElectionNode.for_env(env, self.net, self.clock, self.election_config)
        return env

    def restore(self, name: str, why: str) -> None:
        """A network restore: node ``name`` (stopped, its disk kept) gets the master's log files over the network
        (:mod:`minidb.replication.restore`), then opens on them; its election state stays its own. A crash of
        the node's disk leaves it down (its next open finishes or discards what was staged); a crash of the
        master's, or a failed restore, opens the node again on its own files."""
        master = self.master
        old = self.envs[name]
        if master is None or old is None or self.reopen is None:
            self.errors.append(f"{name}: needs a network restore ({why}) but no master can give one")
            return
        self._stop(name)
        old.crash(CrashMode.everything())  # closed, keeping all it wrote: the restore replaces its log
        self.restores.append(name)
        try:
            self._network_restore(master, name, why)
        except SimulatedCrash:
            if self.envs.get(master) is not None:  # the node's disk crashed: down until restarted
                self.crashes.append(name)
                return
        except (NetworkRestoreError, ConnectionClosedError) as e:
            self.errors.append(f"{name}: {e}")
        try:
            self.restart(name)  # on the restored log, or on its own files: it may try again
        except SimulatedCrash:  # it crashed again while recovering: down
            self.crash(name)

    def _network_restore(self, master: str, name: str, why: str) -> None:
        """Node ``name`` receives ``master``'s files, both stepped on the network, until they are installed."""
        mine, theirs = self._connect(master, name)
        server = LogFileFeeder(self.envs[master], theirs, name)
        try:
            client = NetworkRestore(self.disks[name], mine, self.envs[master].group.name, master, reason=why)
            while not client.done:
                moved = self.net.deliver()
                try:
                    moved += server.pump()
                except SimulatedCrash:
                    self.crash(master)
                    raise
                moved += self.net.deliver() + client.pump()
                if not moved:
                    raise NetworkRestoreError(f"network restore of {name} from {master}: nothing moves")
        finally:
            mine.close()
            server.close()  # its files go free

    def partition(self, *sides) -> None:
        self.net.partition(*sides)

    def heal(self) -> None:
        self.net.heal()

    def close(self) -> None:
        for name in list(self.links):
            self._drop(name)
        for name in self.up():
            self.elections[name].close()
            self.envs[name].close()


class _SyncupReplica(Replica):
    """A replica that reports its syncup's rollback to the group."""

    def __init__(self, group: FailoverGroup, env, channel, master: str):
        self.group = group
        super().__init__(env, channel, master, syncup=True)

    def _start_stream(self, vlsn: int) -> None:
        if self.syncup is not None and self.syncup.rollback is not None:
            self.group.rollbacks.append((self.env.node_name, self.syncup.rollback))
        super()._start_stream(vlsn)


__all__ = ["FailoverGroup", "Link", "Reopen"]
