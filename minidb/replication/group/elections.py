"""Elections: how the nodes of a group choose their master (JE's ``Elections``, run as Paxos).

When a group has no master (it starts, or a replica stops hearing the
master's heartbeats), its nodes elect one by JE's rule, made safe by terms:
the node whose log is the most up to date wins, compared first by the term
of the last ``TermStart`` in its log (the entry a newly elected master logs
first, :mod:`.logdef`; 0 for none), then by how far it reaches (its VLSN
range's ``last_txn_end``, the last Commit or Abort it holds); among equally
up-to-date nodes the higher priority wins, then the name that sorts first;
a node of priority 0 never becomes master.

Why the term comes first: a master that was cut off or crashed can hold a
long tail that nobody acknowledged, reaching further than the commits a
newer master had a majority acknowledge. Compared by ``last_txn_end``
alone, it would win the next election, and the others would roll their
acknowledged commits back to match it. A commit acknowledged by a majority
in term ``t`` is in the log of a majority, after the ``TermStart`` of ``t``;
any majority of promises includes one of them; and a log whose last
``TermStart`` is ``t`` holds a prefix of term ``t``'s master's log, while one
whose last ``TermStart`` is newer came from a master that (by the same
argument, term by term) held the commit too. So the winner holds every
acknowledged commit (the argument Raft makes for its log comparison).

Every node plays three roles (JE's names):

- **Proposer** (:class:`ElectionNode` while it runs a round): picks a
  *proposal number* ``(term, counter, proposer)`` and sends ``Propose`` to
  every node (itself included). Proposal numbers are compared in that order,
  so two nodes never make equal ones. A *term* is one election: the master
  it decides is the master of that term, and a new election takes the
  highest term known plus one. A round that does not decide within
  ``retry_ms`` on the clock is retried with a bigger counter.
- **Acceptor** (:class:`Acceptor`): answers ``Propose`` with a ``Promise``
  never to accept a lower proposal, unless it already promised a higher one
  (then a refusal naming that one). The promise carries what the acceptor
  already accepted in this term, and its suitability (``last_txn_end``,
  priority, name). It answers ``Accept`` with ``Accepted`` unless it
  promised a higher proposal. Both answers are sent only after the new state
  is durable on the node's disk.
- **Learner**: is told the result (``Result``: term and master) and changes
  the node's state: the master becomes MASTER (on a replicated environment:
  :meth:`~minidb.replication.env.ReplicatedEnvironment.become_master`, so it
  alone allocates VLSNs), the others REPLICA of it. A learner that hears of
  an older term than its own answers with its own result, so a master cut
  off by a partition steps down when it meets the newer one. A node that
  restarts knows no term but what its acceptor promised: it does not take a
  master of an older term from one result (that master may be stale, its
  log behind what this node acknowledged as master or replica of a newer
  term, and following it would roll acknowledged commits back); without a
  master it follows an older term's master only when a majority of the
  nodes name it (a majority follows it, so no newer master can be elected
  without one of them), which also lets a node whose own failed rounds
  raised its promise rejoin a working master.

A round: once a majority has promised (and the others answered or
``promise_wait_ms`` passed), the proposer chooses the value. If an acceptor
reported an accepted value in this term, the value of the highest such
proposal (Paxos: a value that may have been decided is never changed);
otherwise the best node of those that promised, by the rule above (none
electable: nobody is elected, and :attr:`ElectionNode.failure` says why). It
sends ``Accept`` with that value; a majority of ``Accepted`` decides it, and
the proposer sends ``Result`` to every node.

Invariants:

- at most one master per term: any two majorities share an acceptor, and an
  acceptor's promise and acceptance survive its crashes (below), so a second
  proposal in a term learns the first value and proposes it again;
- once a value is decided for a term it never changes (same argument);
- a minority elects nobody: a round needs a majority of promises and of
  accepts, whatever the network does;
- duplicated, delayed and reordered messages are harmless: an answer to any
  proposal but the current round's is ignored, and a repeated request gets
  the same answer without changing anything;
- a node that has a live master (it heard its heartbeat within
  ``heartbeat_timeout_ms``, or it is the master) answers a ``Propose`` with
  the ``Result`` it knows instead of a promise, so one node that lost touch
  cannot depose a working master; and it answers a heartbeat from a node
  that is not its master with that ``Result`` too;
- a node that lost its master (no heartbeat for ``heartbeat_timeout_ms``)
  does not learn that same master of that same term again from another
  node's ``Result`` for ``heartbeat_timeout_ms``: a node that has not noticed
  the loss yet will have by then, unless the master lives. Without this, two
  replicas that time out one after the other keep telling each other the
  dead master is alive, and never elect a new one.

The acceptor's durable state, the file ``election.acceptor`` in the node's
environment directory (integers little-endian, struct ``"<4sBBBBQQQQ"`` for
the first 40 bytes)::

    offset  size  field             meaning
    ------  ----  ----------------  -------------------------------------------
       0      4   magic             b"MDBA" (minidb acceptor)
       4      1   version           1
       5      1   promised_len      p: bytes of the promised proposer's name (0: none)
       6      1   accepted_len      a: bytes of the accepted proposer's name (0: none)
       7      1   value_len         v: bytes of the accepted value, a master's name
       8      8   promised_term     the promised proposal ...
      16      8   promised_counter
      24      8   accepted_term     the accepted proposal ...
      32      8   accepted_counter
      40      p   promised_by       UTF-8
    40+p      a   accepted_by       UTF-8
  40+p+a      v   value             UTF-8
 40+p+a+v     4   checksum          CRC-32 of every byte before it

It is written whole to ``election.acceptor.tmp``, fsynced, then renamed over
the old one (a rename is durable at once), so a crash leaves the old state or
the new, never a mix; a leftover ``.tmp`` is deleted when the node starts. A
damaged file is an :class:`~minidb.replication.errors.AcceptorStateCorruptionError`
naming the offset: forgetting a promise could elect two masters in a term.

Stepped and deterministic, like the feeder: nothing runs by itself.
:meth:`ElectionNode.pump` reads what arrived on its connections, answers it,
and looks at the clock (an object with ``now_ms()``, e.g. the log store's
``ManualClock``) for timeouts: a round to retry, a heartbeat to send, a
master lost. Connections to the other nodes go through the handshake
(:mod:`.network`), so a node of another group or a bad frame is refused
before any election message is read. On the in-memory network the script
moves the messages (``net.deliver()``); over TCP the same code runs with
real sockets. Example, three nodes, nothing written yet::

    nodes = [ElectionNode(group, name, net, SimDisk(name), clock) for name in ("n1", "n2", "n3")]
    nodes[1].start_election()      # n2 proposes (1, 1, n2) to n1, n2, n3
    for _ in range(6):             # Propose, Promise, Accept, Accepted, Result move: one a step
        for node in nodes:
            node.pump()
        net.deliver()
    nodes[0].state, nodes[0].term  # NodeState.MASTER, 1  (equal logs and priorities: the first name, n1)

After an election, connecting feeders and replicas is the caller's job:
:meth:`ElectionNode.stream_links` says which.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from minidb.io import Disk
from minidb.replication.errors import (
    AcceptorStateCorruptionError,
    ElectionError,
    HandshakeError,
    ReplicationNetworkError,
)
from minidb.replication.group.membership import NodeState, RepGroup
from minidb.replication.stream import wire
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator
from minidb.stats import Trace

if TYPE_CHECKING:
    from minidb.replication.env import ReplicatedEnvironment

ACCEPTOR_FILE = "election.acceptor"
ACCEPTOR_TMP = ACCEPTOR_FILE + ".tmp"
ACCEPTOR_MAGIC = b"MDBA"
ACCEPTOR_VERSION = 1
_STATE = struct.Struct("<4sBBBBQQQQ")  # 40 bytes, see the module documentation
_CRC = struct.Struct("<I")


# -- proposals, suitability, the rule -----------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Proposal:
    """A proposal number: compared by term, then counter, then the proposer's name (unique per node)."""

    term: int
    counter: int
    proposer: str

    def fields(self) -> dict:
        return {"term": self.term, "counter": self.counter, "proposer": self.proposer}

    def __str__(self) -> str:
        return f"({self.term}, {self.counter}, {self.proposer})"


