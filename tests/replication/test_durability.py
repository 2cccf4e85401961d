"""Durability by acks (JE's Durability): each ack policy against the number of acking replicas, a partition,
the timeout on a clock, acks nobody waits for, and the replica's sync policy across a crash."""

import pytest

from minidb.io import SimDisk
from minidb.logstore import ManualClock
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig, wire
from minidb.replication.errors import FeederError, InsufficientAcksError, InsufficientReplicasError
from minidb.replication.group.driver import InMemoryGroup
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.ack import FeederTxns
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy

from tests.replication.helpers import small_config

SYNC, WRITE_NO_SYNC, NO_SYNC = SyncPolicy.SYNC, SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC
ALL, MAJORITY, NONE = ReplicaAckPolicy.ALL, ReplicaAckPolicy.SIMPLE_MAJORITY, ReplicaAckPolicy.NONE
NAMES = ["n1", "n2", "n3"]
GROUP = RepGroup("bank", [RepNode(n, n) for n in NAMES])


def open_node(name, disk=None, group=GROUP):
    return ReplicatedEnvironment.open(disk or SimDisk(name), small_config(), VLSNIndexConfig(stride=3),
                                      group=group, node_name=name)


def make_group(replicas=("n2", "n3"), group=GROUP):
    envs = {"n1": open_node("n1", group=group), **{n: open_node(n, group=group) for n in replicas}}
    return InMemoryGroup(envs, "n1")


def write(group, durability, key="k", clock=None, timeout_ms=1000):
    """One transaction on the master, committed with ``durability``, the group pumped while it waits."""
    master = group.master
    txn = master.begin(durability)
    master.database("accounts").put(key, "v", txn=txn)
    return master.commit(txn, clock=clock or ManualClock(), timeout_ms=timeout_ms, pump=group.pump)


def test_ack_counts_by_policy():
    assert [p.required_acks(3) for p in (ALL, MAJORITY, NONE)] == [2, 1, 0]
    assert [p.required_acks(5) for p in (ALL, MAJORITY, NONE)] == [4, 2, 0]
    assert MAJORITY.required_acks(2) == 1 and MAJORITY.required_acks(1) == 0


@pytest.mark.parametrize("policy, acking, ok", [
    (ALL, 2, True), (ALL, 1, False), (ALL, 0, False),
    (MAJORITY, 2, True), (MAJORITY, 1, True), (MAJORITY, 0, False),
    (NONE, 2, True), (NONE, 1, True), (NONE, 0, True),
])
def test_each_policy_by_the_number_of_acking_replicas(policy, acking, ok):
    group = make_group()
    silent = NAMES[1 + acking:]  # the replicas cut off: their acks never come back
    if silent:
        group.net.partition(NAMES[:1 + acking], silent)
    if ok:
        lsn = write(group, Durability(SYNC, NO_SYNC, policy))
        assert not lsn.is_null
    else:
        with pytest.raises(InsufficientAcksError) as caught:
            write(group, Durability(SYNC, NO_SYNC, policy))
        error = caught.value
        assert error.required == policy.required_acks(3) and len(error.acked_by) == acking
        assert set(error.missing) == set(silent)
        assert f"got {acking} of {error.required} acks" in str(error)
    # the commit is durable on the master whatever the acks said
    assert group.master.database("accounts").get("k") == b"v"
    assert group.master.feeder_txns.pending == {}


def test_a_partitioned_replica_majority_succeeds_all_fails():
    group = make_group()
    group.net.partition(["n1", "n2"], ["n3"])
    write(group, Durability(SYNC, NO_SYNC, MAJORITY), key="a")
    with pytest.raises(InsufficientAcksError, match=r"acked by n2; no ack from n3"):
        write(group, Durability(SYNC, NO_SYNC, ALL), key="b")
    group.net.heal()
    group.settle()
    assert group.envs["n3"].database("accounts", create=False).get("b") == b"v"  # it arrives after the heal


def test_the_timeout_is_measured_on_the_clock():
    group = make_group()
    group.net.partition(["n1"], ["n2", "n3"])
    clock = ManualClock(start_ms=0)
    with pytest.raises(InsufficientAcksError, match="within 750 ms"):
        write(group, Durability(SYNC, NO_SYNC, MAJORITY), clock=clock, timeout_ms=750)
    assert clock.now_ms() == 750 and sum(clock.waits) == 750  # waited on the clock, exactly to the deadline


