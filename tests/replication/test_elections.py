"""Elections: JE's rule for the winner, Paxos's safety (one master per term), the acceptor's durable promises.

Most tests run a group on the scripted in-memory network with a manual clock: nothing moves unless the test
delivers messages or advances time, so every interleaving is chosen and repeatable.
"""

from __future__ import annotations

import itertools
import random
import re
import struct
import threading

import pytest

from minidb.io import CrashMode, SimDisk, crash_points
from minidb.logstore import ManualClock
from minidb.logstore.eraser import SystemClock
from minidb.replication import wire
from minidb.replication.env import ReplicatedEnvironment
from minidb.replication.errors import AcceptorStateCorruptionError, ElectionError, ReplicaWriteError, WireFormatError
from minidb.replication.group.elections import (
    ACCEPTOR_FILE,
    Acceptor,
    AcceptorState,
    ElectionConfig,
    ElectionNode,
    Proposal,
    Suitability,
    choose_master,
)
from minidb.replication.group.membership import NodeState, RepGroup, RepNode
from minidb.replication.stream.network import HandshakeInitiator, InMemoryNetwork, TcpNetwork

from tests.replication.helpers import small_config

CONFIG = ElectionConfig()
KEEP_NOTHING = CrashMode.nothing()


def group_of(*nodes) -> RepGroup:
    """``group_of(("n1", 2), "n2")``: nodes by name, or (name, priority)."""
    return RepGroup("bank", [RepNode(n, n) if isinstance(n, str) else RepNode(n[0], n[0], n[1]) for n in nodes])


class Cluster:
    """A group's election nodes on one in-memory network and one manual clock."""

    def __init__(self, group: RepGroup, vlsns: dict[str, int] | None = None):
        self.group = group
        self.net = InMemoryNetwork()
        self.clock = ManualClock()
        self.vlsns = dict(vlsns or {})
        self.disks = {n.name: SimDisk(n.name) for n in group.nodes}
        self.nodes: dict[str, ElectionNode] = {}
        self.everyone: list[ElectionNode] = []  # every node started, crashed ones too
        for n in group.nodes:
            self.start(n.name)

    def start(self, name: str) -> ElectionNode:
        node = self.nodes[name] = ElectionNode(self.group, name, self.net, self.disks[name], self.clock, CONFIG,
                                               last_txn_end=lambda: self.vlsns.get(name, 0))
        self.everyone.append(node)
        return node

    def crash(self, name: str, mode: CrashMode = KEEP_NOTHING) -> None:
        self.nodes.pop(name).close()
        self.disks[name].crash(mode)

    def pump(self) -> int:
        return sum(node.pump() for node in list(self.nodes.values()))

    def settle(self) -> None:
        """Pump and deliver until nothing moves (the clock stands still)."""
        for _ in range(200):
            if not self.pump() and not self.net.deliver():
                return
        raise AssertionError("the election never settles")

    def advance(self, ms: int) -> None:
        """Let ``ms`` pass in steps of 100 ms, settling after each (heartbeats go out on time)."""
        while ms > 0:
            self.clock.advance(min(ms, 100))
            ms -= 100
            self.settle()

    def masters(self) -> dict[str, int]:
        return {n.name: n.term for n in self.nodes.values() if n.state is NodeState.MASTER}

    def agreed(self) -> tuple[int, str]:
        """The one (term, master) every running node learned."""
        seen = {(n.term, n.master) for n in self.nodes.values()}
        assert len(seen) == 1, seen
        return seen.pop()


def elect(cluster: Cluster, proposer: str) -> tuple[int, str]:
    cluster.nodes[proposer].start_election()
    cluster.settle()
    return cluster.agreed()


