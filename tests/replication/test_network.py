"""Transports and the handshake: the same tests on the scripted in-memory network and on real TCP sockets."""

import struct
import threading
import zlib
from pathlib import Path

import pytest

from minidb.replication import wire
from minidb.replication.errors import ConnectionClosedError, HandshakeError, ReplicationNetworkError
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork, TcpNetwork

GROUP = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3", 0)])


@pytest.fixture(params=["memory", "tcp"])
def link(request):
    """(network, listener, connect(local) -> channel) on one transport."""
    if request.param == "memory":
        net = InMemoryNetwork()
        listener = net.listen("n1")
    else:
        net = TcpNetwork()
        listener = net.listen("127.0.0.1:0")
    yield net, listener, lambda local: net.connect(listener.address, local)
    listener.close()


def accept(net, listener):
    channel = listener.accept(timeout=10)
    assert channel is not None
    return channel


def test_a_member_of_the_group_is_accepted(link):
    net, listener, connect = link
    initiator = HandshakeInitiator(connect("n2"), "bank", GROUP.node("n2"))
    acceptor = HandshakeAcceptor(accept(net, listener), GROUP, "n1")
    net.deliver()
    assert acceptor.poll(timeout=10) == GROUP.node("n2")
    net.deliver()
    assert initiator.poll(timeout=10) == "n1"
    initiator.channel.send(wire.encode("bank", "StartStream", start_vlsn=4))
    net.deliver()
    assert acceptor.channel.receive(timeout=10) == wire.Message("bank", "StartStream", {"start_vlsn": 4})
    assert acceptor.channel.peer == "n2" and initiator.channel.peer == "n1"


def refused(net, listener, initiator, words):
    acceptor = HandshakeAcceptor(accept(net, listener), GROUP, "n1")
    net.deliver()
    with pytest.raises(HandshakeError) as on_acceptor:
        acceptor.poll(timeout=10)
    assert words in str(on_acceptor.value)
    assert acceptor.peer is None and acceptor.channel.closed  # nothing handed on
    net.deliver()
    with pytest.raises(HandshakeError) as on_initiator:
        initiator.poll(timeout=10)
    assert "handshake refused" in str(on_initiator.value) and words in str(on_initiator.value)
    assert initiator.channel.closed
    with pytest.raises(ConnectionClosedError):
        acceptor.channel.receive(timeout=1)


def test_a_peer_of_another_group_is_refused(link):
    net, listener, connect = link
    initiator = HandshakeInitiator(connect("n2"), "payroll", RepNode("n2", "n2"))
    refused(net, listener, initiator, "node 'n2' belongs to group 'payroll', this is group 'bank'")


def test_an_unknown_node_is_refused(link):
    net, listener, connect = link
    initiator = HandshakeInitiator(connect("n9"), "bank", RepNode("n9", "n9"))
    refused(net, listener, initiator, "node 'n9' is not a member of group 'bank' (n1, n2, n3)")


class RawInitiator(HandshakeInitiator):
    """A peer that sends the given bytes instead of a good Handshake."""

    def __init__(self, channel, frame):
        self.channel, self.group_name, self.node, self.accepted_by = channel, "bank", RepNode("n2", "n2"), None
        channel.send(frame)


def test_a_bad_frame_is_refused(link):
    net, listener, connect = link
    frame = bytearray(wire.encode("bank", "Handshake", node_name="n2", node_priority=1))
    frame[15] ^= 0xFF  # a flipped payload byte
    initiator = RawInitiator(connect("n2"), bytes(frame))
    refused(net, listener, initiator, "bad checksum at offset 24")


def test_a_wrong_version_is_refused(link):
    net, listener, connect = link
    body = bytearray(wire.encode("bank", "Handshake", node_name="n2", node_priority=1)[:-4])
    body[4] = wire.WIRE_VERSION + 1
    initiator = RawInitiator(connect("n2"), bytes(body) + struct.pack("<I", zlib.crc32(body)))
    refused(net, listener, initiator, f"wire version {wire.WIRE_VERSION + 1} at offset 4")


def test_a_message_other_than_a_handshake_first_is_refused(link):
    net, listener, connect = link
    initiator = RawInitiator(connect("n2"), wire.encode("bank", "StartStream", start_vlsn=1))
    refused(net, listener, initiator, "expected a Handshake, got StartStream")


def test_a_peer_that_closes_in_the_middle_of_a_frame(link):
    net, listener, connect = link
    channel = connect("n2")
    channel.send(wire.encode("bank", "Handshake", node_name="n2", node_priority=1)[:10])
    channel.close()
    acceptor = HandshakeAcceptor(accept(net, listener), GROUP, "n1")
    net.deliver()
    # in memory a send is one frame, so 10 bytes are a truncated frame; TCP sees the stream end inside one
    with pytest.raises(HandshakeError, match="truncated frame: 10 bytes|in the middle of a frame \\(10 bytes\\)"):
        acceptor.poll(timeout=10)
    assert acceptor.peer is None


