"""Two fixes of the VLSN index: a direct tail truncation is refused (a crash would undo it), and a flushed
bucket is closed (a bucket written to disk is immutable)."""

import pytest

from minidb.io import SimDisk
from minidb.replication.errors import TailTruncationError, VLSNIndexCorruptionError
from minidb.replication.vlsn.allocator import encode_key
from minidb.replication.vlsn.recovery import read_index_database

from tests.replication.helpers import open_env, stream


def five_records(disk):
    """Database 't' (its creation is VLSN 1) and five records, VLSNs 2..6, all after the open's CkptStart."""
    env = open_env(disk, stride=2)
    db = env.database("t")
    lsns = [db.put(k, "1") for k in "abcde"]
    assert [env.log.read(lsn).vlsn for lsn in lsns] == [2, 3, 4, 5, 6]
    return env, db, lsns


# -- why a direct call is refused: what the index step alone does across a crash ------------------------------
def test_the_index_step_alone_comes_undone_at_recovery():
    disk = SimDisk("undone")
    env, _, _ = five_records(disk)
    assert env.vlsn_index.truncate_from_tail_in_rollback(5).last == 4  # flushed durably: range 1..4
    env.sync()
    env.crash()
    again = open_env(disk, stride=2)
    assert again.range.last == 6  # recovery re-tracked VLSNs 5 and 6 from CkptStart: they came back


def test_after_the_index_step_a_find_starts_from_the_new_entries():
    """The step's flush closes the cut bucket, so reused VLSNs start a bucket of their own: a forward scan
    for them starts at the new entries, never before the rolled-back ones (which it would return)."""
    env, db, old = five_records(SimDisk("find"))
    env.vlsn_index.truncate_from_tail_in_rollback(5)
    new = [db.put("x", "2"), db.put("y", "2"), db.put("z", "2")]  # VLSNs 5, 6 again, and 7
    assert [env.log.read(lsn).vlsn for lsn in new] == [5, 6, 7]
    assert [b.first for b in env.vlsn_index.tracker.buckets()][:2] == [1, 5]
    assert [env.vlsn_index.find(v).lsn for v in (5, 6, 7)] == new
    assert [env.vlsn_index.backward_scanner().find(v).lsn for v in (5, 6, 7)] == new


def test_the_index_step_alone_with_reused_vlsns_makes_the_environment_unopenable():
    disk = SimDisk("reused")
    env, db, _ = five_records(disk)
    env.vlsn_index.truncate_from_tail_in_rollback(5)
    db.put("x", "2")  # VLSN 5 again, after the rolled-back VLSN 6 that is still visible in the log
    env.sync()
    env.crash()
    with pytest.raises(VLSNIndexCorruptionError, match="VLSN 5 at .* right after VLSN 6"):
        open_env(disk, stride=2)


# -- the fix ------------------------------------------------------------------------------------------------------
def test_a_direct_tail_truncation_is_refused_and_changes_nothing():
    disk = SimDisk("refused")
    env, db, lsns = five_records(disk)
    index = env.vlsn_index
    before = (index.range, index.allocator.last, index.dump(), env.log.end_lsn, len(index.flushes))
    with pytest.raises(TailTruncationError, match=r"cannot truncate the VLSN index from VLSN 5 \(range 1..6 .*only "
                                                  r"a syncup rollback truncates the tail.*Nothing was changed"):
        index.truncate_from_tail(5)
    assert (index.range, index.allocator.last, index.dump(), env.log.end_lsn, len(index.flushes)) == before
    new = db.put("x", "2")
    assert env.log.read(new).vlsn == 7 and index.find(5).lsn == lsns[3]
    env.sync()
    env.crash()
    again = open_env(disk, stride=2)
    assert [v for v, _, _ in stream(again.log)] == [1, 2, 3, 4, 5, 6, 7]
    assert [again.vlsn_index.find(v).lsn for v in (5, 7)] == [lsns[3], new]


def test_a_flushed_bucket_is_closed_and_never_rewritten():
    env = open_env(SimDisk("immutable"), stride=2)
    db = env.database("t")  # VLSN 1
    for k in "abc":
        db.put(k, "1")  # VLSNs 2..4: with the creation, one bucket of file 1
    first = env.vlsn_index.flush_to_database()
    bucket = env.vlsn_index.tracker.buckets()[-1]
    assert 1 in first.written and bucket.closed
    stored = dict(env.internal_database("_vlsn_index").items())[encode_key(1)]
    for k in "def":
        db.put(k, "1")  # VLSNs 5..7, same file: a new bucket all the same
    second = env.vlsn_index.flush_to_database()
    assert second.written == (5,) and [b.first for b in env.vlsn_index.tracker.buckets()] == [1, 5]
    assert dict(env.internal_database("_vlsn_index").items())[encode_key(1)] == stored
    assert env.vlsn_index.flush_to_database().written == ()  # nothing new: nothing written
    buckets, _ = read_index_database(env.internal_database("_vlsn_index"))
    assert all(b.closed for b in buckets)
    assert [env.vlsn_index.find(v).lsn for v in range(1, 8)] == [lsn for _, lsn, _ in stream(env.log)]
