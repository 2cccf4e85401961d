"""Network restore (minidb.replication.restore): a node gets a member's log files over the wire, staged, verified,
installed at once; a dropped connection, a corrupt chunk or a crash in the middle never leaves a half-restored log
that opens, and the member's files are protected from the cleaner while they are sent."""

import zlib

import pytest

from minidb.errors import SimulatedCrash
from minidb.io import CrashMode, OSDisk, SimDisk
from minidb.log.files import file_name
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig, wire
from minidb.replication.errors import ConnectionClosedError, NetworkRestoreError, RestoreChecksumError
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.restore import FileChecksums, LogFileFeeder, NetworkRestore
from minidb.replication.restore.staging import PREFIX, read_marker
from minidb.replication.stream.feeder import Feeder
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork, TcpNetwork
from minidb.replication.stream.replica import Replica

from tests.replication.helpers import churn, small_config, workload

GROUP = RepGroup("bank", [RepNode("n1", "n1"), RepNode("n2", "n2")])
CHUNK = 256  # small chunks: every file travels in several


def open_node(name, disk):
    return ReplicatedEnvironment.open(disk, small_config(file_max=4096),
                                      VLSNIndexConfig(stride=4, max_mappings=1000, min_vlsn_index_size=10),
                                      group=GROUP, node_name=name)


def master_with_data(disk=None):
    env = open_node("n1", disk or SimDisk("n1"))
    env.become_master()
    workload(env)
    env.sync()
    return env


def records(env):
    return dict(env.database("accounts", create=False).items())


def connect(net, master_env, address="n1/feeder", client="n2", listener=None):
    """A handshake over ``net``; (the node's channel, the member's channel)."""
    listener = listener or net.listen(address)
    initiator = HandshakeInitiator(net.connect(listener.address, client), GROUP.name, GROUP.node(client))
    channel = None
    while channel is None:
        net.deliver()
        channel = listener.accept(timeout=5)
    acceptor = HandshakeAcceptor(channel, GROUP, master_env.node_name)
    while acceptor.poll(timeout=5) is None or initiator.poll(timeout=5) is None:
        net.deliver()
    return initiator.channel, acceptor.channel, listener


def run(net, restore, server, rounds=10_000):
    """Pump both sides until the restore is done (the in-memory network's script: deliver, pump, deliver...)."""
    for _ in range(rounds):
        if restore.done:
            net.deliver()
            server.pump(timeout=0.5 if isinstance(net, TcpNetwork) else 0)  # RestoreDone: the files go free
            return
        net.deliver()
        server.pump(timeout=0)
        net.deliver()
        restore.pump(timeout=0.5 if isinstance(net, TcpNetwork) else 0)
    raise AssertionError("the restore did not finish")


def test_a_full_restore_over_the_in_memory_network_installs_the_master_s_log():
    master = master_with_data()
    net = InMemoryNetwork()
    node_disk = SimDisk("n2")
    mine, theirs, _ = connect(net, master)
    restore = NetworkRestore(node_disk, mine, GROUP.name, "n1", reason="an empty directory")
    server = LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK)
    run(net, restore, server)
    numbers = [int(n[:8], 16) for n in master.disk.list() if n.endswith(".jdb")]
    assert [f.number for f in restore.received] == numbers and all(f.verified for f in restore.received)
    assert restore.bytes_received == sum(f.length for f in restore.received)
    assert max(f.chunks for f in restore.received) > 1
    assert not [n for n in node_disk.list() if n.startswith(PREFIX)]  # staging area gone
    assert server.done and server.closed and master.env.cleaner.protector.sets == []  # released
    env = open_node("n2", node_disk)
    assert records(env) == records(master) and env.range.last == master.range.last


