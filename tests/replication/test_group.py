"""A group's nodes and states: only the master writes and allocates VLSNs; a replica replays the master's
entries with the master's VLSNs and transaction ids; internal transactions take negative ids."""

import pytest

from minidb.io import SimDisk
from minidb.log import NULL_LSN
from minidb.replication import ReplicatedEnvironment
from minidb.replication.errors import GroupConfigError, ReplayError, ReplicaWriteError, UnknownMasterError
from minidb.replication.group.membership import NodeState, RepGroup, RepNode
from minidb.replication.vlsn.scanner import stream_vlsn

from tests.replication.helpers import small_config, stream, workload

GROUP = RepGroup("bank", [RepNode("n1", "127.0.0.1:5001", 2), RepNode("n2", "127.0.0.1:5002"),
                          RepNode("n3", "127.0.0.1:5003", 0)])


def node(name, disk=None):
    return ReplicatedEnvironment.open(disk or SimDisk(name), small_config(), group=GROUP, node_name=name)


def test_a_group_describes_its_nodes_and_refuses_bad_descriptions():
    assert GROUP.node("n2").address == "127.0.0.1:5002" and GROUP.majority == 2
    assert not GROUP.node("n3").electable and GROUP.node("n1").electable
    with pytest.raises(GroupConfigError, match=r"node 'n9' is not a member of group 'bank' \(n1, n2, n3\)"):
        GROUP.node("n9")
    with pytest.raises(GroupConfigError, match="two nodes have the name 'a'"):
        RepGroup("g", [RepNode("a", "x"), RepNode("a", "y")])
    with pytest.raises(GroupConfigError, match="two nodes have the address 'x'"):
        RepGroup("g", [RepNode("a", "x"), RepNode("b", "x")])
    with pytest.raises(GroupConfigError, match="priority"):
        RepNode("a", "x", -1)
    with pytest.raises(GroupConfigError, match="has no nodes"):
        RepGroup("g", [])
    with pytest.raises(GroupConfigError, match="not a member"):
        node("n9")


def test_a_replica_refuses_writes_naming_the_master_and_changes_nothing():
    master, replica = node("n1"), node("n2")
    assert (master.state, replica.state) == (NodeState.UNKNOWN, NodeState.UNKNOWN)
    master.become_master()
    master.database("accounts").put("alice", "100")
    replica.become_replica("n1")
    end = replica.log.end_lsn
    with pytest.raises(ReplicaWriteError, match=r"cannot create database 'accounts': node n2 is a replica of "
                                                r"group 'bank'; write on the master n1 \(127.0.0.1:5001\)"):
        replica.database("accounts")
    replay_all(master, replica)  # VLSN 1 creates 'accounts' (the master's MapLN), VLSN 2 writes alice
    db = replica.database("accounts")  # exists now: a replica may read it
    txn = replica.begin()
    with pytest.raises(ReplicaWriteError, match="cannot put into 'accounts': node n2 is a replica"):
        db.put("bob", "1", txn=txn)
    with pytest.raises(ReplicaWriteError, match="cannot delete from 'accounts'"):
        db.delete("alice")
    with pytest.raises(ReplicaWriteError, match="cannot log a Matchpoint"):
        replica.log_matchpoint()
    assert db.get("alice", txn=txn) == b"100"
    txn.commit()  # read only: nothing to log
    assert [(v, t) for v, _, t in stream(replica.log)] == [(1, "MapLN"), (2, "LN")] and replica.log.end_lsn > end
    assert replica.env.locks.held_by(txn.id) == []
    replica.become_unknown()
    with pytest.raises(UnknownMasterError, match="node n2 of group 'bank' knows no master"):
        db.put("carol", "2")
    with pytest.raises(GroupConfigError, match="itself"):
        replica.become_replica("n2")


def test_only_the_master_allocates_vlsns():
    replica = node("n2")
    replica.become_master()
    db = replica.database("accounts")  # VLSN 1
    db.put("a", "1")  # VLSN 2
    replica.become_replica("n1")
    with pytest.raises(ReplicaWriteError, match="cannot allocate a VLSN"):
        replica.env.database("accounts").put("b", "2")  # the log store's own handle: the allocator refuses
    assert replica.range.last == 2