# -- JE's rule -------------------------------------------------------------------------------------------
def test_the_most_up_to_date_node_wins():
    cluster = Cluster(group_of("n1", "n2", "n3"), {"n1": 5, "n2": 9, "n3": 7})
    assert elect(cluster, "n1") == (1, "n2")
    assert cluster.masters() == {"n2": 1}
    assert [n.state for n in cluster.nodes.values()] == [NodeState.REPLICA, NodeState.MASTER, NodeState.REPLICA]
    assert cluster.nodes["n2"].stream_links() == [("n2", "n1"), ("n2", "n3")]
    assert cluster.nodes["n3"].stream_links() == [("n2", "n3")]
    assert cluster.nodes["n1"].decided == [(1, "n2")]


def test_the_module_example():
    net, clock = InMemoryNetwork(), ManualClock()
    group = group_of("n1", "n2", "n3")
    nodes = [ElectionNode(group, name, net, SimDisk(name), clock) for name in ("n1", "n2", "n3")]
    assert nodes[1].start_election() == Proposal(1, 1, "n2")
    for _ in range(6):
        for node in nodes:
            node.pump()
        net.deliver()
    assert (nodes[0].state, nodes[0].term) == (NodeState.MASTER, 1)
    assert nodes[1].trace.lines == [
        "n2: round (1, 1, n2): Propose to n1, n2, n3",
        "n2: round (1, 1, n2): promised by n1, n2, n3; Accept master n1",
        "n2: round (1, 1, n2) decided: master n1 for term 1 (accepted by n1, n2)",
        "n2: learned term 1: master n1"]


@pytest.mark.parametrize("nodes, vlsns, winner", [
    ((("n1", 1), ("n2", 3), ("n3", 3)), {}, "n2"),  # equal logs: the higher priority, then the first name
    ((("n1", 1), ("n2", 1), ("n3", 1)), {}, "n1"),  # equal logs and priorities: the first name
    ((("n1", 5), ("n2", 1), ("n3", 1)), {"n2": 4, "n3": 4}, "n2"),  # the log before the priority
    ((("n1", 1), ("n2", 1), ("n3", 0)), {"n3": 100}, "n1"),  # priority 0 never wins, even the most up to date
])
def test_ties_are_broken_by_priority_then_name_and_priority_zero_never_wins(nodes, vlsns, winner):
    assert elect(Cluster(group_of(*nodes), vlsns), "n3") == (1, winner)


def test_the_rule_itself():
    a, b, c = Suitability("a", 7, 1), Suitability("b", 7, 2), Suitability("c", 9, 0)
    assert choose_master([a, b, c]) == b
    assert choose_master([a, Suitability("a0", 7, 1)]) == a
    assert choose_master([c]) is None


def test_the_rule_ranks_the_last_term_before_how_far_the_log_reaches():
    old_tail, newer = Suitability("n1", 12, 2, last_term=1), Suitability("n3", 6, 1, last_term=2)
    assert choose_master([old_tail, newer]) == newer
    assert choose_master([old_tail, Suitability("n2", 9, 1, last_term=1)]) == old_tail  # one term: the longest


def test_if_only_priority_zero_nodes_remain_nobody_is_elected_and_says_why():
    cluster = Cluster(group_of("n1", ("n2", 0), ("n3", 0)), {"n2": 3, "n3": 8})
    cluster.crash("n1")
    cluster.nodes["n2"].start_election()
    cluster.settle()
    assert cluster.nodes["n2"].round is not None  # a majority promised; waiting for n1
    cluster.advance(CONFIG.promise_wait_ms)
    failure = cluster.nodes["n2"].failure
    assert failure == "term 1: nobody elected: no node that answered (n2, n3) can become master (priority 0 never does)"
    assert f"n2: {failure}" in cluster.nodes["n2"].trace.lines
    for _ in range(5):  # retries elect nobody either
        cluster.advance(CONFIG.retry_ms + 2 * CONFIG.stagger_ms)
    assert cluster.masters() == {} and all(n.master is None for n in cluster.nodes.values())
    cluster.start("n1")  # n1 is back: the next round elects it
    cluster.advance(CONFIG.retry_ms + 2 * CONFIG.stagger_ms)
    cluster.advance(CONFIG.promise_wait_ms)
    assert cluster.masters() == {"n1": cluster.nodes["n1"].term}
    assert cluster.agreed()[1] == "n1"


