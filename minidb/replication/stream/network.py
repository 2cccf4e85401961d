"""Transports for the replication group, with one interface, and the handshake that opens a connection.

Nodes talk over *channels* (JE's ``NamedChannel``): one end of a
connection, which sends and receives frames of :mod:`.wire`. Two transports
give the same interface::

    net.listen(address)            -> Listener   .address, .accept(timeout) -> Channel | None, .close()
    net.connect(address, local)    -> Channel    .send(frame), .receive(timeout) -> Message | None, .close()
    net.deliver()                  -> int        move the messages in flight (the in-memory network)

- :class:`InMemoryNetwork`: deterministic and scripted, for tests and
  notebooks. A frame that is sent stays *in flight* until the script moves
  it: :meth:`~InMemoryNetwork.deliver` (all, or those of one link, or the
  first ``count``), :meth:`~InMemoryNetwork.delay` (hold a link for some
  deliveries), :meth:`~InMemoryNetwork.drop` (lose what is in flight),
  :meth:`~InMemoryNetwork.partition` (frames between the sides stay in flight
  and no connection crosses until :meth:`~InMemoryNetwork.heal`; a
  partition cuts *nodes*: the address ``n1/feeder``, a second listener of
  node ``n1``, is on n1's side). No
  threads, no clocks: ``receive`` returns None when nothing was delivered.
  Frames travel as bytes, so the in-memory network checks the wire format
  exactly as TCP does.
- :class:`TcpNetwork`: real sockets (addresses ``host:port``, port 0 picks
  one); ``receive`` blocks up to its timeout, then returns None;
  ``deliver`` does nothing (the kernel moves bytes by itself).

A channel decodes what it receives; a bad frame raises
:class:`~minidb.replication.errors.WireFormatError` naming the channel
(``n1 <- n2``) and the byte offset. A closed connection raises
:class:`~minidb.replication.errors.ConnectionClosedError`.

**The handshake** (JE's replica handshake, reduced). The connecting node
sends ``Handshake`` (in a frame naming its group: its node name and
priority); the accepting node checks, in this order, that the frame is
valid and of its wire version, that the group is its own, and that the node
is a member of the group; it answers ``HandshakeOk`` with its own name, or
``HandshakeRefused`` with the reason, closes the connection and raises
:class:`~minidb.replication.errors.HandshakeError`. Nothing is handed to a
feeder or written before the handshake succeeds. Both sides are small state
machines stepped by ``poll``, so the same code runs on the scripted network
(deliver, then poll) and over TCP (poll blocks up to a timeout)::

    acceptor = HandshakeAcceptor(listener.accept(), group, "n1")
    initiator = HandshakeInitiator(net.connect("n1", "n2"), "bank", group.node("n2"))
    net.deliver(); acceptor.poll()      # -> RepNode n2 (HandshakeOk sent)
    net.deliver(); initiator.poll()     # -> "n1"
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Iterable

from minidb.replication.errors import (
    ConnectionClosedError,
    GroupConfigError,
    HandshakeError,
    ReplicationNetworkError,
    WireFormatError,
)
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream import wire


# -- the in-memory network -------------------------------------------------------------------------------------
@dataclass
class InFlight:
    """A frame sent and not yet delivered."""

    seq: int
    src: str
    dst: str
    frame: bytes
    to: "MemoryChannel"

    def __str__(self) -> str:
        try:
            what = str(wire.decode(self.frame))
        except WireFormatError:
            what = f"{len(self.frame)} bytes"
        return f"#{self.seq} {self.src} -> {self.dst}: {what}"


class MemoryChannel:
    """One end of a connection on the in-memory network."""

    def __init__(self, net: "InMemoryNetwork", local: str, peer: str):
        self.net = net
        self.local = local
        self.peer = peer
        self.other: MemoryChannel | None = None
        self.inbox: list[bytes] = []
        self.closed = False

    @property
    def where(self) -> str:
        return f"{self.local} <- {self.peer}"

    def send(self, frame: bytes) -> None:
        if self.closed or self.other is None or self.other.closed:
            raise ConnectionClosedError(f"{self.local} -> {self.peer}: the connection is closed")
        self.net._send(self, frame)

    def receive(self, timeout: float | None = None) -> wire.Message | None:
        """The next delivered message; None if nothing was delivered (``timeout`` is ignored: nothing waits)."""
        if self.inbox:
            return wire.decode(self.inbox.pop(0), self.where)
        if self.closed or self.other is None or self.other.closed:
            raise ConnectionClosedError(f"{self.where}: the connection is closed")
        return None

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return f"MemoryChannel({self.local} <-> {self.peer}{', closed' if self.closed else ''})"


class MemoryListener:
    def __init__(self, net: "InMemoryNetwork", address: str):
        self.net = net
        self.address = address
        self.backlog: list[MemoryChannel] = []
        self.closed = False

    def accept(self, timeout: float | None = None) -> MemoryChannel | None:
        return self.backlog.pop(0) if self.backlog else None

    def close(self) -> None:
        """Stop listening; connections not accepted yet are closed (as TCP resets them), so their senders see it."""
        self.closed = True
        self.net._listeners.pop(self.address, None)
        for channel in self.backlog:
            channel.close()
        self.backlog = []


class InMemoryNetwork:
    """A scripted network in one process (see the module documentation)."""

    def __init__(self) -> None:
        self._listeners: dict[str, MemoryListener] = {}
        self.in_flight: list[InFlight] = []
        self._seq = 0
        self._sides: list[frozenset[str]] = []
        self._side_of: dict[str, int] = {}  # node -> the index of the first side naming it
        self._delays: dict[tuple[str, str], int] = {}
        self.history: list[str] = []  # what happened, one line per delivery, drop, partition...

    def listen(self, address: str) -> MemoryListener:
        if address in self._listeners:
            raise ReplicationNetworkError(f"address {address!r} is already listening")
        listener = self._listeners[address] = MemoryListener(self, address)
        return listener

    def connect(self, address: str, local: str, timeout: float | None = None) -> MemoryChannel:
        listener = self._listeners.get(address)
        if listener is None:
            raise ConnectionClosedError(f"{local} -> {address}: nobody listens there")
        if self.partitioned(local, address):
            raise ConnectionClosedError(f"{local} -> {address}: the network is partitioned between them")
        mine, theirs = MemoryChannel(self, local, address), MemoryChannel(self, address, local)
        mine.other, theirs.other = theirs, mine
        listener.backlog.append(theirs)
        return mine

    def _send(self, channel: MemoryChannel, frame: bytes) -> None:
        self._seq += 1
        assert channel.other is not None
        self.in_flight.append(InFlight(self._seq, channel.local, channel.peer, bytes(frame), channel.other))

    # -- the script --------------------------------------------------------------------------------------
    def partitioned(self, a: str, b: str) -> bool:
        """Whether a partition cuts ``a`` from ``b`` (addresses: a node, or ``node/listener``); every frame
        delivered asks, so each node's side is looked up in a table that :meth:`partition` makes."""
        if not self._sides:
            return False
        return self._side_of.get(a.split("/")[0]) != self._side_of.get(b.split("/")[0])

    def _matches(self, f: InFlight, src: str | None, dst: str | None) -> bool:
        return (src is None or f.src == src) and (dst is None or f.dst == dst)

    def pending(self, src: str | None = None, dst: str | None = None) -> list[InFlight]:
        return [f for f in self.in_flight if self._matches(f, src, dst)]

    def deliver(self, src: str | None = None, dst: str | None = None, count: int | None = None) -> int:
        """Deliver the frames in flight (of one link if given, the first ``count``), in the order sent.

        Frames of a delayed or partitioned link stay in flight; a delay counts
        down by one at every call. Frames to a closed channel are lost.
        """
        moved = 0
        for f in list(self.in_flight):
            if count is not None and moved >= count:
                break
            if not self._matches(f, src, dst) or self._delays.get((f.src, f.dst)) or self.partitioned(f.src, f.dst):
                continue
            self.in_flight.remove(f)
            moved += 1
            if not f.to.closed:
                f.to.inbox.append(f.frame)
            self.history.append(f"delivered {f}" + (" (to a closed channel: lost)" if f.to.closed else ""))
        for link in list(self._delays):
            self._delays[link] -= 1
            if self._delays[link] <= 0:
                del self._delays[link]
        return moved

    def delay(self, src: str, dst: str, rounds: int = 1) -> None:
        """Hold the frames from ``src`` to ``dst`` for the next ``rounds`` deliveries."""
        if rounds < 1:
            raise ReplicationNetworkError(f"a delay lasts at least one delivery, not {rounds}")
        self._delays[(src, dst)] = rounds
        self.history.append(f"delayed {src} -> {dst} for {rounds} deliveries")

    def drop(self, src: str | None = None, dst: str | None = None) -> int:
        """Lose the frames in flight (of one link if given)."""
        lost = self.pending(src, dst)
        self.in_flight = [f for f in self.in_flight if f not in lost]
        self.history += [f"dropped {f}" for f in lost]
        return len(lost)

    def partition(self, *sides: Iterable[str]) -> None:
        """Cut the network into ``sides`` (sets of addresses): nothing crosses until :meth:`heal`."""
        self._sides = [frozenset(s) for s in sides]
        self._side_of = {}
        for i, side in enumerate(self._sides):
            for node in side:
                self._side_of.setdefault(node, i)
        self.history.append("partitioned " + " | ".join(",".join(sorted(s)) for s in self._sides))

    def heal(self) -> None:
        self._sides, self._side_of = [], {}
        self.history.append("healed")