def test_tcp_receive_waits_up_to_its_timeout_then_returns_none():
    net = TcpNetwork()
    listener = net.listen()
    channel = net.connect(listener.address, "n2")
    other = listener.accept(timeout=10)
    assert other.receive(timeout=0.01) is None
    ready = threading.Event()

    def later():
        ready.wait(10)
        channel.send(wire.encode("bank", "Heartbeat", master_vlsn=3, time_ms=5))

    thread = threading.Thread(target=later)
    thread.start()
    ready.set()
    assert other.receive(timeout=10)["master_vlsn"] == 3
    thread.join()
    for c in (channel, other):
        c.close()
    listener.close()


# -- the script of the in-memory network ------------------------------------------------------------------------
def pair(net, a="n1", b="n2"):
    listener = net._listeners.get(a) or net.listen(a)
    mine = net.connect(a, b)
    return mine, listener.accept()


def beat(vlsn):
    return wire.encode("bank", "Heartbeat", master_vlsn=vlsn, time_ms=0)


def received(channel):
    got = []
    while (m := channel.receive()) is not None:
        got.append(m["master_vlsn"])
    return got


def test_nothing_moves_until_delivered_then_in_order():
    net = InMemoryNetwork()
    at_n2, at_n1 = pair(net)
    for v in (1, 2, 3):
        at_n1.send(beat(v))
    assert received(at_n2) == [] and len(net.pending("n1", "n2")) == 3
    assert net.deliver(count=2) == 2
    assert received(at_n2) == [1, 2]
    net.deliver()
    assert received(at_n2) == [3]
    assert str(net.history[0]) == "delivered #1 n1 -> n2: Heartbeat(master_vlsn=1, time_ms=0)"


def test_delay_holds_one_link_and_drop_loses_it():
    net = InMemoryNetwork()
    at_n2, at_n1 = pair(net)
    at_n3, at_n1b = pair(net, "n1", "n3")
    at_n1.send(beat(1))
    at_n1b.send(beat(2))
    net.delay("n1", "n2", rounds=2)
    net.deliver()
    assert received(at_n2) == [] and received(at_n3) == [2]
    net.deliver()
    assert received(at_n2) == []
    net.deliver()
    assert received(at_n2) == [1]
    at_n1.send(beat(3))
    assert net.drop("n1", "n2") == 1
    net.deliver()
    assert received(at_n2) == [] and net.history[-1] == "dropped #3 n1 -> n2: Heartbeat(master_vlsn=3, time_ms=0)"


def test_a_partition_holds_frames_and_refuses_connections_until_healed():
    net = InMemoryNetwork()
    at_n2, at_n1 = pair(net)
    at_n3, at_n1b = pair(net, "n1", "n3")
    net.listen("n3")
    net.partition({"n1", "n2"}, {"n3"})
    at_n1.send(beat(1))
    at_n1b.send(beat(2))
    net.deliver()
    assert received(at_n2) == [1] and received(at_n3) == []
    with pytest.raises(ConnectionClosedError, match="partitioned"):
        net.connect("n3", "n1")
    net.heal()
    net.deliver()
    assert received(at_n3) == [2]
    net.connect("n3", "n1")


def test_closed_channels():
    net = InMemoryNetwork()
    at_n2, at_n1 = pair(net)
    at_n1.send(beat(1))
    at_n2.close()
    net.deliver()
    assert "lost" in net.history[-1]
    with pytest.raises(ConnectionClosedError):
        at_n1.send(beat(2))
    with pytest.raises(ConnectionClosedError):
        at_n1.receive()
    with pytest.raises(ConnectionClosedError, match="nobody listens"):
        net.connect("n7", "n1")
    with pytest.raises(ReplicationNetworkError, match="already listening"):
        net.listen("n1")


def test_a_listener_that_closes_closes_the_connections_it_never_accepted():
    net = InMemoryNetwork()
    listener = net.listen("n2")  # a node that crashes before it accepts n1's connection
    channel = net.connect("n2", "n1")
    channel.send(beat(1))
    listener.close()
    with pytest.raises(ConnectionClosedError):  # n1 learns it at once and reconnects to the restarted node
        channel.send(beat(2))
    assert net.listen("n2").accept() is None


def test_a_handshake_with_another_process_over_tcp():
    import subprocess
    import sys

    net = TcpNetwork()
    listener = net.listen()
    script = (
        "import sys\n"
        "from minidb.replication import wire\n"
        "from minidb.replication.group.membership import RepNode\n"
        "from minidb.replication.stream.network import HandshakeInitiator, TcpNetwork\n"
        "h = HandshakeInitiator(TcpNetwork().connect(sys.argv[1], 'n3'), 'bank', RepNode('n3', 'n3', 0))\n"
        "print(h.poll(timeout=10), flush=True)\n"
        "h.channel.send(wire.encode('bank', 'Ack', txn_id=12, vlsn=40))\n"
        "h.channel.close()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, listener.address], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).parents[2])  # the repository root: its minidb
    try:
        acceptor = HandshakeAcceptor(accept(net, listener), GROUP, "n1")
        assert acceptor.poll(timeout=10) == GROUP.node("n3")
        assert acceptor.channel.receive(timeout=10) == wire.Message("bank", "Ack", {"txn_id": 12, "vlsn": 40})
        with pytest.raises(ConnectionClosedError, match="the peer closed the connection"):
            acceptor.channel.receive(timeout=10)
        assert child.wait(timeout=30) == 0 and child.stdout.read() == "n1\n"
    finally:
        child.kill() if child.poll() is None else None
        listener.close()
