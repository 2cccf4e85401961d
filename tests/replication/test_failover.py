"""Failover on the in-memory network (minidb.replication.group.failover): elect, lose the master, elect again, rejoin.

A three-node group writes with SIMPLE_MAJORITY; the master is cut off and commits a tail nobody acknowledges;
the other two elect a new master that writes more; the old master rejoins (syncup rolls its tail back), a
crashed replica rejoins after recovery, and a crashed old master rejoins by a network restore: every node
ends with the same records and the same VLSN stream.
"""

from minidb.io import CrashMode, SimDisk
from minidb.logstore import ManualClock
from minidb.replication import ReplicatedEnvironment, ReplicationConfig, VLSNIndexConfig
from minidb.replication.errors import InsufficientAcksError
from minidb.replication.group.failover import FailoverGroup
from minidb.replication.group.membership import RepGroup, RepNode
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy
from minidb.replication.vlsn.scanner import stream_vlsn

from tests.replication.helpers import small_config

GROUP = RepGroup("bank", [RepNode("n1", "n1", 2), RepNode("n2", "n2"), RepNode("n3", "n3")])
MAJORITY = Durability(SyncPolicy.SYNC, SyncPolicy.SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY)
NONE = Durability(SyncPolicy.SYNC, SyncPolicy.SYNC, ReplicaAckPolicy.NONE)


def open_node(name, disk):
    """Each node's clock differs (as real clocks do), so two masters' Commits never look alike."""
    clock = lambda: 1_700_000_000.0 + int(name[1:]) / 1000  # noqa: E731
    return ReplicatedEnvironment.open(disk, small_config(clock=clock), VLSNIndexConfig(stride=3), group=GROUP,
                                      node_name=name)


def new_group():
    clock = ManualClock()
    envs = {name: open_node(name, SimDisk(name)) for name in ("n1", "n2", "n3")}
    return FailoverGroup(envs, clock, reopen=open_node)


def write(group, key, value, durability=MAJORITY):
    env = group.master_env
    txn = env.begin(durability)
    env.database("accounts").put(key, value, txn=txn)
    return env.commit(txn, clock=group.clock, timeout_ms=500, pump=group.pump)


def records(env):
    return dict(env.database("accounts", create=False).items()) if env.env.db_tree.get("accounts") else {}


def stream(env):
    return [(v, e.type_name) for e in env.log.scan() if (v := stream_vlsn(e)) is not None]


def assert_all_equal(group):
    envs = [group.envs[n] for n in ("n1", "n2", "n3")]
    assert all(env is not None for env in envs)
    assert records(envs[0]) == records(envs[1]) == records(envs[2])
    assert stream(envs[0]) == stream(envs[1]) == stream(envs[2])
    assert not group.errors


def restart_the_old_master_past_the_rollback_limit(group, txn_rollback_limit=0):
    """Master n1 commits a tail nobody acknowledges and crashes; the others elect a new master that writes
    "c"; n1 restarts with ``txn_rollback_limit`` (0: its tail's one committed transaction is past it, so
    the next election steps give it a network restore). The new master."""
    group.partition({"n1"}, {"n2", "n3"})
    write(group, "tail", "unacknowledged", NONE)
    n1_disk = group.envs["n1"].disk
    group.crash("n1", CrashMode.everything())
    group.heal()
    new = group.elect()
    write(group, "c", "3")
    group.restart("n1", n1_disk).rep_config = ReplicationConfig(txn_rollback_limit=txn_rollback_limit)
    return new


def test_a_restarted_old_master_rolls_back_across_recovery_s_checkpoint_by_hard_recovery():
    """The same restart under the default limit: the tail's Commit lies before the checkpoint recovery
    ended with, so the rollback finishes by hard recovery; no network restore."""
    group = new_group()
    group.elect()
    write(group, "a", "1")
    new = restart_the_old_master_past_the_rollback_limit(group, txn_rollback_limit=10)
    assert group.elect() == new
    assert group.restores == [] and [name for name, _ in group.rollbacks] == ["n1"]
    assert group.rollbacks[0][1].hard_recovery is not None
    assert records(group.envs["n1"]) == {b"a": b"1", b"c": b"3"}
    assert_all_equal(group)