# -- TCP ---------------------------------------------------------------------------------------------------
def parse_address(address: str) -> tuple[str, int]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise GroupConfigError(f"a TCP address is host:port, not {address!r}")
    return host, int(port)


class TcpChannel:
    """One end of a TCP connection, carrying frames."""

    def __init__(self, sock: socket.socket, local: str, peer: str):
        self.sock = sock
        self.local = local
        self.peer = peer
        self.closed = False
        self._buffer = wire.FrameBuffer(self.where)

    @property
    def where(self) -> str:
        return f"{self.local} <- {self.peer}"

    def send(self, frame: bytes) -> None:
        if self.closed:
            raise ConnectionClosedError(f"{self.local} -> {self.peer}: the connection is closed")
        try:
            self.sock.sendall(frame)
        except OSError as e:
            raise ConnectionClosedError(f"{self.local} -> {self.peer}: {e}") from None

    def receive(self, timeout: float | None = None) -> wire.Message | None:
        """The next message; None if none came within ``timeout`` seconds (None: wait forever)."""
        if self.closed:
            raise ConnectionClosedError(f"{self.where}: the connection is closed")
        self._buffer.where = self.where
        while (frame := self._buffer.next_frame()) is None:
            self.sock.settimeout(timeout)
            try:
                data = self.sock.recv(max(self._buffer.needed(), 4096))
            except (socket.timeout, BlockingIOError):
                return None
            except OSError as e:
                raise ConnectionClosedError(f"{self.where}: {e}") from None
            if not data:
                raise ConnectionClosedError(f"{self.where}: the peer closed the connection"
                                            + (f" in the middle of a frame ({len(self._buffer)} bytes)"
                                               if len(self._buffer) else ""))
            self._buffer.feed(data)
        return wire.decode(frame, self.where)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already gone
            self.sock.close()

    def __repr__(self) -> str:
        return f"TcpChannel({self.local} <-> {self.peer}{', closed' if self.closed else ''})"