def replay_all(master, replica):
    """Replay the master's stream into the replica, entry by entry (what the next part's feeder sends)."""
    names = {impl.id: impl.name for impl in master.env.db_tree.by_name.values()}
    for entry in master.log.scan():
        vlsn = stream_vlsn(entry)
        if vlsn is not None and vlsn > replica.range.last:
            replica.replay(vlsn, entry.type_name, dict(entry.values), names.get(entry.values.get("db_id")))


def snapshot(env):
    return {name: list(env.database(name, create=False).items()) for name in env.env.database_names()}


def test_a_replica_applies_the_masters_entries_with_the_masters_vlsns_and_txn_ids():
    master, replica_disk = node("n1"), SimDisk("n2")
    master.become_master()
    replica = node("n2", replica_disk)
    replica.become_replica("n1")
    replica.checkpoint()  # an internal transaction (the index's flush) before any replicated one
    workload(master, rounds=4)
    replay_all(master, replica)

    def txn_stream(env):
        return [(stream_vlsn(e), e.type_name, e.txn_id) for e in env.log.scan() if stream_vlsn(e) is not None]

    assert txn_stream(replica) == txn_stream(master)
    assert snapshot(replica) == snapshot(master)
    internal = {e.txn_id for e in replica.log.scan() if e.txn_id is not None and stream_vlsn(e) is None}
    replicated = {e.txn_id for e in master.log.scan() if stream_vlsn(e) is not None and e.txn_id is not None}
    assert internal and all(t < 0 for t in internal)  # the VLSN index's flushes
    assert replicated and all(t > 0 for t in replicated)
    # it survives a crash, and the replica continues the stream; promoted, it continues the master's ids
    replica.sync()
    replica.crash()
    replica = node("n2", replica_disk)
    assert snapshot(replica) == snapshot(master) and replica.range == master.range
    replica.become_replica("n1")
    master.database("accounts").put("late", "1")
    replay_all(master, replica)
    assert snapshot(replica) == snapshot(master)
    replica.become_master()
    with replica.begin() as txn:
        replica.database("accounts").put("new", "x", txn=txn)
    assert txn.id > max(replicated) and replica.range.last == master.range.last + 2


def test_replay_refuses_what_does_not_continue_the_stream_and_writes_nothing():
    master, replica = node("n1"), node("n2")
    with pytest.raises(ReplayError, match="node n2 is UNKNOWN: only a replica replays"):
        replica.replay(1, "LN", {"key": b"k", "data": b"v"}, db_name="d")
    replica.become_replica("n1")
    end = replica.log.end_lsn
    cases = [
        ((2, "LN", {"key": b"k", "data": b"v"}, "d"), "expects VLSN 1 next; the master's LN has VLSN 2"),
        ((1, "Commit", {"txn_id": 4, "txn_prev_lsn": None, "time_ms": 0}, None),
         "Commit of txn 4 \\(VLSN 1\\) ends a transaction this replica never saw"),
        ((1, "LN", {"key": b"k", "data": b"v"}, "d"), "writes b'k' into database 'd', which the stream never "
                                                      "created on this replica"),
        ((1, "DEL_LN", {"key": b"k"}, "d"), "writes b'k' into database 'd', which the stream never created"),
        ((1, "CkptStart", {}, None), "CkptStart \\(VLSN 1\\) is not an entry of the replication stream"),
        ((1, "LN", {"key": b"k", "data": b"v"}, None), "needs the database's name"),
    ]
    for args, words in cases:
        with pytest.raises(ReplayError, match=words):
            replica.replay(*args)
    assert replica.range.is_empty and stream(replica.log) == []
    assert master.state is NodeState.UNKNOWN and replica.log.end_lsn == end and replica.env.database_names() == []
    # once the stream has created 'd', a deletion of a key the replica does not hold is refused all the same
    replica.replay(1, "MapLN", {"db_id": 3, "name": "d", "root_lsn": NULL_LSN, "internal": False,
                                "replicated": True, "prev_lsn": NULL_LSN}, "d")
    end = replica.log.end_lsn
    with pytest.raises(ReplayError, match=r"DEL_LN \(VLSN 2\) deletes b'k' from 'd', which this replica does not hold"):
        replica.replay(2, "DEL_LN", {"key": b"k"}, "d")
    assert [(v, t) for v, _, t in stream(replica.log)] == [(1, "MapLN")] and replica.log.end_lsn == end