# -- partitions ------------------------------------------------------------------------------------------
def test_a_minority_partition_elects_nobody_and_the_majority_does():
    cluster = Cluster(group_of("n1", "n2", "n3", "n4", "n5"), {"n1": 9, "n2": 3, "n3": 4, "n4": 4, "n5": 2})
    cluster.net.partition({"n1", "n2"}, {"n3", "n4", "n5"})
    cluster.nodes["n1"].start_election()
    cluster.nodes["n3"].start_election()
    for _ in range(6):  # rounds time out and are retried on both sides
        cluster.advance(CONFIG.promise_wait_ms)
        cluster.advance(CONFIG.retry_ms)
    assert cluster.nodes["n1"].master is None and cluster.nodes["n2"].master is None
    assert cluster.nodes["n1"].decided == [] and cluster.nodes["n2"].decided == []
    assert not any("Accept master" in line for n in ("n1", "n2") for line in cluster.nodes[n].trace)
    assert cluster.masters() == {"n3": 1}  # n3 and n4 are equally up to date: the first name
    assert {cluster.nodes[n].master for n in ("n3", "n4", "n5")} == {"n3"}
    cluster.net.heal()  # the minority's next proposals are answered with the majority's master
    cluster.advance(CONFIG.retry_ms + CONFIG.stagger_ms)
    assert cluster.agreed() == (1, "n3") and cluster.masters() == {"n3": 1}


def test_a_master_cut_off_steps_down_when_it_meets_the_newer_term():
    cluster = Cluster(group_of("n1", "n2", "n3"))
    assert elect(cluster, "n1") == (1, "n1")
    cluster.net.partition({"n1"}, {"n2", "n3"})
    cluster.net.drop()
    for _ in range(4):  # n2 and n3 hear no heartbeat, lose the master and elect n2
        cluster.advance(CONFIG.heartbeat_timeout_ms)
    assert cluster.nodes["n2"].state is NodeState.MASTER and cluster.nodes["n2"].term == 2
    assert cluster.nodes["n1"].state is NodeState.MASTER and cluster.nodes["n1"].term == 1  # another term
    assert any("master lost" in line for line in cluster.nodes["n3"].trace)
    cluster.net.heal()
    cluster.advance(CONFIG.heartbeat_ms)
    cluster.advance(CONFIG.heartbeat_ms)
    assert cluster.agreed() == (2, "n2") and cluster.masters() == {"n2": 2}


def test_replicas_that_lose_the_master_one_after_the_other_elect_a_new_one():
    cluster = Cluster(group_of("n1", "n2", "n3"))
    assert elect(cluster, "n1") == (1, "n1")
    cluster.net.partition({"n1", "n3"}, {"n2"})  # n3 hears n1 for 500 ms longer than n2 does
    cluster.advance(500)
    cluster.crash("n1")
    cluster.net.heal()
    cluster.net.drop()
    cluster.advance(CONFIG.heartbeat_timeout_ms)  # n2 lost n1; n3 has not noticed yet and answers "n1 is master"
    assert any("ignored term 1: master n1" in line for line in cluster.nodes["n2"].trace)
    for _ in range(4):
        cluster.advance(CONFIG.heartbeat_timeout_ms)
    term, master = cluster.agreed()
    assert term >= 2 and master in ("n2", "n3") and cluster.masters() == {master: term}


# -- one master per term ---------------------------------------------------------------------------------
def deliver_one(net: InMemoryNetwork, src: str, dst: str) -> bool:
    return net.deliver(src, dst, count=1) == 1


