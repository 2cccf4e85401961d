"""Golden text: dumps of buckets and of an index, and printlog of a replicated environment's log."""

from minidb.cli import main
from minidb.io import OSDisk, SimDisk
from minidb.log import LSN
from minidb.replication import GhostBucket, ReplicatedEnvironment, VLSNBucket, VLSNIndexConfig
from minidb.replication.cases import case_config, example_buckets
from minidb.replication.vlsn.range import VLSNRange
from minidb.replication.vlsn.tracker import VLSNTracker
from minidb.viz.vlsn_demo import holes_example

from tests.cli.test_cli import check_golden


def test_bucket_and_index_dumps_golden():
    sections = ["# the JE documentation's example: VLSNs 9..15 over files 10 and 11, stride 4"]
    sections += [b.dump() for b in example_buckets(4)]
    sections.append("# out of order: 9, 15, 11 into one bucket of file 10, stride 2 (13 is a hole)")
    sections.append(holes_example((9, 15, 11), stride=2).dump())
    sections.append("# a ghost bucket at the head, after log cleaning")
    tracker = VLSNTracker(stride=4)
    after_ghost = VLSNBucket(4, 4, 1000, 100_000, 33)
    after_ghost.put(33, LSN(4, 0x1C0))
    tracker.load([GhostBucket(30, LSN(3, 0), LSN(4, 0x1C0)), after_ghost], VLSNRange(30, 33))
    sections.append(tracker.dump())
    sections.append("# a replicated environment's index: the creation of 'accounts' (VLSN 1), 36 records, a "
                    "transaction and a Matchpoint in 1 KiB files, stride 3, 4 offsets a bucket")
    env = ReplicatedEnvironment.open(SimDisk("golden"), case_config(file_max=1024, buffer_size=512),
                                     VLSNIndexConfig(stride=3, max_mappings=4))
    db = env.database("accounts")
    for i in range(36):
        db.put(f"acct{i:02d}", str(i))
    with env.begin() as txn:
        db.put("acct00", "moved", txn=txn)
        db.delete("acct01", txn=txn)
    env.log_matchpoint()
    env.checkpoint()
    sections.append(env.vlsn_index.dump())
    check_golden("vlsn_index_dump.txt", "\n".join(sections) + "\n")


def test_printlog_shows_vlsns_golden(tmp_path, capsys):
    path = tmp_path / "node"
    env = ReplicatedEnvironment.open(OSDisk(path, create=True), case_config(), VLSNIndexConfig(stride=2))
    db = env.database("accounts")  # VLSN 1: the creation, then the records 2..7
    db.put("alice", "100")
    with env.begin() as txn:
        db.put("bob", "50", txn=txn)
    txn = env.begin()
    db.put("carol", "75", txn=txn)
    txn.abort()
    env.log_matchpoint()
    env.close()
    assert main(["printlog", str(path), "--type", "Matchpoint"]) == 0
    matchpoint = capsys.readouterr().out
    assert '<vlsn v="7"/><Matchpoint master_node_id="1"' in matchpoint
    assert main(["printlog", str(path)]) == 0
    out = capsys.readouterr().out
    replicated = [line for line in out.splitlines() if 'isReplicated="1"' in line]
    assert [line.split('<vlsn v="')[1].split('"')[0] for line in replicated] == ["1", "2", "3", "4", "5", "6", "7"]
    assert [line.split(' type="')[1].split('"')[0] for line in replicated] == [
        "MapLN", "LN", "LN_TX", "Commit", "LN_TX", "Abort", "Matchpoint"]
    check_golden("printlog_replication.txt", out)
    assert main(["verify", str(path)]) == 0