def test_write_lose_the_master_elect_write_more_rejoin_all_equal():
    group = new_group()
    assert group.elect() == "n1"  # equal logs: the priority
    write(group, "a", "1")
    write(group, "b", "2")
    group.partition({"n1"}, {"n2", "n3"})
    write(group, "tail", "unacknowledged", NONE)  # on n1 only
    try:
        write(group, "tail2", "not enough acks")  # logged on n1, no replica can ack it
        raise AssertionError("a majority commit cut off from the majority returned")
    except InsufficientAcksError:
        pass
    new = group.elect()
    assert new in ("n2", "n3") and group.envs["n1"].state.value == "MASTER"  # n1 does not know yet
    write(group, "c", "3")
    group.heal()
    assert group.elect() == new
    assert [name for name, _ in group.rollbacks] == ["n1"]
    rolled_back = group.rollbacks[0][1]
    assert sorted(t for _, _, t in rolled_back.rolled_back) == ["Commit", "Commit", "LN_TX", "LN_TX"]
    assert records(group.envs["n1"]) == {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert_all_equal(group)


def test_a_crashed_replica_rejoins_after_recovery_and_a_crashed_old_master_by_a_network_restore():
    group = new_group()
    group.elect()
    write(group, "a", "1")
    other = "n3"
    disk = group.envs[other].disk
    group.crash(other)
    write(group, "b", "2")  # n1 and n2 make a majority
    group.restart(other, disk)
    assert group.elect() == "n1" and records(group.envs[other]) == {b"a": b"1", b"b": b"2"}
    new = restart_the_old_master_past_the_rollback_limit(group)
    assert group.elect() == new
    assert group.restores == ["n1"] and group.crashes == ["n3", "n1"]
    assert any(e.name == "restore.marker" for e in group.disks["n1"].events)  # over the wire, staged, installed
    assert records(group.envs["n1"]) == {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert_all_equal(group)


def test_a_node_that_crashes_while_it_recovers_on_a_network_restore_s_files_stays_down_and_rejoins_later():
    """A crash during the recovery that follows a network restore stops that node only (the group's step
    goes on); restarted later, the node opens the restored files and rejoins."""
    crash_on_restored = []

    def open_crashing_on_a_restored_disk(name, disk):
        if name == "n1" and group.restores and not crash_on_restored:  # its first open on the restored files
            crash_on_restored.append(disk)
            disk.schedule_crash(after_ops=1)
        return open_node(name, disk)

    group = new_group()
    group.reopen = open_crashing_on_a_restored_disk
    group.elect()
    write(group, "a", "1")
    new = restart_the_old_master_past_the_rollback_limit(group)  # a network restore, whose recovery crashes
    assert group.elect() == new
    assert group.restores == ["n1"] and group.crashes == ["n1", "n1"] and group.envs["n1"] is None
    assert group.disks["n1"] is crash_on_restored[0]
    group.restart("n1")
    assert group.elect() == new
    assert records(group.envs["n1"]) == {b"a": b"1", b"c": b"3"}
    assert_all_equal(group)


def test_an_old_master_with_a_longer_unacknowledged_tail_does_not_win_over_an_acknowledged_commit():
    """Elections compare logs by their last TermStart first: n1's tail reaches further, but n3 holds a commit
    that the newer term's master had a majority acknowledge, and n1 must not win and roll it back."""
    group = new_group()
    assert group.elect() == "n1"
    write(group, "a", "1")
    group.partition({"n1"}, {"n2", "n3"})
    for i in range(4):  # on n1 only: its log now reaches further than anybody's
        write(group, f"tail{i}", "unacknowledged", NONE)
    new = group.elect()
    assert new in ("n2", "n3")
    write(group, "c", "acknowledged")  # by the other one of n2, n3: a majority
    acked_by = "n3" if new == "n2" else "n2"
    assert group.envs["n1"].range.last_txn_end > group.envs[acked_by].range.last_txn_end
    assert group.envs[acked_by].last_term > group.envs["n1"].last_term
    disk = group.envs[new].disk
    group.crash(new)
    group.heal()
    assert group.elect() == acked_by  # n1's log is longer, but of an older term
    assert records(group.envs["n1"])[b"c"] == b"acknowledged"
    assert b"tail0" not in records(group.envs["n1"])
    group.restart(new, disk)
    assert group.elect() == acked_by
    assert_all_equal(group)


def test_a_master_logs_a_term_start_first_and_replicas_receive_it():
    group = new_group()
    assert group.elect() == "n1"
    write(group, "a", "1")
    assert group.settle() >= 0
    for name in ("n1", "n2", "n3"):
        first = stream(group.envs[name])[0]
        assert first == (1, "TermStart") and group.envs[name].last_term == group.envs["n1"].last_term >= 1
