"""Feeders and replicas over the in-memory network: replicas converge to the master's committed state,
a replica that starts late catches up through the VLSN index, a feeder refuses what it cannot serve."""

import threading

import pytest

from minidb.errors import UserError
from minidb.io import SimDisk
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig
from minidb.replication.errors import FeederError, IndexClosedError, ReplicaWriteError
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.feeder import Feeder, FeederConfig
from minidb.replication.stream.network import HandshakeAcceptor, HandshakeInitiator, InMemoryNetwork
from minidb.replication.stream.replica import Replica
from minidb.replication.vlsn.scanner import stream_vlsn
from minidb.replication.vlsn.wait import FROM_CACHE, FROM_LOG, FROM_WAIT_LATCH

from tests.replication.helpers import small_config, workload

GROUP = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3")])


def open_node(name, disk=None):
    return ReplicatedEnvironment.open(disk or SimDisk(name), small_config(), VLSNIndexConfig(stride=3),
                                      group=GROUP, node_name=name)


class Group:
    """A master and its replicas on one in-memory network; ``settle`` runs the script until nothing moves."""

    def __init__(self):
        self.net = InMemoryNetwork()
        self.listener = self.net.listen("n1")
        self.master = open_node("n1")
        self.master.become_master()
        self.feeders, self.replicas = {}, {}

    def join(self, env):
        initiator = HandshakeInitiator(self.net.connect("n1", env.node_name), "bank", GROUP.node(env.node_name))
        acceptor = HandshakeAcceptor(self.listener.accept(), GROUP, "n1")
        self.net.deliver()
        assert acceptor.poll().name == env.node_name
        self.net.deliver()
        assert initiator.poll() == "n1"
        self.feeders[env.node_name] = Feeder(self.master, acceptor.channel, env.node_name)
        self.replicas[env.node_name] = Replica(env, initiator.channel, "n1")
        return env

    def settle(self):
        while True:
            moved = self.net.deliver()
            moved += sum(f.pump() for f in self.feeders.values())
            moved += sum(r.pump() for r in self.replicas.values())
            if not moved and not self.net.in_flight:
                return


def committed(env):
    return {name: list(env.database(name, create=False).items()) for name in env.env.database_names()}


def vlsn_stream(env):
    return [(stream_vlsn(e), e.type_name, e.txn_id, e.values.get("key")) for e in env.log.scan()
            if stream_vlsn(e) is not None]


def test_replicas_converge_to_the_masters_committed_state():
    group = Group()
    replicas = [group.join(open_node("n2")), group.join(open_node("n3"))]
    workload(group.master, rounds=5)
    group.settle()
    for replica in replicas:
        assert committed(replica) == committed(group.master)
        assert vlsn_stream(replica) == vlsn_stream(group.master)
        assert replica.range.last == group.master.range.last
    commits = [v for v, t, _, _ in vlsn_stream(group.master) if t == "Commit"]
    assert all(f.acked_vlsn == commits[-1] for f in group.feeders.values())
    with pytest.raises(ReplicaWriteError, match="write on the master n1"):
        replicas[0].database("accounts").put("x", "y")


def test_a_replica_that_starts_late_catches_up_through_the_vlsn_index():
    group = Group()
    workload(group.master, rounds=6)  # checkpoints among them: buckets flushed, entries found by scans
    group.master.checkpoint()
    late = group.join(open_node("n2"))
    assert group.replicas["n2"].start_vlsn == 1
    group.settle()
    feeder = group.feeders["n2"]
    assert committed(late) == committed(group.master) and vlsn_stream(late) == vlsn_stream(group.master)
    assert feeder.scanner.total_scanned > 0  # old entries came from the log, through the index's mappings
    group.master.database("accounts").put("new", "1")
    group.settle()
    assert feeder.cache_hits >= 1  # the newest from the log item cache
    assert committed(late) == committed(group.master)


def test_a_replica_that_comes_back_continues_where_it_stopped():
    group = Group()
    disk = SimDisk("n3")
    replica = group.join(open_node("n3", disk))
    workload(group.master, rounds=2)
    group.settle()
    held = replica.range.last
    replica.sync()
    replica.crash()
    group.replicas.pop("n3"), group.feeders.pop("n3")
    workload(group.master, rounds=2)  # meanwhile the master goes on
    back = group.join(open_node("n3", disk))
    assert group.replicas["n3"].start_vlsn == held + 1
    group.settle()
    assert committed(back) == committed(group.master) and vlsn_stream(back) == vlsn_stream(group.master)


