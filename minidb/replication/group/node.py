"""A node of a replication group as an operating-system process over TCP, driven by lines of text.

The pieces of a group (elections, feeders, replicas, syncup and rollback,
acks) are stepped objects; :class:`GroupNode` runs them for one node in one
loop, on real sockets and a real directory: ``minidb group node`` is one
such process, and ``minidb group demo`` starts several, kills the master and
restarts it. The loop waits on its sockets and its control input (never a
sleep), then pumps, in this order: the :class:`~.elections.ElectionNode`
(its heartbeats, rounds and learned results), the node's role (a new state
closes the streams of the old one), the stream connections. Invariants:

- a MASTER runs one :class:`~.feeder.Feeder` per replica that connected to
  its stream address and passed the handshake (a second connection of the
  same replica replaces the first); any other state runs none;
- a REPLICA runs at most one :class:`~.replica.Replica`, to the master the
  election named, always with syncup (``syncup=True``): a node that comes
  back (a former master) first finds the matchpoint and rolls back what it
  holds that the master does not (:mod:`.syncup`, :mod:`.rollback`);
- a node whose syncup needs a network restore, or that opened an empty
  directory and learns of a master (not being master itself), gets the
  master's log files first (:mod:`minidb.replication.restore`): its
  elections and environment stop, the files come over a connection to the
  master's stream address, are verified and installed, and the node opens
  on them and starts its elections again on the same address. A failed
  restore leaves its own files, opened again; it tries again later;
- a connection to the stream address says what it is for by its first
  message after the handshake: ``FileListRequest`` gets a
  :class:`~minidb.replication.restore.LogFileFeeder` (any node serves a
  restore), anything else a feeder (the master only);
- every change of state, every stream that syncs up, every answer to a
  command is one line on standard output, so the parent reads events, not
  timings.

Each node listens on two TCP ports of 127.0.0.1: its *election address* (the
:class:`~.group.RepNode` address, for election traffic) and its *stream
address* (replicas connect there to their feeder). Both may be port 0: the
kernel chooses, and the node reports the ports before anything else.

**The control protocol.** Lines of UTF-8 text, words separated by single
spaces, ``key=value`` for named values. The parent writes commands to the
node's standard input; the node writes events to its standard output::

    command (parent -> node)                 answer (node -> parent)
    ---------------------------------------  ------------------------------------------------------
    (at start, before any command)           listening n1 election=127.0.0.1:41001 stream=127.0.0.1:41002 pid=4242
    group n1=E1/S1 n2=E2/S2 n3=E3/S3         opened n1 vlsns=1..12 last_txn_end=10  (then elections run)
    write START COUNT                        wrote n1 records=COUNT vlsns=13..22 acks=SIMPLE_MAJORITY
    tail START COUNT                         tail n1 records=COUNT vlsns=23..24
    digest VLSN                              digest n1 records=10 crc=0xfd31cbd6 vlsns=1..20 last_txn_end=20
    quit                                     bye n1  (the environment closed; exit code 0)
    (events, any time)                       state n1 MASTER term=1 master=n1
                                             joined n3 master=n1 matchpoint=0 rolled_back=0
                                             restored n3 master=n2 files=1..2 bytes=3695 checksums=verified
                                               vlsns=1..23 last_txn_end=23
                                             note n2 feeder to n3 stopped: ...
    (a command that fails)                   error n1 cannot write: node n1 is a replica of ...

- ``group`` names every node's election and stream address (``E/S``, each
  ``host:port``); the node opens its environment in its directory as that
  member of the group and starts its elections. Ports chosen by the kernel
  are known only once every node listens, hence a command, not an option.
- ``write START COUNT``: on the master, COUNT transactions, each putting the
  record ``k<i>`` (i from START, five digits) = ``"<node> <i>"`` in the
  database ``demo`` and committing with :data:`WRITE_DURABILITY` (SIMPLE_MAJORITY:
  each commit returns once a majority of the group holds it). It first waits
  until enough replicas stream for that policy.
- ``tail START COUNT``: the master stops feeding, then logs one transaction
  putting COUNT records, fsyncs its log and leaves the transaction open: a
  master that dies here holds entries no replica ever saw and nobody
  acknowledged, its *unacknowledged tail*. (A committed tail rolled back
  after a restart would cross the checkpoint recovery ends with: the
  rollback would end with hard recovery.)
- ``digest VLSN`` waits until the node's log reaches VLSN (and, on a
  replica, its stream synced up), then reports its state: the records of
  ``demo`` (how many, and the CRC-32 of every ``<len><key><len><value>``,
  lengths 4 bytes little-endian, in key order), its VLSN range and its
  ``last_txn_end``. Equal digests: equal state.
- ``joined`` reports a replica's syncup: the matchpoint VLSN and how many
  entries it rolled back (``vlsns=`` which ones, if any).
- ``restored`` reports a network restore: from which node, the files and
  bytes received, and the VLSN range the node opened with.

End of input (the parent is gone) closes the node like ``quit``. A waiting
command that times out answers ``error``; an error of the loop itself (a
corrupt log) is one ``error`` line, then exit code 1.
"""