def test_a_full_restore_over_tcp(tmp_path):
    master = master_with_data(OSDisk(tmp_path / "n1", create=True))
    net = TcpNetwork()
    listener = net.listen("127.0.0.1:0")
    mine, theirs, _ = connect(net, master, listener=listener)
    node_dir = tmp_path / "n2"
    node_dir.mkdir()
    restore = NetworkRestore(OSDisk(node_dir), mine, GROUP.name, "n1", reason="an empty directory")
    server = LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK, max_chunks=4)
    run(net, restore, server)
    listener.close()
    env = open_node("n2", str(node_dir))
    assert records(env) == records(master) and env.range.last == master.range.last
    env.close()
    master.close()


def test_a_connection_dropped_mid_file_installs_nothing_and_a_retry_succeeds():
    master = master_with_data()
    node_disk = SimDisk("n2")
    old = open_node("n2", node_disk)  # the node's own log, to be kept until the new one is verified
    old.become_master()
    old.database("accounts").put("mine", "only")
    old.close()
    before = {n: node_disk.open(n).read_all() for n in node_disk.list()}
    net = InMemoryNetwork()
    mine, theirs, listener = connect(net, master)
    restore = NetworkRestore(node_disk, mine, GROUP.name, "n1", reason="retry test")
    server = LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK, max_chunks=2)
    while not (restore._file is not None and restore._offset > 0):  # into the first file's chunks
        net.deliver()
        server.pump()
        net.deliver()
        restore.pump()
    theirs.close()  # the connection drops in the middle of a file
    net.drop()
    with pytest.raises(NetworkRestoreError, match="dropped in the middle of 00000001.jdb"):
        restore.pump()
    with pytest.raises(ConnectionClosedError):
        server.pump()
    assert master.env.cleaner.protector.sets == []  # released on the dropped connection
    assert {n: node_disk.open(n).read_all() for n in before} == before  # the node's own log untouched
    assert records(open_node("n2", node_disk)) == {b"mine": b"only"}  # it opens on its own files
    staged = [n for n in node_disk.list() if n.startswith(PREFIX)]
    assert staged == []  # the open discarded the incomplete staging area
    mine, theirs, _ = connect(net, master, listener=listener)
    retry = NetworkRestore(node_disk, mine, GROUP.name, "n1", reason="retry")
    run(net, retry, LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK))
    env = open_node("n2", node_disk)
    assert records(env) == records(master)


def test_a_corrupt_chunk_is_caught_by_its_checksum_and_nothing_is_installed():
    master = master_with_data()
    node_disk = SimDisk("n2")
    net = InMemoryNetwork()
    mine, theirs, _ = connect(net, master)
    restore = NetworkRestore(node_disk, mine, GROUP.name, "n1", reason="corrupt test")
    server = LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK, max_chunks=1000)
    net.deliver()
    server.pump()  # the list
    net.deliver()
    restore.pump()  # FileRequest 1
    net.deliver()
    server.pump()  # FileStart, the chunks, FileEnd of file 1
    flight = net.pending(dst="n2")
    chunk = next(f for f in flight if wire.decode(f.frame).type == "FileChunk" and wire.decode(f.frame)["offset"])
    message = wire.decode(chunk.frame)
    data = bytearray(message["data"])
    data[7] ^= 0x40  # one bit flipped on the way, in a frame whose own CRC is right
    chunk.frame = wire.encode(GROUP.name, "FileChunk", file_number=1, offset=message["offset"], data=bytes(data))
    net.deliver()
    with pytest.raises(RestoreChecksumError, match=r"00000001\.jdb at offset 0x0: received .* CRC-32"):
        restore.pump()
    assert node_disk.list() == []  # the staging area discarded, nothing installed
    assert zlib.crc32(bytes(data)) != zlib.crc32(message["data"])


def node_with_its_own_log():
    disk = SimDisk("n2")
    old = open_node("n2", disk)
    old.become_master()
    old.database("accounts").put("mine", "only")
    old.close()
    return disk