def test_a_delayed_replica_lags_then_catches_up_in_vlsn_order():
    group = Group()
    fast, slow = group.join(open_node("n2")), group.join(open_node("n3"))
    db = group.master.database("accounts")
    created = group.master.range.last  # its creation, the first entry n2 and n3 are fed
    for i in range(5):
        db.put(f"k{i}", "v")
        group.net.delay("n1", "n3", rounds=3)
        group.net.deliver()
        for f in group.feeders.values():
            f.pump()
        group.net.deliver(src="n1", dst="n2")
        for r in group.replicas.values():
            r.pump()
    assert fast.range.last == created + 5 and slow.range.is_empty
    group.settle()
    assert vlsn_stream(slow) == vlsn_stream(group.master)


def test_a_feeder_refuses_what_it_cannot_serve():
    group = Group()
    replica = group.join(open_node("n2"))
    group.master.database("accounts").put("a", "1")  # VLSN 1 creates 'accounts', VLSN 2 writes 'a'
    group.settle()
    replica.become_master()  # n2 writes on its own: it holds VLSN 3, which the master never logged
    replica.database("accounts").put("b", "2")
    group.replicas.pop("n2"), group.feeders.pop("n2")
    group.join(replica)
    group.net.deliver()
    with pytest.raises(FeederError, match="asks for VLSN 4, after the master's last \\(2\\)"):
        group.feeders["n2"].pump()
    assert group.feeders["n2"].channel.closed
    group.master.become_unknown()
    group.feeders.pop("n2"), group.replicas.pop("n2")
    group.master.become_master()
    group.join(open_node("n3"))
    group.master.become_replica("n2")
    group.net.deliver()
    with pytest.raises(FeederError, match="node n1 is REPLICA: only the master feeds replica n3"):
        group.feeders["n3"].pump()