def proposal_of(message: wire.Message) -> Proposal:
    return Proposal(message["term"], message["counter"], message["proposer"])


@dataclass(frozen=True)
class Suitability:
    """What a node reports about itself in a promise: how far its log reaches, its priority, its name."""

    node_name: str
    last_txn_end: int
    priority: int
    last_term: int = 0  # the term of the last TermStart in its log

    @property
    def electable(self) -> bool:
        return self.priority > 0


def choose_master(candidates: list[Suitability]) -> Suitability | None:
    """The most up-to-date log (its last term, then ``last_txn_end``), then the highest priority, then the first
    name; never priority 0 (see the module documentation)."""
    electable = [c for c in candidates if c.electable]
    if not electable:
        return None
    return min(electable, key=lambda c: (-c.last_term, -c.last_txn_end, -c.priority, c.node_name))


# -- the acceptor and its durable state ---------------------------------------------------------------------
@dataclass(frozen=True)
class AcceptorState:
    """What an acceptor promised and accepted (for the latest term it knows)."""

    promised: Proposal | None = None
    accepted: Proposal | None = None
    value: str | None = None

    def encode(self) -> bytes:
        promised_by = self.promised.proposer.encode() if self.promised else b""
        accepted_by = self.accepted.proposer.encode() if self.accepted else b""
        value = (self.value or "").encode()
        body = _STATE.pack(ACCEPTOR_MAGIC, ACCEPTOR_VERSION, len(promised_by), len(accepted_by), len(value),
                           self.promised.term if self.promised else 0, self.promised.counter if self.promised else 0,
                           self.accepted.term if self.accepted else 0, self.accepted.counter if self.accepted else 0)
        body += promised_by + accepted_by + value
        return body + _CRC.pack(zlib.crc32(body))

    @classmethod
    def decode(cls, data: bytes, where: str) -> "AcceptorState":
        if len(data) < _STATE.size + _CRC.size:
            raise AcceptorStateCorruptionError(f"{where}: truncated acceptor state: {len(data)} bytes, at least "
                                               f"{_STATE.size + _CRC.size} expected")
        magic, version, p, a, v, p_term, p_counter, a_term, a_counter = _STATE.unpack_from(data, 0)
        if magic != ACCEPTOR_MAGIC:
            raise AcceptorStateCorruptionError(f"{where}: bad magic {magic!r} at offset 0 (expected "
                                               f"{ACCEPTOR_MAGIC!r})")
        if version != ACCEPTOR_VERSION:
            raise AcceptorStateCorruptionError(f"{where}: acceptor state version {version} at offset 4 "
                                               f"(this node reads {ACCEPTOR_VERSION})")
        end = _STATE.size + p + a + v
        if len(data) != end + _CRC.size:
            raise AcceptorStateCorruptionError(f"{where}: {len(data)} bytes, the lengths at offsets 5-7 say "
                                               f"{end + _CRC.size}")
        (stored,) = _CRC.unpack_from(data, end)
        if zlib.crc32(data[:end]) != stored:
            raise AcceptorStateCorruptionError(f"{where}: bad checksum at offset {end}")
        raw = data[_STATE.size:end]
        try:
            promised_by, accepted_by, value = raw[:p].decode(), raw[p:p + a].decode(), raw[p + a:].decode()
        except UnicodeDecodeError:
            raise AcceptorStateCorruptionError(f"{where}: names at offset {_STATE.size} are not UTF-8") from None
        return cls(Proposal(p_term, p_counter, promised_by) if p else None,
                   Proposal(a_term, a_counter, accepted_by) if a else None, value if a else None)


