"""Commits waiting for acks over TCP (a real wait on an event, feeder and replica threads): the bench's group,
with tiny counts."""

from bench.replication_bench import TcpGroup
from minidb.replication.stream.durability import Durability, ReplicaAckPolicy, SyncPolicy


def test_commits_with_acks_over_tcp(tmp_path):
    group = TcpGroup(str(tmp_path))
    try:
        group.commits(3, Durability(SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy.ALL), start=0)
        # ALL: when commit returns, both replicas have replayed it
        for name in ("n2", "n3"):
            assert group.envs[name].database("bench", create=False).get("key0000002") is not None
        for n, policy in enumerate([ReplicaAckPolicy.SIMPLE_MAJORITY, ReplicaAckPolicy.NONE], start=1):
            group.commits(3, Durability(SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC, policy), start=3 * n)
        assert group.master.feeder_txns.pending == {}  # every wait ended
    finally:
        ends = group.close()
    assert ends == {"n1": 19, "n2": 19, "n3": 19}  # the creation of 'bench', then 9 commits of an LN and a Commit each