def test_a_replica_in_another_process_over_tcp_converges():
    import json
    import subprocess
    import sys
    from pathlib import Path

    from minidb.replication.stream.network import TcpNetwork

    net = TcpNetwork()
    listener = net.listen()
    group = RepGroup("bank", [RepNode("n1", listener.address), RepNode("n2", "127.0.0.1:1")])
    master = ReplicatedEnvironment.open(SimDisk("tcp-master"), small_config(), VLSNIndexConfig(stride=3),
                                        group=group, node_name="n1")
    master.become_master()
    workload(master, rounds=3)
    last_commit = max(v for v, t, _, _ in vlsn_stream(master) if t == "Commit")
    script = (
        "import json, sys\n"
        "from minidb.io import SimDisk\n"
        "from minidb.replication import ReplicatedEnvironment, RepGroup, RepNode, Replica, TcpNetwork\n"
        "from minidb.replication.stream.network import HandshakeInitiator\n"
        "address, last = sys.argv[1], int(sys.argv[2])\n"
        "group = RepGroup('bank', [RepNode('n1', address), RepNode('n2', '127.0.0.1:1')])\n"
        "env = ReplicatedEnvironment.open(SimDisk('n2'), group=group, node_name='n2')\n"
        "h = HandshakeInitiator(TcpNetwork().connect(address, 'n2'), 'bank', group.node('n2'))\n"
        "assert h.poll(timeout=30) == 'n1'\n"
        "replica = Replica(env, h.channel, 'n1')\n"
        "while env.range.last < last:\n"
        "    replica.pump(timeout=30)\n"
        "print(json.dumps({n: [[k.hex(), v.hex()] for k, v in env.database(n, create=False).items()]\n"
        "                  for n in env.env.database_names()}), flush=True)\n"
        # the connection stays open until the master has read the acks: a close right behind them would
        # reach the feeder's next read as an error before its loop sees the last ack counted
        "sys.stdin.readline()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, listener.address, str(master.range.last)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        acceptor = HandshakeAcceptor(listener.accept(timeout=30), group, "n1")
        assert acceptor.poll(timeout=30).name == "n2"
        feeder = Feeder(master, acceptor.channel, "n2")
        while feeder.acked_vlsn < last_commit:
            feeder.pump(timeout=30)
        out, _ = child.communicate(input="done\n", timeout=60)
        assert child.returncode == 0
        expected = {n: [[k.hex(), v.hex()] for k, v in items] for n, items in committed(master).items()}
        assert json.loads(out) == expected and feeder.sent == master.range.last
    finally:
        child.kill() if child.poll() is None else None
        listener.close()


# -- a caught-up feeder blocks on the VLSN index (JE's two-level cache, then the log) ---------------------------
LONG_WAIT = FeederConfig(wait_ms=600_000)  # no round of these tests ends by a timeout


def caught_up(replicas=("n2",)):
    """A master with a database, its replicas streaming and caught up, each feeder waiting long; log reads counted."""
    group = Group()
    for name in replicas:
        group.join(open_node(name))
        group.feeders[name].config = LONG_WAIT
    db = group.master.database("accounts")
    group.settle()
    reads = []
    read = group.master.log.read
    group.master.log.read = lambda lsn: reads.append(lsn) or read(lsn)
    return group, db, reads


def test_the_newest_entries_are_sent_from_the_log_item_cache_without_reading_the_log():
    group, db, reads = caught_up()
    for i in range(3):
        db.put(f"c{i}", "1")
    feeder = group.feeders["n2"]
    assert feeder.pump() == 3
    assert reads == [] and feeder.stats[FROM_CACHE] >= 3 and feeder.stats[FROM_LOG] == 0
    group.settle()
    assert committed(group.replicas["n2"].env) == committed(group.master)


def test_a_feeder_woken_by_a_put_sends_the_item_handed_over_in_the_wait_latch():
    group, db, reads = caught_up()
    feeder, index = group.feeders["n2"], group.master.vlsn_index
    waited_for = feeder.next_vlsn
    sent = []
    thread = threading.Thread(target=lambda: sent.append(feeder.feed()))
    thread.start()
    assert index.await_waiter(waited_for, timeout=60)  # the feeder blocks on the latch for its next VLSN
    db.put("woken", "1")  # logs that VLSN: the put releases the latch with its item
    thread.join()
    assert sent == [1] and feeder.next_vlsn == waited_for + 1
    assert feeder.stats[FROM_WAIT_LATCH] == 1 and feeder.stats["nWakeups"] == 1
    assert reads == []  # the entry came in the latch: nothing read from the log
    group.settle()
    assert committed(group.replicas["n2"].env) == committed(group.master)


def test_a_caught_up_feeder_thread_wakes_once_per_put_and_never_spins():
    group, db, reads = caught_up()
    feeder, index = group.feeders["n2"], group.master.vlsn_index
    thread = feeder.start_thread()
    for i in range(5):
        assert index.await_waiter(group.master.range.last + 1, timeout=60)
        assert feeder.stats["nWakeups"] == i  # blocked, not going round
        db.put(f"t{i}", "1")
    assert index.await_waiter(group.master.range.last + 1, timeout=60)
    assert feeder.stats["nWakeups"] == 5 and feeder.stats[FROM_WAIT_LATCH] == 5 and reads == []
    group.net.deliver()  # the feeder is blocked: nothing moves on its side meanwhile
    assert group.replicas["n2"].pump() == 5
    assert committed(group.replicas["n2"].env) == committed(group.master)
    feeder.close()  # cancels this feeder's wait and joins its thread
    assert not thread.is_alive() and feeder.saved_shutdown_exception is None
    assert index.waiting_for() == []


def test_closing_one_feeder_leaves_the_other_waiting_for_the_same_vlsn():
    group, db, _ = caught_up(("n2", "n3"))
    index, next_vlsn = group.master.vlsn_index, group.master.range.last + 1
    threads = {name: group.feeders[name].start_thread() for name in ("n2", "n3")}
    assert index.await_waiter(next_vlsn, timeout=60)
    group.feeders["n2"].close()
    assert not threads["n2"].is_alive() and threads["n3"].is_alive()
    db.put("after", "1")
    assert index.await_waiter(next_vlsn + 1, timeout=60)  # n3 was woken by the put and waits for the next
    assert group.feeders["n3"].sent == group.feeders["n2"].sent + 1
    group.feeders["n3"].close()
    assert not threads["n3"].is_alive()


def test_closing_the_environment_wakes_a_blocked_feeder_thread_and_leaves_no_thread():
    group, db, _ = caught_up()
    feeder, index = group.feeders["n2"], group.master.vlsn_index
    thread = feeder.start_thread()
    assert index.await_waiter(group.master.range.last + 1, timeout=60)
    group.master.close()
    thread.join()
    assert isinstance(feeder.saved_shutdown_exception, IndexClosedError) and feeder.closed
    feeder.close()  # a second close is harmless
    assert not any(t.name.startswith("feeder ") for t in threading.enumerate())


def test_a_feeder_thread_starts_only_once_the_replica_asked_for_its_start():
    group = Group()
    initiator = HandshakeInitiator(group.net.connect("n1", "n2"), "bank", GROUP.node("n2"))
    acceptor = HandshakeAcceptor(group.listener.accept(), GROUP, "n1")
    group.net.deliver()
    acceptor.poll()
    del initiator
    feeder = Feeder(group.master, acceptor.channel, "n2")
    with pytest.raises(UserError, match="once the replica asked for its start"):
        feeder.start_thread()
    with pytest.raises(UserError, match="wait_ms"):
        FeederConfig(wait_ms=-1)