def test_a_decided_value_is_proposed_again_by_a_later_proposer():
    """n1's round decides n1 (accepted by n1, n2) and n1 dies before anyone learns it; n3, the most up to
    date, proposes later in the same term, learns n1's accepted value from n2's promise and decides n1
    again: the value never changes."""
    cluster = Cluster(group_of("n1", "n2", "n3"), {"n1": 5, "n2": 5, "n3": 9})
    net, n1, n3 = cluster.net, cluster.nodes["n1"], cluster.nodes["n3"]
    net.partition({"n1", "n2"}, {"n3"})
    n1.start_election()
    cluster.pump(); net.deliver()  # Propose reaches n2
    cluster.pump(); net.deliver()  # n2's Promise reaches n1
    cluster.pump()  # a majority promised
    cluster.clock.advance(CONFIG.promise_wait_ms)
    cluster.pump(); net.deliver()  # n3 never answered: n1 chooses among n1, n2; Accept reaches n2
    cluster.pump(); net.deliver()  # n2's Accepted reaches n1
    n1.pump()
    assert n1.decided == [(1, "n1")] and cluster.nodes["n2"].acceptor.state.value == "n1"
    net.drop()  # the Result to n2 is lost (and n1's first heartbeat)
    assert [line[:31] for line in net.history if line.startswith("dropped")][0] == "dropped #7 n1 -> n2: Result(ter"
    cluster.crash("n1")
    net.heal()
    assert n3.start_election() == Proposal(1, 1, "n3")  # n3 knew nothing of term 1
    cluster.settle()
    cluster.advance(CONFIG.promise_wait_ms)
    assert n3.decided == [(1, "n1")]
    assert [(n.term, n.master) for n in cluster.nodes.values()] == [(1, "n1"), (1, "n1")]


def run_two_proposers(order: tuple[tuple[str, str], ...], vlsns: dict[str, int]) -> Cluster:
    """n1 and n3 start term 1 together; frames move one at a time, links in ``order`` first."""
    cluster = Cluster(group_of("n1", "n2", "n3"), vlsns)
    cluster.nodes["n1"].start_election()
    cluster.nodes["n3"].start_election()
    for step in range(400):
        cluster.pump()
        if not any(deliver_one(cluster.net, src, dst) for src, dst in order):
            if all(n.master is not None for n in cluster.nodes.values()):
                return cluster
            cluster.clock.advance(CONFIG.promise_wait_ms if step % 2 else CONFIG.retry_ms)
    raise AssertionError(f"no result with order {order}")


def masters_per_term(nodes) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for node in nodes:
        for term, master in node.learned + node.decided:
            found.setdefault(term, set()).add(master)
    return found


LINKS = [(a, b) for a in ("n1", "n2", "n3") for b in ("n1", "n2", "n3") if a != b]


@pytest.mark.parametrize("order", list(itertools.permutations(LINKS))[::97])
def test_two_concurrent_proposers_cannot_both_win_a_term(order):
    cluster = run_two_proposers(order, {"n1": 8, "n2": 2, "n3": 8})
    per_term = masters_per_term(cluster.nodes.values())
    assert all(len(masters) == 1 for masters in per_term.values()), per_term
    assert len(cluster.masters()) == 1
    cluster.agreed()


ROUND = re.compile(r"round \((\d+), \d+, (\w+)\): Propose")


def check_one_master_per_term(cluster: Cluster, decided: dict[int, str], seed: int) -> None:
    """Every master a node learned or decided is the first one seen for its term, and may be master."""
    for node in cluster.everyone:
        for term, master in node.learned + node.decided:
            assert decided.setdefault(term, master) == master, (seed, term, decided[term], master)
            assert cluster.group.node(master).priority > 0