from __future__ import annotations

import os
import select
import struct
import time
import zlib
from typing import Callable

from minidb.errors import MinidbError, UserError
from minidb.io import OSDisk, created
from minidb.log.files import log_file_numbers
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.errors import (
    ConnectionClosedError,
    FeederError,
    GroupConfigError,
    NetworkRestoreRequiredError,
    ReplicationNetworkError,
)
from minidb.replication.group.elections import ElectionConfig, ElectionNode
from minidb.replication.group.membership import NodeState, RepGroup, RepNode
from minidb.replication.restore import LogFileFeeder, NetworkRestore
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, TcpNetwork, parse_address
from minidb.replication.stream.replica import Replica

HOST = "127.0.0.1"
DEMO_DB = "demo"
#: How each ``write`` commits: fsynced on the master, written on the replicas, a majority of the group acks.
WRITE_DURABILITY = Durability(SyncPolicy.SYNC, SyncPolicy.WRITE_NO_SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY)
#: Election timing for processes on one busy machine: quick to start, slow to declare a master lost.
NODE_ELECTIONS = ElectionConfig(promise_wait_ms=300, retry_ms=800, stagger_ms=400, heartbeat_ms=100,
                                heartbeat_timeout_ms=3000)
POLL_S = 0.02  # the longest the loop waits on its sockets before it looks at the clocks again
JOIN_RETRY_MS = 200  # a replica whose master's stream address refused it tries again after this
_LEN = struct.Struct("<I")


class NodeClock:
    """Real time for the node's elections and commits: waiting means serving the node's sockets."""

    def __init__(self, serve: Callable[[float], int]):
        self._serve = serve

    def now_ms(self) -> int:
        return int(time.monotonic() * 1000)

    def wait_ms(self, ms: float) -> None:
        self._serve(ms / 1000)


def record(i: int, node: str) -> tuple[str, str]:
    """The demo's record number ``i``, as written by ``node``."""
    return f"k{i:05d}", f"{node} {i}"


def state_digest(env: ReplicatedEnvironment) -> dict[str, str]:
    """What ``digest`` reports (see the module documentation): records, their CRC-32, the VLSN range."""
    crc, count = 0, 0
    if env.env.db_tree.get(DEMO_DB) is not None:
        for key, value in env.database(DEMO_DB, create=False).items():
            crc = zlib.crc32(_LEN.pack(len(key)) + key + _LEN.pack(len(value)) + value, crc)
            count += 1
    current = env.range
    vlsns = "-" if current.is_empty else f"{current.first}..{current.last}"
    return {"records": str(count), "crc": f"0x{crc:08x}", "vlsns": vlsns, "last_txn_end": str(current.last_txn_end)}


def parse_event(line: str) -> tuple[str, str, list[str], dict[str, str]]:
    """An event line as (kind, node, plain words, key=value pairs): ``"wrote n1 records=5"`` ->
    ``("wrote", "n1", [], {"records": "5"})``."""
    words = line.split()
    if len(words) < 2:
        raise UserError(f"not an event line of a group node: {line!r}")
    plain = [w for w in words[2:] if "=" not in w]
    named = dict(w.split("=", 1) for w in words[2:] if "=" in w)
    return words[0], words[1], plain, named


def parse_members(words: list[str]) -> dict[str, tuple[str, str]]:
    """``["n1=E/S", ...]`` -> ``{"n1": (E, S)}``; a GroupConfigError names a bad word."""
    members = {}
    for word in words:
        name, sep, addresses = word.partition("=")
        election, slash, stream = addresses.partition("/")
        if not sep or not name or not slash:
            raise GroupConfigError(f"a member is NAME=HOST:PORT/HOST:PORT (election/stream), not {word!r}")
        parse_address(election), parse_address(stream)
        if name in members:
            raise GroupConfigError(f"member {name!r} is named twice")
        members[name] = (election, stream)
    return members


