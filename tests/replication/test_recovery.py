"""Recovery of the VLSN index: the JE documentation's example, the merge rules, a crash during recovery."""

import pytest

from minidb.errors import CorruptionError, SimulatedCrash
from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, TRACE, LogManager, file_name
from minidb.log.header import INVISIBLE
from minidb.replication import VLSNIndexError, VLSNRange, VLSNRecoveryTracker, VLSNTracker, merge
from minidb.replication.cases import worked_recovery_case

from tests.replication.helpers import fixed_clock, open_env, stream, workload


def test_the_seeds_recovery_example():
    case = worked_recovery_case()
    assert list(case.marks) == ["100 firstActiveLSN", "200 Checkpoint start", "300 VLSN 78",
                                "400 VLSNIndex flushed here", "500 Checkpoint end", "600 VLSN 79"]
    assert case.in_order()  # the engine's LSNs, in the JE documentation's order
    assert case.flush.range.last == 78  # the index at "400" includes 78, not 79
    assert (case.range_before_crash.first, case.range_before_crash.last) == (1, 79)
    merge_result = case.merge
    assert (merge_result.flushed_range.first, merge_result.flushed_range.last) == (1, 78)
    assert (merge_result.recovered_range.first, merge_result.recovered_range.last) == (78, 79)  # swept up 78, 79
    assert (case.recovered_range.first, case.recovered_range.last) == (1, 79)
    assert case.recovered_range.last_txn_end == 79  # the Commit
    assert case.next_vlsn == 80
    env = case.recovered
    log_vlsns = {v: lsn for v, lsn, _ in stream(env.log)}
    assert stream(env.log)[0][::2] == (1, "MapLN")  # VLSN 1: the creation of "accounts", before its records
    assert log_vlsns[78] == case.marks["300 VLSN 78"] and log_vlsns[79] == case.marks["600 VLSN 79"]
    for vlsn in range(1, 80):
        assert env.vlsn_index.find(vlsn).lsn == log_vlsns[vlsn]
    assert env.env.recovery_info.last_ckpt_start == case.marks["200 Checkpoint start"]
    assert env.env.recovery_info.first_active_lsn == case.marks["100 firstActiveLSN"]


def tracker_with(pairs, stride=2):
    tracker = VLSNTracker(stride)
    for vlsn, lsn in pairs:
        tracker.track(vlsn, lsn, "LN")
    return tracker


def recovery_with(pairs, stride=2):
    tracker = VLSNRecoveryTracker(stride, 1000, 100_000)
    for vlsn, lsn in pairs:
        tracker.track(vlsn, lsn, "LN")
    return tracker


def test_merge_the_recovery_tracker_wins_where_they_overlap():
    flushed = tracker_with([(v, LSN(1, 100 * v)) for v in range(1, 10)])
    stale = flushed.buckets()[-1]
    recovered = recovery_with([(v, LSN(2, 100 * v)) for v in range(6, 13)])
    result = merge(flushed, recovered)
    assert (result.merged_range.first, result.merged_range.last) == (1, 12)
    assert result.buckets_cut == 1
    assert flushed.get_lte_lsn(5) == LSN(1, 500)  # kept from the flushed index
    for v in range(6, 13):  # from the recovery tracker, never the flushed 600..900
        assert flushed.get_lte_lsn(v).file == 2 and flushed.get_gte_lsn(v).file == 2
    assert stale.last == 5


def test_merge_meeting_exactly_and_from_nothing():
    flushed = tracker_with([(v, LSN(1, 100 * v)) for v in range(1, 6)])
    result = merge(flushed, recovery_with([(6, LSN(1, 600)), (7, LSN(1, 700))]))
    assert (result.merged_range.first, result.merged_range.last) == (1, 7) and result.buckets_cut == 0
    empty = VLSNTracker(2)
    assert merge(empty, recovery_with([(1, LSN(1, 100))])).merged_range == VLSNRange(1, 1)
    alone = tracker_with([(1, LSN(1, 100))])
    assert merge(alone, recovery_with([])).merged_range == VLSNRange(1, 1)


def test_merge_a_gap_is_an_error():
    flushed = tracker_with([(v, LSN(1, 100 * v)) for v in range(1, 6)])
    with pytest.raises(VLSNIndexError, match="VLSNs 6..6 have no mappings"):
        merge(flushed, recovery_with([(7, LSN(1, 700))]))
    with pytest.raises(VLSNIndexError, match="is empty"):
        merge(VLSNTracker(2), recovery_with([(3, LSN(1, 300))]))


def test_the_recovery_tracker_refuses_a_stream_with_a_gap():
    log = LogManager(SimDisk("gap"), clock=fixed_clock)
    for vlsn in (1, 2, 4):
        log.append(TRACE, {"message": f"v{vlsn}"}, vlsn=vlsn)
    tracker = VLSNRecoveryTracker(2, 1000, 100_000)
    with pytest.raises(VLSNIndexError, match="VLSN 4 .* right after VLSN 2"):
        for entry in log.scan():
            tracker.track_entry(entry)


def test_a_crash_during_recovery_then_recovery_again():
    disk = SimDisk("crash-in-recovery")
    env = open_env(disk, stride=2, max_mappings=3)
    workload(env, rounds=4)
    expected = env.range
    env.sync()
    env.crash(CrashMode.nothing())
    probe = disk.clone()
    before = len(probe.events)
    open_env(probe, stride=2, max_mappings=3)
    recovery_ops = sum(1 for e in probe.events[before:] if e.kind in ("write", "truncate", "fsync"))
    assert recovery_ops >= 3
    for after_ops in range(1, recovery_ops + 1):
        image = disk.clone()
        image.schedule_crash(after_ops=after_ops)
        with pytest.raises(SimulatedCrash):
            open_env(image, stride=2, max_mappings=3)
        again = open_env(image, stride=2, max_mappings=3)
        assert again.range == expected
        for vlsn, lsn, _ in stream(again.log):
            assert again.vlsn_index.find(vlsn).lsn == lsn


def test_an_invisible_entry_no_rollback_made_is_corruption_and_nothing_is_written():
    # The INVISIBLE bit is left out of the checksum (syncup sets it in place), so a flipped
    # bit passed every check and recovery silently dropped the last VLSN from the range.
    disk = SimDisk("invisible")
    env = open_env(disk)
    db = env.database("accounts")
    for i in range(6):
        db.put(f"acct{i}", f"balance {i}")
    env.checkpoint()  # the index is flushed; recovery re-tracks what follows
    db.put("acct6", "balance 6")
    env.sync()
    disk.crash(CrashMode.everything())
    reader = LogManager(disk, readonly=True, clock=fixed_clock)
    last = [e for e in reader.scan() if e.vlsn is not None][-1]
    reader.close()
    with disk.open(file_name(last.lsn.file)) as f:
        flags = f.read(last.lsn.offset + 5, 1)[0]
        f.write(last.lsn.offset + 5, bytes([flags | INVISIBLE]))
        f.fsync()
    before = {name: disk.durable_bytes(name) for name in disk.list()}
    with pytest.raises(CorruptionError) as raised:
        open_env(disk)
    assert str(last.lsn) in str(raised.value) and "INVISIBLE" in str(raised.value)
    assert {name: disk.durable_bytes(name) for name in disk.list()} == before