def test_random_delivery_never_elects_two_masters_in_a_term():
    """Seeded random schedules (reordering, duplicates, losses, partitions, crashes, time passing): at most one
    master per term, a decided master never changes; then, healed and calm, the group agrees on one master."""
    contested = 0
    for seed in range(120):
        rng = random.Random(seed)
        names = ["n1", "n2", "n3", "n4", "n5"][:rng.choice((3, 5))]
        priorities = [rng.choice((1, 2))] + [rng.choice((0, 1, 1, 2)) for _ in names[1:]]
        cluster = Cluster(group_of(*zip(names, priorities, strict=True)), {n: rng.randrange(4) for n in names})
        decided: dict[int, str] = {}
        for _step in range(250):
            action = rng.random()
            live = sorted(cluster.nodes)
            if action < 0.05:
                cluster.nodes[rng.choice(live)].start_election()
            elif action < 0.07 and len(live) > 1:
                cluster.crash(rng.choice(live), CrashMode.random(rng.randrange(1 << 20)))
            elif action < 0.10 and len(live) < len(names):
                cluster.start(rng.choice(sorted(set(names) - set(live))))
            elif action < 0.12:
                cluster.net.partition(set(names[:len(names) // 2]), set(names[len(names) // 2:]))
            elif action < 0.15:
                cluster.net.heal()
            elif action < 0.18:
                cluster.clock.advance(rng.choice((CONFIG.promise_wait_ms, CONFIG.retry_ms,
                                                  CONFIG.heartbeat_timeout_ms)))
            elif cluster.net.in_flight:
                frame = rng.choice(cluster.net.in_flight)
                if action < 0.22:
                    cluster.net.in_flight.remove(frame)  # lost
                elif action < 0.27 and not frame.to.closed:
                    frame.to.inbox.append(frame.frame)  # duplicated
                else:  # the first frame of its link (a connection keeps its order)
                    cluster.net.deliver(frame.src, frame.dst, count=1)
            cluster.pump()
            check_one_master_per_term(cluster, decided, seed)
        for name in sorted(set(names) - set(cluster.nodes)):
            cluster.start(name)
        cluster.net.heal()
        cluster.advance(8000)
        check_one_master_per_term(cluster, decided, seed)
        term, master = cluster.agreed()
        assert cluster.masters() == {master: term}, (seed, cluster.masters())
        proposers: dict[str, set[str]] = {}
        for node in cluster.everyone:
            for line in node.trace:
                if found := ROUND.search(line):
                    proposers.setdefault(found.group(1), set()).add(found.group(2))
        contested += any(len(p) > 1 for p in proposers.values())
    assert contested >= 40, contested  # the schedules do make proposers fight over a term


# -- the acceptor's durable state ------------------------------------------------------------------------
def test_an_acceptor_keeps_its_promise_across_a_crash_between_promise_and_accept():
    cluster = Cluster(group_of("n1", "n2", "n3"))
    net = cluster.net
    n1 = cluster.nodes["n1"]
    net.partition({"n1", "n2"}, {"n3"})
    n1.start_election()  # (1, 1, n1)
    cluster.pump(); net.deliver(); cluster.pump()  # n2 promised (1, 1, n1)
    net.heal()
    cluster.nodes["n3"].start_election()  # (1, 1, n3) > (1, 1, n1)
    net.deliver("n3", "n2")
    cluster.pump()  # n2 promised (1, 1, n3) durably ...
    assert cluster.nodes["n2"].acceptor.state.promised == Proposal(1, 1, "n3")
    cluster.crash("n2")  # ... and crashes, keeping nothing unsynced
    n2 = cluster.start("n2")
    assert n2.acceptor.state.promised == Proposal(1, 1, "n3")
    # n1 gathers n1's and n2's promises (n2's answer from before the crash) and asks for Accept
    net.deliver("n2", "n1")
    cluster.pump()
    cluster.clock.advance(CONFIG.promise_wait_ms)
    cluster.pump()
    assert n1.round is not None and n1.round.phase == "accept"
    net.deliver("n1", "n2")
    n2.pump()
    assert n2.acceptor.state.accepted is None  # the restarted acceptor refuses the lower proposal
    net.deliver("n2", "n1")
    n1.pump()
    assert "refused by n2 (promised (1, 1, n3))" in "\n".join(n1.trace)


def test_every_crash_point_of_the_acceptor_keeps_what_it_answered():
    """The acceptor answers only after its state is durable: crash it after any write, fsync or rename."""
    disk = SimDisk("n2")
    acceptor = Acceptor(disk)
    steps = [("propose", Proposal(1, 1, "n1")), ("accept", Proposal(1, 1, "n1"), "n1"),
             ("propose", Proposal(1, 2, "n3")), ("accept", Proposal(1, 1, "n1"), "n1"),
             ("accept", Proposal(1, 2, "n3"), "n1"), ("propose", Proposal(2, 1, "n2"))]
    answered = []  # (event index when the answer went out, the state it promised)
    for step in steps:
        ok = acceptor.on_propose(step[1]) if step[0] == "propose" else acceptor.on_accept(step[1], step[2])
        answered.append((len(disk.events) - 1, ok, acceptor.state))
    assert [ok for _, ok, _ in answered] == [True, True, True, False, True, True]
    states = [AcceptorState()] + [state for _, _, state in answered]
    points = 0
    for point in crash_points(disk):
        recovered = Acceptor(point.disk).state
        assert recovered in states, point
        for index, _, state in answered:  # everything answered before the crash is kept
            if index <= point.event.index:
                assert states.index(recovered) >= states.index(state), (point, recovered, state)
        points += 1
    assert points >= 3 * acceptor.writes


def test_a_damaged_acceptor_state_is_refused_naming_the_offset():
    disk = SimDisk("n1")
    acceptor = Acceptor(disk)
    acceptor.on_accept(Proposal(3, 2, "n2"), "n2")
    assert Acceptor(disk).state == AcceptorState(Proposal(3, 2, "n2"), Proposal(3, 2, "n2"), "n2")
    good = disk.open(ACCEPTOR_FILE).read_all()
    assert struct.unpack_from("<4sBBBB", good) == (b"MDBA", 1, 2, 2, 2) and len(good) == 40 + 6 + 4
    with disk.open(ACCEPTOR_FILE) as f:
        f.write(9, b"\x07")  # the promised term
    with pytest.raises(AcceptorStateCorruptionError, match=r"sim:n1/election.acceptor: bad checksum at offset 46"):
        Acceptor(disk)
    with disk.open(ACCEPTOR_FILE) as f:
        f.truncate(10)
    with pytest.raises(AcceptorStateCorruptionError, match="truncated acceptor state: 10 bytes"):
        Acceptor(disk)
    with disk.open(ACCEPTOR_FILE + ".tmp", create=True) as f:  # a save cut short is ignored
        f.write(0, good[:20])
    with disk.open(ACCEPTOR_FILE) as f:
        f.write(0, good)
    assert Acceptor(disk).state.promised == Proposal(3, 2, "n2") and not disk.exists(ACCEPTOR_FILE + ".tmp")


# -- the network ---------------------------------------------------------------------------------------
def test_election_traffic_goes_through_the_handshake():
    cluster = Cluster(group_of("n1", "n2", "n3"))
    net, n1 = cluster.net, cluster.nodes["n1"]
    propose = wire.encode("other", "Propose", term=9, counter=1, proposer="n2")
    # a node of another group: refused before its Propose is read
    HandshakeInitiator(net.connect("n1", "n2"), "other", RepNode("n2", "n2")).channel.send(propose)
    # a bad frame instead of a handshake
    net.connect("n1", "n3").send(b"MDBR" + b"\xff" * 20)
    # a good handshake, then a damaged Propose
    good = HandshakeInitiator(net.connect("n1", "n2"), "bank", RepNode("n2", "n2"))
    damaged = bytearray(wire.encode("bank", "Propose", term=9, counter=1, proposer="n2"))
    damaged[20] ^= 0xFF
    good.channel.send(bytes(damaged))
    # a good handshake, then a Propose of another group
    HandshakeInitiator(net.connect("n1", "n3"), "bank", RepNode("n3", "n3")).channel.send(propose)
    net.deliver()
    n1.pump()
    assert n1.acceptor.writes == 0 and n1.acceptor.state == AcceptorState()
    trace = "\n".join(n1.trace)
    assert "belongs to group 'other', this is group 'bank'" in trace
    assert "wire version 255 at offset 4" in trace and "bad checksum at offset 36" in trace
    assert "a frame of group 'other' on a connection of group 'bank'" in trace
    assert trace.count("dropped") == 4 and n1._in == []
    net.deliver()
    assert not net.in_flight


def test_duplicated_and_reordered_messages_are_harmless():
    cluster = Cluster(group_of("n1", "n2", "n3"), {"n3": 4})
    net = cluster.net
    cluster.nodes["n2"].start_election()
    cluster.nodes["n1"].start_election()
    sent = []
    for _ in range(30):
        cluster.pump()
        net.in_flight.sort(key=lambda f: -LINKS.index((f.src, f.dst)))  # links in reverse order, each in order
        for frame in net.in_flight:
            sent.append(frame)
            if not frame.to.closed:
                frame.to.inbox.append(frame.frame)  # every frame arrives twice
        net.deliver()
    assert cluster.agreed() == (1, "n3") and cluster.masters() == {"n3": 1}
    writes = {name: node.acceptor.writes for name, node in cluster.nodes.items()}
    for frame in sent:  # every frame of the election, again, late
        if not frame.to.closed:
            frame.to.inbox.append(frame.frame)
    cluster.pump()
    assert {name: node.acceptor.writes for name, node in cluster.nodes.items()} == writes
    assert cluster.agreed() == (1, "n3") and cluster.masters() == {"n3": 1}
    assert all(len(node.learned) == 1 for node in cluster.nodes.values())


# -- the node's state in a replicated environment ------------------------------------------------------
def open_node(group: RepGroup, name: str, commits: int) -> ReplicatedEnvironment:
    env = ReplicatedEnvironment.open(SimDisk(name), small_config(), group=group, node_name=name)
    if commits:
        env.become_master()
        db = env.database("accounts")
        for i in range(commits):
            with env.begin() as txn:
                db.put(f"k{i}", "v", txn=txn)
        env.become_unknown()
    return env


def test_the_winner_becomes_master_of_its_environment_and_the_others_replicas():
    group = group_of("n1", "n2", "n3")
    net, clock = InMemoryNetwork(), ManualClock()
    envs = {name: open_node(group, name, commits) for name, commits in (("n1", 1), ("n2", 3), ("n3", 2))}
    nodes = [ElectionNode.for_env(env, net, clock) for env in envs.values()]
    assert envs["n2"].range.last_txn_end > envs["n3"].range.last_txn_end > envs["n1"].range.last_txn_end
    nodes[0].start_election()
    for _ in range(10):
        for node in nodes:
            node.pump()
        net.deliver()
    assert [env.state for env in envs.values()] == [NodeState.REPLICA, NodeState.MASTER, NodeState.REPLICA]
    last = envs["n2"].range.last
    envs["n2"].database("accounts").put("after", "election")  # the master writes with the next VLSN
    assert envs["n2"].range.last == last + 1
    with pytest.raises(ReplicaWriteError, match="write on the master n2"):
        envs["n1"].database("accounts").put("x", "y")
    # the master goes silent: the replicas lose it, become UNKNOWN and elect n3
    nodes[1].close()
    clock.advance(CONFIG.heartbeat_timeout_ms + 1)
    for node in (nodes[0], nodes[2]):
        node.pump()
    assert envs["n1"].state is NodeState.UNKNOWN and envs["n3"].state is NodeState.UNKNOWN
    for _ in range(10):
        clock.advance(CONFIG.promise_wait_ms)
        for node in (nodes[0], nodes[2]):
            node.pump()
        net.deliver()
    assert envs["n3"].state is NodeState.MASTER and envs["n1"].master_name == "n3"
    assert nodes[2].term == 2
    for env in envs.values():
        env.close()


def test_bad_settings_and_nodes_are_refused():
    with pytest.raises(ElectionError, match="retry_ms is a whole number of milliseconds"):
        ElectionConfig(retry_ms=0)
    env = ReplicatedEnvironment.open(SimDisk("alone"), small_config())
    with pytest.raises(ElectionError, match="not in a group: there is nobody to elect"):
        ElectionNode.for_env(env, InMemoryNetwork(), ManualClock())
    env.close()


def test_election_messages_on_the_wire():
    frame = wire.encode("g", "Propose", term=3, counter=1, proposer="n1")
    assert frame[:-4].hex(" ") == ("4d 44 42 52 01 20 01 00 14 00 00 00 67 03 00 00 00 00 00 00 00 "
                                   "01 00 00 00 00 00 00 00 02 00 6e 31")  # the module's example
    result = wire.decode(wire.encode("g", "Result", term=2, master="n3", counter=0, proposer=""))
    assert (result.type, result["term"], result["master"]) == ("Result", 2, "n3")
    with pytest.raises(WireFormatError, match="Accept: missing fields"):
        wire.encode("g", "Accept", term=1, counter=1, proposer="n1")


# -- TCP ---------------------------------------------------------------------------------------------------
def test_three_nodes_elect_a_master_over_tcp():
    net = TcpNetwork()
    listeners = [net.listen("127.0.0.1:0") for _ in range(3)]
    group = RepGroup("bank", [RepNode(f"n{i + 1}", listener.address) for i, listener in enumerate(listeners)])
    # generous waits: a node slowed down by a busy machine still answers in time
    config = ElectionConfig(promise_wait_ms=5000, retry_ms=10_000, stagger_ms=1000, heartbeat_ms=50,
                            heartbeat_timeout_ms=10_000)
    vlsns = {"n1": 3, "n2": 3, "n3": 7}
    clock = SystemClock()
    nodes = [ElectionNode(group, n.name, net, SimDisk(n.name), clock, config, lambda n=n: vlsns[n.name], listener)
             for n, listener in zip(group.nodes, listeners, strict=True)]
    done = threading.Event()
    nodes[0].start_election()  # n1 proposes; the other nodes would start on their own after retry_ms

    def run(node: ElectionNode) -> None:
        while not done.is_set():
            node.pump()
            done.wait(0.002)

    threads = [threading.Thread(target=run, args=(node,), daemon=True) for node in nodes]
    for thread in threads:
        thread.start()
    try:
        deadline = clock.now_ms() + 30_000
        while clock.now_ms() < deadline and not all(node.master == "n3" for node in nodes):
            done.wait(0.01)
    finally:
        done.set()
        for thread in threads:
            thread.join(5)
        for node in nodes:
            node.close()
    assert [(node.state, node.master) for node in nodes] == [(NodeState.REPLICA, "n3"), (NodeState.REPLICA, "n3"),
                                                             (NodeState.MASTER, "n3")]
    assert len({node.term for node in nodes}) == 1


def test_a_restarted_node_does_not_follow_a_stale_master_on_one_result():
    """n2 became master of term 2 while n1 (master of term 1) was cut off, then crashed and restarted. After
    the heal, n1 still believes it leads term 1 and tells n2 so; n2 (its acceptor promised term 2) does not
    follow it on n1's word alone: n2 and n3 elect a new master, and n1 steps down."""
    cluster = Cluster(group_of("n1", "n2", "n3"), {"n1": 5, "n2": 9, "n3": 7})
    cluster.nodes["n1"].start_election()
    cluster.vlsns["n1"] = 20  # n1 wins term 1 ...
    cluster.settle()
    assert cluster.agreed() == (1, "n1")
    cluster.vlsns["n1"] = 5  # ... and its log is behind the others' later on
    cluster.net.partition({"n1"}, {"n2", "n3"})
    cluster.net.drop()
    for _ in range(4):
        cluster.advance(CONFIG.heartbeat_timeout_ms)
    assert cluster.masters() == {"n1": 1, "n2": 2}
    cluster.crash("n2")
    for _ in range(2):  # n3 loses n2 too
        cluster.advance(CONFIG.heartbeat_timeout_ms)
    assert cluster.nodes["n3"].master is None
    cluster.start("n2")
    cluster.net.heal()
    for _ in range(6):
        cluster.advance(CONFIG.heartbeat_timeout_ms)
    masters = cluster.masters()
    assert list(masters) == ["n2"] and masters["n2"] > 2, masters
    assert cluster.agreed()[1] == "n2"  # n1 stepped down