class GroupNode:
    """One node's elections, feeders and replica over TCP, and its control lines (see the module documentation)."""

    def __init__(self, directory: str, group_name: str, name: str, election_port: int = 0, stream_port: int = 0,
                 config: ElectionConfig = NODE_ELECTIONS, wait_s: float = 60.0, emit: Callable[[str], None] = print,
                 trace: bool = False):
        self.directory, self.group_name, self.name, self.trace = directory, group_name, name, trace
        self.config, self.wait_s, self._emit = config, wait_s, emit
        self.net = TcpNetwork()
        self.election_listener = self._listen(election_port, "election")
        self.stream_listener = self._listen(stream_port, "stream")
        self.clock = NodeClock(self.step)
        self.env: ReplicatedEnvironment | None = None
        self.election: ElectionNode | None = None
        self.streams: dict[str, str] = {}  # node name -> its stream address
        self.feeders: dict[str, Feeder] = {}
        self.handshakes: list[HandshakeAcceptor] = []  # stream connections before their handshake
        self.waiting: list[tuple[str, object]] = []  # (peer, channel) past the handshake, before a first message
        self.file_feeders: dict[str, LogFileFeeder] = {}  # network restores this node serves
        self.restore_reason: str | None = None  # this node needs a network restore before it can join: why
        self.joining: HandshakeInitiator | None = None  # the stream connection to the master, in its handshake
        self.replica: Replica | None = None
        self.stream_master: str | None = None  # the master of ``joining`` or ``replica``
        self.reported_join = False
        self._unreachable: str | None = None  # the master whose stream address last refused this node
        self.feeding = True  # False after ``tail``: the master sends nothing more
        self.tail_txn = None
        self._reported: tuple | None = None
        self._next_join_ms = 0

    def _listen(self, port: int, what: str):
        try:
            return self.net.listen(f"{HOST}:{port}")
        except OSError as e:
            raise ReplicationNetworkError(f"node {self.name}: cannot listen for {what} traffic on {HOST}:{port}: "
                                          f"{os.strerror(e.errno) if e.errno else e}") from None

    def emit(self, kind: str, *words: str) -> None:
        self._emit(" ".join([kind, self.name, *words]))

    def listening(self) -> None:
        self.emit("listening", f"election={self.election_listener.address}",
                  f"stream={self.stream_listener.address}", f"pid={os.getpid()}")

    # -- joining the group --------------------------------------------------------------------------------
    def configure(self, members: dict[str, tuple[str, str]]) -> None:
        """Open the environment as a member of the group ``members`` names, and start its elections."""
        if self.env is not None:
            raise UserError(f"node {self.name} is in group {self.group_name!r} already")
        mine = (self.election_listener.address, self.stream_listener.address)
        if members.get(self.name) != mine:
            raise GroupConfigError(f"node {self.name} listens on {mine[0]}/{mine[1]}, but the group names it "
                                   f"{members.get(self.name, 'not at all')}")
        group = RepGroup(self.group_name, [RepNode(n, election) for n, (election, _) in members.items()])
        self.streams = {n: stream for n, (_, stream) in members.items()}
        created.makedirs(self.directory)
        if not log_file_numbers(OSDisk(self.directory)):
            self.restore_reason = "it joins with an empty directory"
        self._open(group)
        self.emit("opened", *self._range_words())

    def _open(self, group: RepGroup) -> None:
        """Open the environment and start its elections (on the election address it always had)."""
        self.env = ReplicatedEnvironment.open(self.directory, group=group, node_name=self.name)
        if self.election_listener.closed:
            self.election_listener = self._listen(parse_address(self.election_listener.address)[1], "election")
        self.election = ElectionNode.for_env(self.env, self.net, self.clock, self.config,
                                             listener=self.election_listener)
        if self.trace:
            self.election.trace.listen(lambda line: self.emit("trace", line))

    def _range_words(self) -> list[str]:
        digest = state_digest(self._env())
        return [f"vlsns={digest['vlsns']}", f"last_txn_end={digest['last_txn_end']}"]

    def _env(self) -> ReplicatedEnvironment:
        if self.env is None:
            raise UserError(f"node {self.name} has no group yet: send 'group NAME=E/S ...' first")
        return self.env

    # -- the loop -----------------------------------------------------------------------------------------
    def _sockets(self) -> list:
        channels = [f.channel for f in [*self.feeders.values(), *self.file_feeders.values()]]
        channels += [h.channel for h in self.handshakes] + [channel for _, channel in self.waiting]
        channels += [c.channel for c in (self.joining, self.replica) if c is not None]
        return [self.election_listener.sock, self.stream_listener.sock] + [c.sock for c in channels if not c.closed]

    def wait(self, timeout: float, control: int | None = None) -> bool:
        """Wait up to ``timeout`` s for a socket (or the ``control`` descriptor); True if ``control`` is readable."""
        watched = self._sockets() + ([control] if control is not None else [])
        readable, _, _ = select.select(watched, [], [], timeout)
        return control is not None and control in readable

    def step(self, timeout: float = POLL_S) -> int:
        """Wait on the sockets up to ``timeout`` s, then pump; how many messages moved."""
        self.wait(timeout)
        return self.pump()

    def pump(self) -> int:
        if self.election is None:
            return 0
        moved = self.election.pump()
        self._follow_state()
        return moved + self._pump_feeders() + self._pump_replica()

    def _follow_state(self) -> None:
        election = self.election
        assert election is not None
        now = (election.state, election.term, election.master)
        if now != self._reported:
            self._reported = now
            self.emit("state", election.state.value, f"term={election.term}", f"master={election.master or '-'}")
        if election.state is NodeState.MASTER:
            self.restore_reason = None  # its log is the group's now
        else:
            for replica_name in list(self.feeders):
                self._stop_feeder(replica_name, f"{self.name} is {election.state.value}")
        master = election.master if election.state is NodeState.REPLICA else None
        if self.stream_master is not None and self.stream_master != master:
            self._stop_replica(f"the master is now {master or 'unknown'}")
        if master is not None and self.stream_master is None:
            if self.restore_reason is not None:
                self._restore(master, self.restore_reason)
            else:
                self._join(master)

    # -- the master's side --------------------------------------------------------------------------------
    def _pump_feeders(self) -> int:
        env, moved = self._env(), 0
        while (channel := self.stream_listener.accept(timeout=0)) is not None:
            self.handshakes.append(HandshakeAcceptor(channel, env.group, self.name))
        for handshake in list(self.handshakes):
            try:
                peer = handshake.poll(timeout=0)
            except ReplicationNetworkError as e:
                self.handshakes.remove(handshake)
                self.emit("note", f"stream connection refused: {e}")
                continue
            if peer is None:
                continue
            self.handshakes.remove(handshake)
            self.waiting.append((peer.name, handshake.channel))
        for peer_name, channel in list(self.waiting):
            try:
                first = channel.receive(timeout=0)
            except ReplicationNetworkError:
                first = None
                channel.close()
            if first is None and not channel.closed:
                continue
            self.waiting.remove((peer_name, channel))
            if first is not None:
                self._serve(peer_name, channel, first)
        moved += self._pump_file_feeders()
        if not self.feeding:
            return moved
        for replica_name, feeder in list(self.feeders.items()):
            try:
                moved += feeder.pump(timeout=0)
            except (ReplicationNetworkError, FeederError) as e:
                self._stop_feeder(replica_name, str(e))
        return moved

    def _serve(self, peer_name: str, channel, first) -> None:
        """The first message says what the connection is for: a network restore, or the stream (master only)."""
        env = self._env()
        if first.type == "FileListRequest":
            self._stop_file_feeder(peer_name, "it asked again")
            server = self.file_feeders[peer_name] = LogFileFeeder(env, channel, peer_name)
            self.emit("note", f"serving a network restore to {peer_name}: {first['reason']}")
            server.handle(first)
        elif env.state is not NodeState.MASTER:
            channel.close()  # only the master feeds; the replica asks again
        else:
            self._stop_feeder(peer_name, "it connected again")
            feeder = self.feeders[peer_name] = Feeder(env, channel, peer_name)
            try:
                feeder.handle(first)
            except (ReplicationNetworkError, FeederError) as e:
                self._stop_feeder(peer_name, str(e))

    def _pump_file_feeders(self) -> int:
        moved = 0
        for peer_name, server in list(self.file_feeders.items()):
            try:
                moved += server.pump(timeout=0)
            except ReplicationNetworkError as e:
                self._stop_file_feeder(peer_name, str(e))
                continue
            if server.closed:
                self._stop_file_feeder(peer_name, f"done: {len(server.files_sent)} files, {server.bytes_sent} bytes"
                                       if server.done else "it stopped")
        return moved

    def _stop_file_feeder(self, peer_name: str, why: str) -> None:
        server = self.file_feeders.pop(peer_name, None)
        if server is not None:
            server.close()  # the files it protected go free
            self.emit("note", f"network restore to {peer_name} ended: {why}")

    def _stop_feeder(self, replica_name: str, why: str) -> None:
        feeder = self.feeders.pop(replica_name, None)
        if feeder is not None:
            feeder.close()
            self.emit("note", f"feeder to {replica_name} stopped: {why}")

    # -- the replica's side -------------------------------------------------------------------------------
    def _join(self, master: str) -> None:
        if self.clock.now_ms() < self._next_join_ms:
            return
        try:
            channel = self.net.connect(self.streams[master], self.name, timeout=self.wait_s)
            self.joining = HandshakeInitiator(channel, self.group_name, self._env().group.node(self.name))
            self.stream_master = master
        except ReplicationNetworkError as e:
            self._next_join_ms = self.clock.now_ms() + JOIN_RETRY_MS
            if self._unreachable != master:  # said once per master, not at every retry
                self._unreachable = master
                self.emit("note", f"cannot reach master {master}: {e}")

    def _pump_replica(self) -> int:
        try:
            if self.joining is not None:
                accepted = self.joining.poll(timeout=0)
                if accepted is None:
                    return 0
                channel, self.joining = self.joining.channel, None
                self.replica = Replica(self._env(), channel, accepted, syncup=True)
                self.reported_join = False
            if self.replica is None:
                return 0
            moved = self.replica.pump(timeout=0)
        except NetworkRestoreRequiredError as e:  # no common sync point, or past the rollback limit
            master = self.stream_master
            self._stop_replica(str(e))
            self.restore_reason = str(e)
            if master is not None:
                self._restore(master, str(e))
            return 0
        except (ConnectionClosedError, FeederError, ReplicationNetworkError) as e:
            self._stop_replica(str(e))
            self._next_join_ms = self.clock.now_ms() + JOIN_RETRY_MS
            return 0
        if self.replica.start_vlsn is not None and not self.reported_join:
            self.reported_join = True
            self.emit("joined", *self._join_words(self.replica))
        return moved

    def _join_words(self, replica: Replica) -> list[str]:
        syncup = replica.syncup
        assert syncup is not None
        words = [f"master={replica.master_name}",
                 f"matchpoint={syncup.result.matchpoint_vlsn if syncup.result else 0}"]
        rolled = [v for v, _, _ in syncup.rollback.rolled_back] if syncup.rollback is not None else []
        words.append(f"rolled_back={len(rolled)}")
        if rolled:
            words.append(f"vlsns={min(rolled)}..{max(rolled)}")
        return words

    def _restore(self, master: str, why: str) -> None:
        """A network restore from ``master`` over TCP (:mod:`minidb.replication.restore`): the elections and
        the environment stop, the master's files are received, verified and installed, then the environment
        opens on them and the elections start again. A failure leaves the node's own files: it opens them again
        and tries later."""
        if self.clock.now_ms() < self._next_join_ms:
            return
        env = self._env()
        group = env.group
        self.emit("note", f"network restore from {master}: {why}")
        assert self.election is not None
        self.election.close()
        env.close()
        restore = None
        try:
            channel = self.net.connect(self.streams[master], self.name, timeout=self.wait_s)
            handshake = HandshakeInitiator(channel, self.group_name, group.node(self.name))
            deadline = time.monotonic() + self.wait_s
            while handshake.poll(timeout=POLL_S) is None:
                self._before(deadline, "a network restore's handshake")
            restore = NetworkRestore(OSDisk(self.directory), channel, self.group_name, master, reason=why)
            while not restore.done:
                restore.pump(timeout=POLL_S)
                self._before(deadline, "a network restore")
        except MinidbError as e:  # a closed connection, a refusal, a bad file, the deadline
            if restore is not None:
                restore.channel.close()
            self.emit("note", f"network restore from {master} failed: {e}; trying again later")
            self._next_join_ms = self.clock.now_ms() + JOIN_RETRY_MS
        self._open(group)
        if restore is not None and restore.done:
            self.restore_reason = None
            files = restore.received
            self.emit("restored", f"master={master}", f"files={files[0].number}..{files[-1].number}",
                      f"bytes={restore.bytes_received}", "checksums=verified", *self._range_words())

    def _before(self, deadline: float, what: str) -> None:
        if time.monotonic() > deadline:
            raise MinidbError(f"node {self.name}: {what} did not finish within {self.wait_s:g} s")

    def _stop_replica(self, why: str) -> None:
        link = self.replica or self.joining
        if link is not None:
            link.channel.close()
            self.emit("note", f"stream from {self.stream_master} stopped: {why}")
        self.replica = self.joining = self.stream_master = None

    @property
    def synced(self) -> bool:
        """The node is the master, or a replica whose stream has synced up."""
        env = self._env()
        return env.state is NodeState.MASTER or (self.replica is not None and self.replica.start_vlsn is not None)

    # -- commands -----------------------------------------------------------------------------------------
    def wait_until(self, done: Callable[[], bool], what: str) -> None:
        """Serve the sockets until ``done()``; an error naming ``what`` after ``wait_s`` seconds."""
        deadline = time.monotonic() + self.wait_s
        while not done():
            if time.monotonic() > deadline:
                raise MinidbError(f"node {self.name}: {what} did not happen within {self.wait_s:g} s")
            self.step()

    def write(self, start: int, count: int) -> None:
        env = self._env()
        env.check_master("write")
        required = WRITE_DURABILITY.replica_ack.required_acks(len(env.group.nodes))
        self.wait_until(lambda: len(env.feeder_txns.active_replicas()) >= required,
                        f"{required} replica(s) streaming from master {self.name}")
        first, db = env.range.last + 1, env.database(DEMO_DB)
        for i in range(start, start + count):
            txn = env.begin(WRITE_DURABILITY)
            db.put(*record(i, self.name), txn=txn)
            env.commit(txn, clock=self.clock, timeout_ms=int(self.wait_s * 1000), pump=self.step)
        self.emit("wrote", f"records={count}", f"vlsns={first}..{env.range.last}",
                  f"acks={WRITE_DURABILITY.replica_ack.name}")

    def tail(self, start: int, count: int) -> None:
        env = self._env()
        env.check_master("write a tail")
        self.feeding = False  # from here on no replica sees anything this node logs
        first, db = env.range.last + 1, env.database(DEMO_DB)
        self.tail_txn = env.begin()
        for i in range(start, start + count):
            db.put(*record(i, self.name), txn=self.tail_txn)
        env.sync()
        self.emit("tail", f"records={count}", f"vlsns={first}..{env.range.last}")

    def digest(self, vlsn: int) -> None:
        env = self._env()
        self.wait_until(lambda: env.range.last >= vlsn and self.synced, f"reaching VLSN {vlsn}")
        self.emit("digest", *(f"{k}={v}" for k, v in state_digest(env).items()))

    def command(self, line: str) -> bool:
        """Carry out one control line; False once the node should stop (``quit``)."""
        words = line.split()
        if not words:
            return True
        verb, args = words[0], words[1:]
        try:
            if verb == "quit":
                return False
            if verb == "group":
                self.configure(parse_members(args))
            elif verb in ("write", "tail", "digest") and all(a.isdigit() for a in args) and \
                    len(args) == (1 if verb == "digest" else 2):
                getattr(self, verb)(*(int(a) for a in args))
            else:
                raise UserError(f"not a command: {line.strip()!r} (group NAME=E/S ..., write START COUNT, "
                                "tail START COUNT, digest VLSN, quit)")
        except MinidbError as e:
            self.emit("error", str(e))
        return True

    def serve(self, control: int) -> None:
        """Read commands from the descriptor ``control`` and run the node until ``quit`` or the end of input."""
        self.listening()
        pending = b""
        while True:
            if self.wait(POLL_S, control):
                data = os.read(control, 4096)
                if not data:
                    return
                pending += data
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if not self.command(line.decode("utf-8", "replace")):
                        return
            self.pump()

    def close(self) -> None:
        """Stop the streams and the elections, close the environment (an open tail is aborted first)."""
        for replica_name in list(self.feeders):
            self._stop_feeder(replica_name, "the node stops")
        self._stop_replica("the node stops")
        for peer_name in list(self.file_feeders):
            self._stop_file_feeder(peer_name, "the node stops")
        for handshake in self.handshakes:
            handshake.channel.close()
        for _, channel in self.waiting:
            channel.close()
        if self.election is not None:
            self.election.close()
        else:
            self.election_listener.close()
        self.stream_listener.close()
        if self.env is not None and not self.env.closed:
            if self.tail_txn is not None:
                self.tail_txn.abort()
            self.env.close()
        self.emit("bye")


__all__ = ["GroupNode", "NodeClock", "state_digest", "parse_event", "parse_members", "record", "DEMO_DB",
           "WRITE_DURABILITY", "NODE_ELECTIONS"]