class Acceptor:
    """Paxos's acceptor, its state on ``disk`` (JE's ``Acceptor``; see the module documentation)."""

    def __init__(self, disk: Disk):
        self.disk = disk
        self.writes = 0  # how many times the state was made durable
        if disk.exists(ACCEPTOR_TMP):
            disk.delete(ACCEPTOR_TMP)  # a crash in the middle of a save: the old state stands
        if disk.exists(ACCEPTOR_FILE):
            with disk.open(ACCEPTOR_FILE) as f:
                self.state = AcceptorState.decode(f.read_all(), disk.where(ACCEPTOR_FILE))
        else:
            self.state = AcceptorState()

    def on_propose(self, proposal: Proposal) -> bool:
        """Promise ``proposal`` (durably) unless a higher one was promised."""
        promised = self.state.promised
        if promised is not None and proposal <= promised:
            return proposal == promised  # a repeated Propose gets the same answer
        same_term = self.state.accepted is not None and self.state.accepted.term == proposal.term
        self._save(AcceptorState(proposal, self.state.accepted if same_term else None,
                                 self.state.value if same_term else None))
        return True

    def on_accept(self, proposal: Proposal, value: str) -> bool:
        """Accept ``value`` under ``proposal`` (durably) unless a higher proposal was promised."""
        promised = self.state.promised
        if promised is not None and proposal < promised:
            return False
        if self.state.accepted != proposal or self.state.value != value:
            self._save(AcceptorState(proposal, proposal, value))
        return True

    def accepted_in(self, term: int) -> tuple[Proposal | None, str | None]:
        accepted = self.state.accepted
        return (accepted, self.state.value) if accepted is not None and accepted.term == term else (None, None)

    def _save(self, state: AcceptorState) -> None:
        with self.disk.open(ACCEPTOR_TMP, create=True) as f:
            f.truncate(0)
            f.write(0, state.encode())
            f.fsync()
        self.disk.rename(ACCEPTOR_TMP, ACCEPTOR_FILE)
        self.state = state
        self.writes += 1