def test_a_receiver_crash_anywhere_in_a_restore_opens_the_old_log_or_the_whole_new_one():
    """After every event of a restore on the node's disk (writes, fsyncs, creates, renames, deletes), a crash
    keeping nothing unsynced, or everything: the node opens its own old log, or the whole restored one once
    the marker is durable (an install cut short is finished by the open), never a mix."""
    master = master_with_data()
    node_disk = node_with_its_own_log()
    net = InMemoryNetwork()
    mine, theirs, _ = connect(net, master)
    start = len(node_disk.events)
    restore = NetworkRestore(node_disk, mine, GROUP.name, "n1")
    run(net, restore, LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK))
    events = node_disk.events
    marker_synced = next(i for i in range(start, len(events))
                         if events[i].kind == "fsync" and events[i].name == PREFIX + "marker")
    assert any(e.kind == "rename" for e in events[marker_synced:])
    old, new = {b"mine": b"only"}, records(master)
    seen = set()
    for i in range(start, len(events)):
        for mode in (CrashMode.nothing(), CrashMode.everything()):
            image = node_disk.crash_image(i, mode)
            staged_marker = read_marker(image) is not None
            env = open_node("n2", image)
            got = records(env)
            assert got == (new if i >= marker_synced else old) or (got == new and staged_marker), (i, mode)
            assert not [n for n in image.list() if n.startswith(PREFIX)]
            seen.add(got == new)
            env.close()
    assert seen == {False, True}


def test_a_receiver_crash_mid_restore_then_a_retry_works():
    master = master_with_data()
    node_disk = node_with_its_own_log()
    net = InMemoryNetwork()
    listener = net.listen("n1/feeder")
    mine, theirs, _ = connect(net, master, listener=listener)
    restore = NetworkRestore(node_disk, mine, GROUP.name, "n1")
    node_disk.schedule_crash(after_ops=12)  # in the middle of the files
    with pytest.raises(SimulatedCrash):
        run(net, restore, LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK))
    theirs.close()
    env = open_node("n2", node_disk)
    assert records(env) == {b"mine": b"only"}
    env.close()
    mine, theirs, _ = connect(net, master, listener=listener)
    run(net, NetworkRestore(node_disk, mine, GROUP.name, "n1"), LogFileFeeder(master, theirs, "n2"))
    assert records(open_node("n2", node_disk)) == records(master)


def test_the_cleaner_does_not_delete_a_file_being_sent_and_does_after():
    master = open_node("n1", SimDisk("n1"))
    master.become_master()
    churn(master)
    assert master.log.end_lsn.file > 2
    net = InMemoryNetwork()
    mine, theirs, _ = connect(net, master)
    restore = NetworkRestore(SimDisk("n2"), mine, GROUP.name, "n1", reason="protection test")
    server = LogFileFeeder(master, theirs, "n2", chunk_size=CHUNK, max_chunks=1)
    net.deliver()
    server.pump()  # listed: files 1.. protected
    protector = master.env.cleaner.protector
    assert [str(s) for s in protector.sets] == [f"network restore to n2 (files 1..{master.log.end_lsn.file})"]
    master.env.clean_log()
    master.checkpoint()
    assert file_name(1) in master.disk.list() and master.log.head == 1  # protected: kept
    run(net, restore, server)
    assert protector.sets == []
    master.env.clean_log()
    master.checkpoint()
    assert file_name(1) not in master.disk.list()  # released: the cleaner deletes it
    mine, theirs, _ = connect(net, master, listener=net.listen("n1/again"))
    NetworkRestore(SimDisk("n3"), mine, GROUP.name, "n1")
    again = LogFileFeeder(master, theirs, "n3")
    net.deliver()
    again.pump()
    assert [s.name for s in protector.sets] == ["network restore to n3"]
    again.close()  # the member stops: the files go free
    assert protector.sets == []