def test_a_commit_token_shows_what_it_waits_for():
    group = make_group()
    master = group.master
    txn = master.begin(Durability(SYNC, NO_SYNC, MAJORITY))
    master.database("accounts").put("k", "v", txn=txn)
    token = master.start_commit(txn, clock=ManualClock())
    assert token.waiting_for == ["n2", "n3"] and not token.done
    group.net.delay("n1", "n3", rounds=10)
    rounds = 0
    while not token.done and rounds < 5:  # the Commit reaches n2 only, n2 replays it, its ack comes back
        group.pump()
        rounds += 1
    assert rounds == 3 and token.acked_by == ["n2"] and token.done and token.waiting_for == []
    assert token.wait() == token.lsn


def test_too_few_replicas_connected_refuses_before_logging():
    group = make_group(replicas=("n2",))
    master = group.master
    end = master.log.end_lsn
    with pytest.raises(InsufficientReplicasError, match=r"ALL needs acks from 2 replica\(s\) .* 1 are connected \(n2\)"):
        master.begin(Durability(SYNC, NO_SYNC, ALL))
    assert master.log.end_lsn == end  # nothing was logged
    write(group, Durability(SYNC, NO_SYNC, MAJORITY))  # one replica is a majority of three with the master
    group.leave("n2")
    txn = master.begin()
    master.database("accounts").put("x", "y", txn=txn)
    end = master.log.end_lsn
    with pytest.raises(InsufficientReplicasError, match="0 are connected"):
        master.commit(txn, Durability(SYNC, NO_SYNC, MAJORITY), pump=group.pump)
    assert master.log.end_lsn == end  # the Commit was not logged; the transaction is still open
    txn.abort()


def test_acks_nobody_waits_for_are_ignored_and_unknown_vlsns_refused():
    group = make_group()
    write(group, Durability(SYNC, NO_SYNC, ALL))
    txns: FeederTxns = group.master.feeder_txns
    assert txns.note_ack("n2", 999, 3) == "ack from n2 for txn 999 (VLSN 3): no commit waits for it"
    info = txns.register(5, Durability(), required=1)
    info.vlsn = 7
    assert "names VLSN 6, but its Commit has VLSN 7" in txns.note_ack("n2", 5, 6)
    assert info.acked_by == [] and not info.released.is_set()
    assert txns.note_ack("n2", 5, 7) is None and info.released.is_set()
    # a replica acking a VLSN the master never logged: refused, its connection closed
    last = group.master.range.last
    group.replicas["n2"].channel.send(wire.encode("bank", "Ack", txn_id=1, vlsn=last + 10))
    group.net.deliver()
    with pytest.raises(FeederError, match=f"VLSN {last + 10}, which master n1 has not logged"):
        group.feeders["n2"].pump()
    assert group.master.feeder_txns.active_replicas() == ["n3"]


def test_a_replica_that_acks_twice_is_one_ack():
    """n2 sends its ack again (a replica that reconnects does): ALL with n3 cut off still times out."""
    group = make_group()
    group.net.partition(["n1", "n2"], ["n3"])
    master = group.master
    txn = master.begin(Durability(SYNC, NO_SYNC, ALL))
    master.database("accounts").put("k", "v", txn=txn)
    token = master.start_commit(txn, clock=ManualClock())
    again = []

    def pump_and_ack_again():
        moved = group.pump()
        if token.acked_by == ["n2"] and not again:  # once: the same ack a second time
            again.append(wire.encode("bank", "Ack", txn_id=txn.id, vlsn=token.info.vlsn))
            group.replicas["n2"].channel.send(again[0])
        return moved

    with pytest.raises(InsufficientAcksError, match="got 1 of 2 acks"):
        token.wait(pump_and_ack_again)
    assert token.acked_by == ["n2"]


def test_an_ack_that_comes_back_before_the_master_knows_its_commits_vlsn_counts():
    """Over TCP a feeder thread may read the ack before ``start_commit`` has read the Commit's VLSN."""
    txns = make_group().master.feeder_txns
    info = txns.register(5, Durability(), required=1)
    assert info.vlsn is None and txns.note_ack("n2", 5, 7) is None
    assert info.acked_by == ["n2"] and info.done and info.released.is_set()


@pytest.mark.parametrize("replica_sync, survives", [(SYNC, True), (WRITE_NO_SYNC, False), (NO_SYNC, False)])
def test_the_replica_acks_after_logging_with_its_sync_policy(replica_sync, survives):
    group = make_group(replicas=("n2",))
    replica = group.envs["n2"]
    write(group, Durability(SYNC, SYNC, MAJORITY), key="first")  # fsynced on the replica before its ack
    write(group, Durability(SYNC, replica_sync, MAJORITY), key="second")
    assert replica.database("accounts", create=False).get("second") == b"v"  # acked: replayed
    disk = replica.disk
    replica.crash()
    reopened = open_node("n2", disk)
    held = reopened.database("accounts", create=False)
    assert held.get("first") == b"v"
    assert (held.get("second") == b"v") is survives