# -- one node's election participant ------------------------------------------------------------------------
@dataclass(frozen=True)
class ElectionConfig:
    """Election timing, in milliseconds of the node's clock (the time-outs of JE's elections, minidb's values)."""

    promise_wait_ms: int = 200  # after a majority promised: how long to wait for the other nodes
    retry_ms: int = 1000  # a round not decided by then is retried with a bigger proposal
    stagger_ms: int = 300  # the i-th node of the group waits i * stagger_ms more (no two retry together)
    heartbeat_ms: int = 200  # how often the master sends heartbeats
    heartbeat_timeout_ms: int = 1000  # a replica that heard nothing from its master for this long has lost it

    def __post_init__(self) -> None:
        for name in ("promise_wait_ms", "retry_ms", "stagger_ms", "heartbeat_ms", "heartbeat_timeout_ms"):
            value, least = getattr(self, name), 0 if name == "stagger_ms" else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ElectionError(f"election setting {name} is a whole number of milliseconds (at least {least}), "
                                    f"not {value!r}")


@dataclass
class _Round:
    proposal: Proposal
    started_ms: int
    phase: str = "propose"  # then "accept"
    promises: dict[str, wire.Message] = field(default_factory=dict)
    majority_at_ms: int | None = None
    value: str | None = None
    accepted_by: set[str] = field(default_factory=set)