def test_an_erased_file_s_cached_checksum_is_dropped_first():
    master = master_with_data()
    net = InMemoryNetwork()
    mine, theirs, _ = connect(net, master)
    restore = NetworkRestore(SimDisk("n2"), mine, GROUP.name, "n1")
    run(net, restore, LogFileFeeder(master, theirs, "n2"))
    assert 1 in master.file_checksums.cached()
    assert master.clear_cached_file_checksum(1) and 1 not in master.file_checksums.cached()
    assert not master.clear_cached_file_checksum(1)


def test_cached_checksums_extend_a_growing_file_and_are_dropped_when_bytes_change_in_place():
    disk = SimDisk("sums")
    f = disk.open(file_name(1), create=True)
    f.write(0, b"a" * 100)
    generation = [0]
    sums = FileChecksums(disk, lambda: generation[0])
    assert sums.checksum(1, 100) == zlib.crc32(b"a" * 100) and sums.bytes_read == 100
    f.write(100, b"b" * 50)  # the last file grows: only the new bytes are read
    assert sums.checksum(1, 150) == zlib.crc32(b"a" * 100 + b"b" * 50) and sums.bytes_read == 150
    f.write(0, b"X")  # an erasure changes bytes in place: without clear, the stale value would be listed
    assert sums.clear(1) and sums.checksum(1, 150) == zlib.crc32(b"X" + b"a" * 99 + b"b" * 50)
    f.write(1, b"Y")  # a rollback's INVISIBLE bit, in place: the generation moves, every checksum goes
    generation[0] += 1
    assert sums.checksum(1, 150) == zlib.crc32(b"XY" + b"a" * 98 + b"b" * 50)


def test_the_log_sent_ends_at_the_last_sync_point_so_the_restored_node_rolls_nothing_back():
    master = master_with_data()
    with master.begin() as txn:
        master.database("accounts").put("committed", "yes", txn=txn)
    master.database("accounts").put("after the last sync point", "streamed later")  # no Commit follows it
    master.checkpoint()
    assert master.range.last_sync < master.range.last
    net = InMemoryNetwork()
    mine, theirs, listener = connect(net, master)
    node_disk = SimDisk("n2")
    run(net, NetworkRestore(node_disk, mine, GROUP.name, "n1"), LogFileFeeder(master, theirs, "n2"))
    node = open_node("n2", node_disk)
    assert node.range.last == master.range.last_sync  # cut right after the Commit
    assert b"after the last sync point" not in records(node) and records(node)[b"committed"] == b"yes"
    mine, theirs, _ = connect(net, master, listener=listener)
    feeder, replica = Feeder(master, theirs, "n2"), Replica(node, mine, "n1", syncup=True)
    for _ in range(100):
        net.deliver()
        feeder.pump()
        net.deliver()
        replica.pump()
    assert replica.syncup.rollback is None and replica.start_vlsn == master.range.last_sync + 1
    assert records(node) == records(master) and node.range.last == master.range.last


def test_a_new_attempt_first_finishes_an_install_a_crash_cut_short():
    """Crashed between two renames of the install, the node asks again before it ever opens: the new attempt
    finishes the old install first (the old files are half gone: discarding the staged ones would lose both)."""
    master = master_with_data()
    node_disk = node_with_its_own_log()
    net = InMemoryNetwork()
    mine, theirs, listener = connect(net, master)
    start = len(node_disk.events)
    run(net, NetworkRestore(node_disk, mine, GROUP.name, "n1"), LogFileFeeder(master, theirs, "n2"))
    first_rename = next(i for i in range(start, len(node_disk.events)) if node_disk.events[i].kind == "rename")
    image = node_disk.crash_image(first_rename, CrashMode.nothing())
    assert read_marker(image) is not None
    mine, _, _ = connect(net, master, listener=listener)
    again = NetworkRestore(image, mine, GROUP.name, "n1")
    assert again.discarded == [] and read_marker(image) is None
    assert records(open_node("n2", image)) == records(master)