class TcpListener:
    def __init__(self, address: str):
        host, port = parse_address(address)
        self.sock = socket.create_server((host, port))
        self.address = f"{host}:{self.sock.getsockname()[1]}"
        self.closed = False

    def accept(self, timeout: float | None = None) -> TcpChannel | None:
        self.sock.settimeout(timeout)
        try:
            conn, (host, port) = self.sock.accept()
        except (socket.timeout, BlockingIOError):  # timeout 0: nothing waiting
            return None
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return TcpChannel(conn, self.address, f"{host}:{port}")

    def close(self) -> None:
        self.closed = True
        self.sock.close()


class TcpNetwork:
    """Real sockets, with the same interface as :class:`InMemoryNetwork`."""

    def listen(self, address: str = "127.0.0.1:0") -> TcpListener:
        return TcpListener(address)

    def connect(self, address: str, local: str, timeout: float | None = 10.0) -> TcpChannel:
        try:
            sock = socket.create_connection(parse_address(address), timeout=timeout)
        except OSError as e:
            raise ConnectionClosedError(f"{local} -> {address}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return TcpChannel(sock, local, address)

    def deliver(self, *args, **kwargs) -> int:
        return 0  # the kernel delivers by itself


# -- the handshake ---------------------------------------------------------------------------------------------
def _refuse(channel, group_name: str, reason: str, cause: Exception | None = None) -> HandshakeError:
    try:
        channel.send(wire.encode(group_name, "HandshakeRefused", reason=reason))
    except ReplicationNetworkError:
        pass  # the peer is gone already: the refusal is the error raised here
    channel.close()
    error = HandshakeError(reason)
    error.__cause__ = cause
    return error


class HandshakeAcceptor:
    """The accepting side of a handshake: check the peer, answer, and name it (see the module documentation)."""

    def __init__(self, channel, group: RepGroup, node_name: str):
        self.channel = channel
        self.group = group
        self.node_name = node_name
        self.peer: RepNode | None = None

    def poll(self, timeout: float | None = None) -> RepNode | None:
        """The peer once its handshake was accepted; None while its Handshake has not arrived."""
        if self.peer is not None:
            return self.peer
        group = self.group.name
        try:
            message = self.channel.receive(timeout)
        except WireFormatError as e:
            raise _refuse(self.channel, group, f"{self.node_name} refused a handshake: {e}", e) from e
        except ConnectionClosedError as e:
            self.channel.close()
            raise HandshakeError(f"{self.node_name}: the connection closed during the handshake ({e})") from e
        if message is None:
            return None
        where = self.channel.where
        if message.type != "Handshake":
            raise _refuse(self.channel, group, f"{where}: expected a Handshake, got {message.type}")
        name = message["node_name"]
        if message.group != group:
            raise _refuse(self.channel, group, f"{where}: node {name!r} belongs to group {message.group!r}, "
                                               f"this is group {group!r}")
        if name not in self.group:
            raise _refuse(self.channel, group, f"{where}: node {name!r} is not a member of group {group!r} "
                                               f"({', '.join(n.name for n in self.group.nodes)})")
        self.channel.send(wire.encode(group, "HandshakeOk", node_name=self.node_name))
        self.channel.peer = name
        self.peer = self.group.node(name)
        return self.peer


class HandshakeInitiator:
    """The connecting side: sends its Handshake at once; ``poll`` gets the answer."""

    def __init__(self, channel, group_name: str, node: RepNode):
        self.channel = channel
        self.group_name = group_name
        self.node = node
        self.accepted_by: str | None = None
        channel.send(wire.encode(group_name, "Handshake", node_name=node.name, node_priority=node.priority))

    def poll(self, timeout: float | None = None) -> str | None:
        """The accepting node's name once accepted; None while no answer arrived."""
        if self.accepted_by is not None:
            return self.accepted_by
        try:
            message = self.channel.receive(timeout)
        except ReplicationNetworkError as e:
            self.channel.close()
            raise HandshakeError(f"{self.node.name}: handshake failed: {e}") from e
        if message is None:
            return None
        if message.type == "HandshakeRefused":
            self.channel.close()
            raise HandshakeError(f"{self.node.name}: handshake refused: {message['reason']}")
        if message.type != "HandshakeOk" or message.group != self.group_name:
            self.channel.close()
            raise HandshakeError(f"{self.channel.where}: expected HandshakeOk of group {self.group_name!r}, "
                                 f"got {message.type} of group {message.group!r}")
        self.accepted_by = self.channel.peer = message["node_name"]
        return self.accepted_by


__all__ = ["InMemoryNetwork", "MemoryChannel", "MemoryListener", "InFlight", "TcpNetwork", "TcpChannel",
           "TcpListener", "parse_address", "HandshakeAcceptor", "HandshakeInitiator"]