class ElectionNode:
    """One node's proposer, acceptor and learner, on one network (see the module documentation)."""

    def __init__(self, group: RepGroup, name: str, network, disk: Disk, clock, config: ElectionConfig | None = None,
                 last_txn_end: Callable[[], int] | None = None, listener=None,
                 env: "ReplicatedEnvironment | None" = None, last_term: Callable[[], int] | None = None):
        self.group = group
        self.node = group.node(name)
        self.name = name
        self.network = network
        self.clock = clock
        self.config = config or ElectionConfig()
        self.env = env
        self._last_txn_end = last_txn_end or (lambda: 0)
        self._last_term = last_term or (lambda: 0)
        self.acceptor = Acceptor(disk)
        promised = self.acceptor.state.promised
        self._known_term = promised.term if promised is not None else 0  # a restart knows its promise
        self._told: dict[tuple[int, str], set[str]] = {}  # an older (term, master) -> the nodes naming it
        self.listener = listener if listener is not None else network.listen(self.node.address)
        self.trace = Trace()
        self.state = NodeState.UNKNOWN
        self.master: str | None = None
        self.term = 0  # the term of the last result learned
        self.learned: list[tuple[int, str]] = []  # every (term, master) learned, in order
        self.decided: list[tuple[int, str]] = []  # every (term, master) this node's rounds decided
        self.failure: str | None = None  # why the last round elected nobody
        self.round: _Round | None = None
        self._seen: Proposal | None = None  # the highest proposal a refusal named
        self._lost: tuple[int, str | None, int] | None = None  # (term, master, when): the master this node lost
        self._rank = [n.name for n in group.nodes].index(name)
        now = clock.now_ms()
        self._last_heard_ms = now
        self._next_heartbeat_ms = now
        self._next_election_ms = now + self._delay()
        self._out: dict[str, HandshakeInitiator] = {}
        self._in: list[HandshakeAcceptor] = []
        self._loopback: list[wire.Message] = []

    @classmethod
    def for_env(cls, env: "ReplicatedEnvironment", network, clock, config: ElectionConfig | None = None,
                listener=None) -> "ElectionNode":
        """The election node of a replicated environment: its range's last_txn_end, its disk, its state."""
        if env.group is None:
            raise ElectionError(f"{env.where()} is not in a group: there is nobody to elect")
        return cls(env.group, env.node_name, network, env.disk, clock, config,
                   lambda: env.range.last_txn_end, listener, env, lambda: env.last_term)

    # -- stepping ---------------------------------------------------------------------------------------
    def pump(self) -> int:
        """Handle every message that arrived, then the clock's timeouts; how many messages were handled."""
        handled = 0
        while (channel := self.listener.accept(timeout=0)) is not None:
            self._in.append(HandshakeAcceptor(channel, self.group, self.name))
        for handshake in [*self._in, *self._out.values()]:
            handled += self._read(handshake)
        while self._loopback:
            self._dispatch(self._loopback.pop(0), self.name, None)
            handled += 1
        self._tick(self.clock.now_ms())
        return handled

    def _read(self, handshake: HandshakeAcceptor | HandshakeInitiator) -> int:
        """Handle what arrived on one connection, once its handshake succeeded (the peer is named by it)."""
        handled, channel = 0, handshake.channel
        try:
            peer = handshake.poll(timeout=0)  # the acceptor's side names a RepNode, the initiator's a name
            if peer is None:
                return 0
            while (message := channel.receive(timeout=0)) is not None:
                if message.group != self.group.name:
                    raise HandshakeError(f"{channel.where}: a frame of group {message.group!r} on a connection "
                                         f"of group {self.group.name!r}")
                self._dispatch(message, peer if isinstance(peer, str) else peer.name, channel)
                handled += 1
        except ReplicationNetworkError as e:  # a refused handshake, a bad frame, a closed connection
            self.trace.emit("%s: connection %s dropped: %s", self.name, channel.where, e)
            self._drop(handshake)
        return handled

    def _drop(self, handshake) -> None:
        handshake.channel.close()
        if handshake in self._in:
            self._in.remove(handshake)
        for peer, initiator in list(self._out.items()):
            if initiator is handshake:
                del self._out[peer]

    def _tick(self, now: int) -> None:
        config = self.config
        if self.state is NodeState.MASTER and now >= self._next_heartbeat_ms:
            self._next_heartbeat_ms = now + config.heartbeat_ms
            vlsn = self.env.range.last if self.env is not None else self._last_txn_end()
            for node in self.group.nodes:
                if node.name != self.name:
                    self._send(node.name, "Heartbeat", master_vlsn=vlsn, time_ms=now)
        if self.state is NodeState.REPLICA and now - self._last_heard_ms > config.heartbeat_timeout_ms:
            self.trace.emit("%s: no heartbeat from master %s for %d ms: master lost", self.name, self.master,
                            now - self._last_heard_ms)
            self._lost = (self.term, self.master, now)
            self._set_state(NodeState.UNKNOWN, None)
            self.start_election()
        current = self.round
        if current is not None and current.phase == "propose":
            self._finish_promises(now)
        if current is not None and self.round is current and now >= current.started_ms + self._delay():
            last = max(current.proposal, self._seen or current.proposal)
            self.trace.emit("%s: round %s undecided after %d ms: retrying", self.name, current.proposal,
                            now - current.started_ms)
            self._start_round(Proposal(last.term, last.counter + 1, self.name))
        elif self.round is None and self.master is None and now >= self._next_election_ms:
            self.start_election()

    def _delay(self) -> int:
        return self.config.retry_ms + self._rank * self.config.stagger_ms

    # -- sending ----------------------------------------------------------------------------------------
    def _send(self, peer: str, type_name: str, **values) -> None:
        frame = wire.encode(self.group.name, type_name, **values)
        if peer == self.name:
            self._loopback.append(wire.decode(frame))
            return
        for _ in range(2):  # a dead connection is replaced once
            initiator = self._out.get(peer)
            try:
                if initiator is None or initiator.channel.closed:
                    channel = self.network.connect(self.group.node(peer).address, self.name)
                    initiator = self._out[peer] = HandshakeInitiator(channel, self.group.name, self.node)
                initiator.channel.send(frame)
                return
            except ReplicationNetworkError as e:
                if initiator is not None:
                    self._drop(initiator)
                last_error = e
        self.trace.emit("%s: cannot send %s to %s: %s", self.name, type_name, peer, last_error)

    def _reply(self, channel, type_name: str, **values) -> None:
        if channel is None:  # an answer to this node's own request
            self._send(self.name, type_name, **values)
            return
        try:
            channel.send(wire.encode(self.group.name, type_name, **values))
        except ReplicationNetworkError as e:
            self.trace.emit("%s: cannot answer %s on %s: %s", self.name, type_name, channel.where, e)

    def _dispatch(self, message: wire.Message, peer: str | None, channel) -> None:
        kind = message.type
        if kind == "Propose":
            self._on_propose(message, channel)
        elif kind == "Accept":
            self._on_accept(message, channel)
        elif kind == "Promise":
            self._on_promise(message, peer)
        elif kind == "Accepted":
            self._on_accepted(message, peer)
        elif kind == "Result":
            self._on_result(message, peer)
        elif kind == "Heartbeat":
            if peer is not None and peer == self.master:
                self._last_heard_ms = self.clock.now_ms()
            elif self.master is not None:
                self._reply(channel, "Result", term=self.term, master=self.master, counter=0, proposer="")

    # -- the acceptor's side ----------------------------------------------------------------------------
    def has_live_master(self) -> bool:
        """This node is the master, or heard its master within the heartbeat timeout."""
        if self.state is NodeState.MASTER:
            return True
        return (self.state is NodeState.REPLICA
                and self.clock.now_ms() - self._last_heard_ms <= self.config.heartbeat_timeout_ms)

    def _on_propose(self, message: wire.Message, channel) -> None:
        proposal = proposal_of(message)
        if self.has_live_master() and proposal.proposer != self.name:
            self._reply(channel, "Result", term=self.term, master=self.master, counter=0, proposer="")
            return
        promised = self.acceptor.on_propose(proposal)
        current = self.acceptor.state.promised
        accepted, value = self.acceptor.accepted_in(proposal.term)
        self._reply(channel, "Promise", **proposal.fields(), promised=int(promised),
                    promised_term=current.term if current else 0, promised_counter=current.counter if current else 0,
                    promised_by=current.proposer if current else "",
                    accepted_counter=accepted.counter if accepted else 0,
                    accepted_by=accepted.proposer if accepted else "", accepted_value=value or "",
                    last_txn_end=self._last_txn_end(), priority=self.node.priority, node_name=self.name,
                    last_term=self._last_term())

    def _on_accept(self, message: wire.Message, channel) -> None:
        proposal = proposal_of(message)
        accepted = self.acceptor.on_accept(proposal, message["master"])
        current = self.acceptor.state.promised
        self._reply(channel, "Accepted", **proposal.fields(), accepted=int(accepted),
                    promised_term=current.term if current else 0, promised_counter=current.counter if current else 0,
                    promised_by=current.proposer if current else "", node_name=self.name)

    # -- the proposer's side ----------------------------------------------------------------------------
    def start_election(self) -> Proposal:
        """Start a round for a new term (the highest term this node knows, plus one); returns its proposal."""
        known = max([self.term] + [p.term for p in (self.acceptor.state.promised, self._seen) if p is not None])
        return self._start_round(Proposal(known + 1, 1, self.name))

    def _start_round(self, proposal: Proposal) -> Proposal:
        self.round = _Round(proposal, self.clock.now_ms())
        self.failure = None
        self.trace.emit("%s: round %s: Propose to %s", self.name, proposal,
                        ", ".join(n.name for n in self.group.nodes))
        for node in self.group.nodes:
            self._send(node.name, "Propose", **proposal.fields())
        return proposal

    def _answers(self, message: wire.Message, phase: str) -> _Round | None:
        """The current round if ``message`` answers it in ``phase`` (anything else is stale: ignored)."""
        current = self.round
        if current is None or current.phase != phase or proposal_of(message) != current.proposal:
            return None
        if not message["promised" if phase == "propose" else "accepted"]:
            refused_by = Proposal(message["promised_term"], message["promised_counter"], message["promised_by"])
            self._seen = max(self._seen or refused_by, refused_by)
            self.trace.emit("%s: round %s refused by %s (promised %s)", self.name, current.proposal,
                            message["node_name"], refused_by)
            return None
        return current

    def _on_promise(self, message: wire.Message, peer: str | None) -> None:
        current = self._answers(message, "propose")
        if current is None or peer != message["node_name"]:
            return
        current.promises[peer] = message
        if len(current.promises) >= self.group.majority and current.majority_at_ms is None:
            current.majority_at_ms = self.clock.now_ms()
        self._finish_promises(self.clock.now_ms())

    def _finish_promises(self, now: int) -> None:
        current = self.round
        assert current is not None
        if current.majority_at_ms is None:
            return
        if len(current.promises) < len(self.group.nodes) and now < current.majority_at_ms + self.config.promise_wait_ms:
            return
        value = self._choose_value(current)
        if value is None:
            candidates = ", ".join(sorted(current.promises))
            self.failure = (f"term {current.proposal.term}: nobody elected: no node that answered ({candidates}) "
                            "can become master (priority 0 never does)")
            self.trace.emit("%s: %s", self.name, self.failure)
            self.round = None
            self._next_election_ms = now + self._delay()
            return
        current.phase, current.value = "accept", value
        self.trace.emit("%s: round %s: promised by %s; Accept master %s", self.name, current.proposal,
                        ", ".join(sorted(current.promises)), value)
        for name in sorted(current.promises):
            self._send(name, "Accept", **current.proposal.fields(), master=value)

    @staticmethod
    def _choose_value(current: _Round) -> str | None:
        accepted = [m for m in current.promises.values() if m["accepted_counter"]]
        if accepted:  # a value that may be decided already is proposed again
            return max(accepted, key=lambda m: (m["accepted_counter"], m["accepted_by"]))["accepted_value"]
        winner = choose_master([Suitability(m["node_name"], m["last_txn_end"], m["priority"], m["last_term"])
                                for m in current.promises.values()])
        return winner.node_name if winner is not None else None

    def _on_accepted(self, message: wire.Message, peer: str | None) -> None:
        current = self._answers(message, "accept")
        if current is None or peer != message["node_name"]:
            return
        current.accepted_by.add(peer)
        if len(current.accepted_by) < self.group.majority:
            return
        proposal, value = current.proposal, current.value
        assert value is not None
        self.round = None
        self.decided.append((proposal.term, value))
        self.trace.emit("%s: round %s decided: master %s for term %d (accepted by %s)", self.name, proposal, value,
                        proposal.term, ", ".join(sorted(current.accepted_by)))
        for node in self.group.nodes:
            self._send(node.name, "Result", term=proposal.term, master=value, counter=proposal.counter,
                       proposer=proposal.proposer)

    # -- the learner's side -----------------------------------------------------------------------------
    def _on_result(self, message: wire.Message, peer: str | None = None) -> None:
        term, master = message["term"], message["master"]
        if master not in self.group:
            self.trace.emit("%s: ignored a result naming %r, not a member", self.name, master)
            return
        if term < self._known_term and self.master is None:  # older than this node's promise
            told = self._told.setdefault((term, master), set())
            told.add(peer or self.name)
            if len(told) < self.group.majority:
                return
            self.trace.emit("%s: %s of term %d is named by a majority (%s): following it", self.name, master, term,
                            ", ".join(sorted(told)))
        if term < self.term or (term == self.term and self.master is not None):
            return  # old news, or a repeat
        if self._lost is not None and self._lost[:2] == (term, master) and \
                self.clock.now_ms() - self._lost[2] <= self.config.heartbeat_timeout_ms:
            # A node that has not noticed yet: after heartbeat_timeout_ms it will have, unless the master lives.
            self.trace.emit("%s: ignored term %d: master %s, lost %d ms ago", self.name, term, master,
                            self.clock.now_ms() - self._lost[2])
            return
        self.term = term
        self.round = None
        self.learned.append((term, master))
        self.trace.emit("%s: learned term %d: master %s", self.name, term, master)
        self._set_state(NodeState.MASTER if master == self.name else NodeState.REPLICA, master)

    def _set_state(self, state: NodeState, master: str | None) -> None:
        self.state, self.master = state, master
        now = self.clock.now_ms()
        self._last_heard_ms = self._next_heartbeat_ms = now
        if self.env is not None and not self.env.closed:
            if state is NodeState.MASTER:
                self.env.become_master(term=self.term)
            elif state is NodeState.REPLICA:
                self.env.become_replica(master)
            else:
                self.env.become_unknown()

    # -- after an election ------------------------------------------------------------------------------
    def stream_links(self) -> list[tuple[str, str]]:
        """(feeder's node, replica's node) pairs this node takes part in: what the caller connects next."""
        if self.state is NodeState.MASTER:
            return [(self.name, n.name) for n in self.group.nodes if n.name != self.name]
        if self.state is NodeState.REPLICA and self.master is not None:
            return [(self.master, self.name)]
        return []

    def close(self) -> None:
        """Close the listener and every connection (a node that stops or crashes)."""
        for handshake in [*self._in, *self._out.values()]:
            handshake.channel.close()
        self._in, self._out = [], {}
        self.listener.close()

    def __repr__(self) -> str:
        return f"ElectionNode({self.name}, {self.state.value}, term {self.term}, master {self.master})"


__all__ = ["ElectionNode", "ElectionConfig", "Acceptor", "AcceptorState", "Proposal", "Suitability",
           "choose_master", "ACCEPTOR_FILE"]
