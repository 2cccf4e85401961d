"""The VLSN index in a replicated environment: VLSNs, flushing, scanners, waiting, truncation at both ends."""

import threading

import pytest

from minidb.io import CrashMode, SimDisk
from minidb.log import LSN, TRACE, LogManager, file_name
from minidb.logstore import Environment, EnvironmentHooks
from minidb.replication import (
    IndexClosedError,
    ReplicatedEnvironment,
    VLSNIndexConfig,
    VLSNRangeError,
    WaitTimeoutError,
)
from minidb.replication.vlsn.index import VLSN_INDEX
from minidb.replication.vlsn.range import SYNC_TYPES, TXN_END_TYPES
from minidb.replication.vlsn.recovery import read_index_database
from minidb.replication.vlsn.tracker import VLSNTracker

from tests.replication.helpers import fixed_clock, open_env, small_config, stream, workload


def lookups(index, first, last):
    return [(index.get_lte_lsn(v), index.get_gte_lsn(v)) for v in range(first, last + 1)]


def test_replicated_entries_get_vlsns_1_2_3_and_the_range_follows_them():
    env = open_env(SimDisk("vlsns"))
    workload(env)
    found = stream(env.log)
    assert [v for v, _, _ in found] == list(range(1, len(found) + 1))
    assert {t for _, _, t in found} == {"MapLN", "LN", "LN_TX", "DEL_LN_TX", "Commit", "Abort", "Matchpoint"}
    assert [t for _, _, t in found].count("MapLN") == 1 and found[0][2] == "MapLN"  # the creation of 'accounts'
    r = env.range
    assert (r.first, r.last) == (1, len(found))
    assert r.last_sync == max(v for v, _, t in found if t in SYNC_TYPES)
    assert r.last_txn_end == max(v for v, _, t in found if t in TXN_END_TYPES)
    assert r.last_sync != r.last_txn_end  # the last round logged a Matchpoint after its Abort
    assert env.vlsn_index.allocator.last == len(found)
    internal = env.internal_database("_vlsn_index")
    assert not env.env.db_tree.get("_vlsn_index").replicated and internal.name == "_vlsn_index"
    for vlsn, lsn, _ in found:
        assert env.vlsn_index.find(vlsn).lsn == lsn


def test_the_index_is_flushed_at_every_checkpoint_and_not_on_every_put():
    env = open_env(SimDisk("flush"))
    db = env.database("accounts")
    created = env.range.last  # the creation of 'accounts' (its MapLN) is the stream's first entry
    assert created == 1
    index_db = env.env.db_tree.get("_vlsn_index")
    flushes = len(env.vlsn_index.flushes)
    before = env.log.last_lsn
    for i in range(30):
        db.put(f"k{i}", "v")
    assert len(env.vlsn_index.flushes) == flushes
    assert not any(e["db_id"] == index_db.id for e in env.log.scan(before) if e.type_name in ("LN", "LN_TX"))
    stored, _ = read_index_database(env.internal_database("_vlsn_index"))
    assert sum(b.last for b in stored) == 0  # only the range of the empty index, flushed at open
    result = env.checkpoint()
    step6 = next(line for line in result.trace if line.startswith("step 6"))
    assert "flushed buckets 1, " in step6 and f"range 1..{created + 30}" in step6
    buckets, stored_range = read_index_database(env.internal_database("_vlsn_index"))
    assert (stored_range.first, stored_range.last) == (1, created + 30)
    assert [b.first for b in buckets] == [b.first for b in env.vlsn_index.tracker.buckets()]
    flush = env.vlsn_index.flushes[-1]
    assert result.ckpt_start_lsn < flush.range_lsn < flush.commit_lsn < result.ckpt_end_lsn
    env.checkpoint()  # nothing changed: only the range record is written again
    assert env.vlsn_index.flushes[-1].written == ()


def test_flush_and_reload_give_the_same_lookups():
    disk = SimDisk("reload")
    env = open_env(disk, stride=3, max_mappings=4)
    workload(env, rounds=8)
    env.checkpoint()
    r = env.range
    expected = lookups(env.vlsn_index, r.first, r.last)
    buckets, stored = read_index_database(env.internal_database("_vlsn_index"))
    reloaded = VLSNTracker(3, 4)
    reloaded.load(buckets, stored)
    assert stored == r and lookups(reloaded, r.first, r.last) == expected
    env.crash(CrashMode.nothing())  # everything was flushed and synced by the checkpoint
    again = open_env(disk, stride=3, max_mappings=4)
    assert again.range == r and lookups(again.vlsn_index, r.first, r.last) == expected
    assert again.vlsn_index.merge_result.recovered_range.is_empty  # nothing after the CkptStart to re-track


def test_vlsns_ascend_across_restarts():
    disk = SimDisk("restarts")
    env = open_env(disk)
    workload(env, rounds=2)
    last = env.range.last
    env.close()
    env = open_env(disk)
    assert env.vlsn_index.allocator.last == last
    lsn = env.database("accounts").put("next", "1")
    assert env.log.read(lsn).vlsn == last + 1
    env.sync()
    env.crash()
    env = open_env(disk)
    assert env.range.last == last + 1 and env.vlsn_index.find(last + 1).lsn == lsn


def test_scanners_hold_their_bucket():
    env = open_env(SimDisk("scan"), stride=2)
    workload(env, rounds=4)
    index = env.vlsn_index
    forward = index.forward_scanner()
    for vlsn in range(1, index.range.last + 1):
        forward.find(vlsn)
    buckets = index.tracker.bucket_count
    assert forward.tracker_lookups <= buckets + 1  # one per bucket, the rest from the bucket held
    assert forward.bucket_hits >= index.range.last - forward.tracker_lookups
    backward = index.backward_scanner()
    for vlsn in range(index.range.last, 0, -1):
        backward.find(vlsn)
    assert backward.tracker_lookups <= 2 * buckets
    assert forward.get_start_lsn(1) == index.get_lte_lsn(1)


def test_a_wait_for_vlsn_that_times_out():
    env = open_env(SimDisk("wait-timeout"))
    db = env.database("accounts")  # VLSN 1: its creation
    db.put("a", "1")  # VLSN 2
    index = env.vlsn_index
    with pytest.raises(WaitTimeoutError) as caught:
        index.wait_for_vlsn(3, timeout=0.01)
    assert caught.value.vlsn == 3 and caught.value.last == 2
    assert index.stats["nWaitTimeouts"] == 1 and index.waiting_for() == []
    item = index.wait_for_vlsn(2, timeout=0)  # already logged: at once, from the log item cache
    assert item.vlsn == 2 and item.type_name == "LN"
    assert index.wait_for_vlsn(1, timeout=0).type_name == "MapLN"


def test_a_wait_for_vlsn_woken_by_a_put_from_another_thread():
    env = open_env(SimDisk("wait-woken"))
    db = env.database("accounts")  # VLSN 1: its creation
    db.put("a", "1")  # VLSN 2
    index = env.vlsn_index
    got, errors = [], []
    done = threading.Event()

    def feeder():
        try:
            got.append(index.wait_for_vlsn(3, timeout=30))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        done.set()

    thread = threading.Thread(target=feeder)
    thread.start()
    assert index.await_waiter(3, timeout=30)  # the feeder is blocked on the latch for VLSN 3
    assert not done.is_set()
    lsn = db.put("b", "2")  # the application thread logs VLSN 3; its put releases the latch
    assert done.wait(30)
    thread.join()
    assert errors == [] and got[0].vlsn == 3 and got[0].lsn == lsn
    assert index.stats["nWaits"] == 1 and index.stats["nWaitLatchHits"] == 1


def test_closing_releases_waiting_feeders():
    env = open_env(SimDisk("wait-close"))
    index = env.vlsn_index
    errors = []
    thread = threading.Thread(target=lambda: errors.append(pytest.raises(IndexClosedError, index.wait_for_vlsn, 1, 30)))
    thread.start()
    assert index.await_waiter(1, timeout=30)
    env.close()
    thread.join()
    assert len(errors) == 1
    with pytest.raises(IndexClosedError):
        index.wait_for_vlsn(5, timeout=0)


def test_puts_from_many_threads_arrive_out_of_order_and_still_map_every_vlsn():
    log = LogManager(SimDisk("threads"), file_max=600, clock=fixed_clock)
    index = VLSN_INDEX.call(VLSNIndexConfig(stride=3, trace=False), log=log)
    log.vlsn_allocator = index.allocator
    log.add_listener(index.log_listener)

    def writer(n):
        for i in range(60):
            log.append(TRACE, {"message": f"thread {n} entry {i}"}, replicated=True)
            log.append(TRACE, {"message": "local"})

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    found = stream(log)
    assert [v for v, _, _ in found] == list(range(1, 241))  # allocated under the latch: log order
    assert (index.range.first, index.range.last) == (1, 240)
    forward, backward = index.forward_scanner(), index.backward_scanner()
    for vlsn, lsn, _ in found:
        assert forward.find(vlsn).lsn == lsn and backward.find(vlsn).lsn == lsn


# -- head truncation (log cleaning) --------------------------------------------------------------------

def test_head_truncation_keeps_at_least_1000_vlsns():
    disk = SimDisk("head")
    env = ReplicatedEnvironment.open(disk, small_config(node_max_entries=64, file_max=16 * 1024,
                                                        buffer_size=8192, trace=False),
                                     VLSNIndexConfig(stride=10, trace=False))
    db = env.database("t")
    for i in range(1300):
        db.put(f"k{i % 16:02d}", f"value {i}")
    env.checkpoint()
    index = env.vlsn_index
    assert index.config.min_vlsn_index_size == 1000
    done = []
    for file_number in range(1, env.log.end_lsn.file):
        before = index.range
        result = index.truncate_head_for_file(file_number)
        if result.done:
            done.append(file_number)
            assert index.range.first == result.delete_end + 1 > before.first
            assert all(b.file_number > file_number for b in index.tracker.buckets())
        else:
            assert index.range == before and "fewer than min_vlsn_index_size 1000" in result.reason
        assert index.range.size >= 1000
    assert done and index.range.size < 1000 + 200  # it went as far as it could
    with pytest.raises(VLSNRangeError):
        index.truncate_head_for_file(env.log.end_lsn.file)  # never the last file
    r = index.range
    stream_now = {v: lsn for v, lsn, _ in stream(env.log) if v >= r.first}
    forward = index.forward_scanner()
    for vlsn in range(r.first, r.last + 1):
        assert forward.find(vlsn).lsn == stream_now[vlsn]
    env.crash(CrashMode.nothing())  # the truncation was made durable at once
    again = ReplicatedEnvironment.open(disk, small_config(node_max_entries=64, file_max=16 * 1024,
                                                          buffer_size=8192, trace=False),
                                       VLSNIndexConfig(stride=10, trace=False))
    assert again.range == r
    assert [b.first for b in again.vlsn_index.tracker.buckets()] == [b.first for b in index.tracker.buckets()]


def test_head_truncation_with_a_ghost_bucket():
    """A gap at the head (mappings dropped by out-of-order puts): a ghost bucket keeps the range's first mapped."""
    env = open_env(SimDisk("ghost"), file_max=1024)
    db = env.database("t")
    for i in range(40):
        db.put(f"k{i:02d}", "v" * 20)
    env.checkpoint()
    found = stream(env.log)
    by_file = {}
    for vlsn, lsn, _ in found:
        by_file.setdefault(lsn.file, []).append(vlsn)
    first_file = min(by_file)
    second = sorted(by_file)[1]
    assert len(by_file[second]) >= 3
    skipped = by_file[second][:2]  # the first two VLSNs of the next file arrive after its third
    index = VLSN_INDEX.call(VLSNIndexConfig(stride=2, min_vlsn_index_size=5, database_name="_vlsn_index_ghost"),
                      log=env.log)
    index.attach(env.env)
    truth = {v: lsn for v, lsn, _ in found}
    for vlsn, lsn, t in found:
        if vlsn not in skipped:
            index.put(vlsn, lsn, t)
    for vlsn in skipped:
        index.put(vlsn, truth[vlsn], "LN")  # too late: the bucket starting after them took over
    result = index.truncate_head_for_file(first_file)
    assert result.done and result.delete_end == by_file[first_file][-1]
    assert result.ghost_vlsn == skipped[0] == index.range.first
    ghost = index.tracker.buckets()[0]
    assert ghost.is_ghost and ghost.first_possible_lsn == LSN(second, 0)
    assert "ghost bucket VLSN" in index.dump()
    for vlsn in range(index.range.first, index.range.last + 1):
        assert index.find(vlsn).lsn == truth[vlsn] == index.backward_scanner().find(vlsn).lsn
    buckets, stored = read_index_database(env.internal_database("_vlsn_index_ghost"))
    assert buckets[0].is_ghost and stored == index.range  # made durable, ghost and all


def test_head_truncation_refuses_what_it_cannot_do():
    env = open_env(SimDisk("refuse"), file_max=1024)
    db = env.database("t")
    for i in range(30):
        db.put(f"k{i:02d}", "v" * 20)
    index = env.vlsn_index
    r = index.range
    assert not index.truncate_from_head(r.last - 5, 1).done  # fewer than 1000 would be left
    small = VLSN_INDEX.call(VLSNIndexConfig(min_vlsn_index_size=0), log=env.log)
    by_file = {}
    for vlsn, lsn, t in stream(env.log):
        small.put(vlsn, lsn, t)
        by_file.setdefault(lsn.file, []).append(vlsn)
    with pytest.raises(VLSNRangeError):
        small.truncate_from_head(r.last, env.log.end_lsn.file - 1)  # the end of the stream is never truncated
    crowded = next(f for f, vlsns in sorted(by_file.items()) if len(vlsns) >= 2)
    with pytest.raises(VLSNRangeError, match="still maps it"):  # the file holds later VLSNs: they would be lost
        small.truncate_from_head(by_file[crowded][0], crowded)
    assert small.range == r
    assert not small.truncate_from_head(0, 1).done
    assert "fewer than min_vlsn_index_size 1000" in index.truncate_from_head(r.last, 1).reason


# -- tail truncation (syncup rollback) --------------------------------------------------------------------------

def make_invisible(env, lsns):
    """What syncup does to rolled-back entries: set their INVISIBLE flag in place (not covered by the checksum)."""
    env.log.flush()
    for lsn in lsns:
        with env.disk.open(file_name(lsn.file)) as f:
            flags = f.read(lsn.offset + 5, 1)[0]
            f.write(lsn.offset + 5, bytes([flags | 0x08]))
            f.fsync()


def test_tail_truncation_after_a_rollback_survives_recovery():
    """The JE documentation's syncup example (VLSN 1 kept; VLSNs 2 and 3 overmarked, rolled back to 1 and logged
    again at new LSNs), three VLSNs on: a syncup needs a sync-able entry to end at, so the creation of 't'
    (VLSN 1) and a committed transaction (2, 3) come first, and the example's VLSN n is VLSN n + 3 here."""
    disk = SimDisk("rollback")
    env = open_env(disk, stride=2)
    db = env.database("t")  # VLSN 1 MapLN
    with env.begin() as txn:
        db.put("a", "1", txn=txn)  # VLSN 2 LN_TX, 3 Commit
    env.log_matchpoint()  # VLSN 4: the matchpoint syncup will find (the example's VLSN 1)
    offset = 3
    env.checkpoint()
    old = [db.put("b", "2"), db.put("c", "3")]  # the example's VLSNs 2, 3: not on the master
    assert [env.log.read(lsn).vlsn - offset for lsn in old] == [2, 3]
    make_invisible(env, old)
    r = env.vlsn_index.truncate_from_tail_in_rollback(2 + offset)  # rollback to the example's VLSN 1
    assert (r.first, r.last, r.last_sync, r.last_txn_end) == (1, 1 + offset, 1 + offset, 3)
    new = [db.put("b", "20"), db.put("c", "30")]  # the master's VLSNs 2 and 3, restarting at 2
    assert [env.log.read(lsn).vlsn - offset for lsn in new] == [2, 3]
    again_vlsns = (2 + offset, 3 + offset)
    assert [env.vlsn_index.find(v).lsn for v in again_vlsns] == new
    env.sync()
    env.crash(CrashMode.nothing())
    again = open_env(disk, stride=2)
    assert again.vlsn_index.merge_result.recovered_range.first == 2 + offset
    assert (again.range.first, again.range.last) == (1, 3 + offset)
    assert [again.vlsn_index.find(v).lsn for v in again_vlsns] == new
    assert [again.vlsn_index.backward_scanner().find(v).lsn for v in again_vlsns] == new
    assert again.vlsn_index.merge_result is not None


def test_the_step_6_hook_line_is_the_index_flush():
    disk = SimDisk("hook")
    plain = Environment.open(disk, small_config(), EnvironmentHooks())
    assert any("nothing to flush (not replicated)" in line for line in plain.checkpoint().trace)
    plain.close()
    env = open_env(SimDisk("hook-replicated"))  # a plain environment refuses to be opened as a replicated one
    line = next(l for l in env.checkpoint().trace if l.startswith("step 6"))
    assert line.startswith("step 6: VLSN index: flushed buckets none and the range empty at ")


def test_the_log_stores_own_checks_hold_with_replication_in_it():
    """Matchpoints, VLSN-tagged entries and the _vlsn_index flushes keep the log store's trees and counts right."""
    from minidb.logstore.tools.verify import live_but_obsolete, utilization_totals_problems, verify_tree

    disk = SimDisk("logstore-checks")
    env = open_env(disk, stride=2, max_mappings=3)
    workload(env, rounds=8)
    for _ in range(2):
        assert verify_tree(env.env) == [] and live_but_obsolete(env.env) == []
        assert utilization_totals_problems(env.env) == []
        env.sync()
        env.crash()
        env = open_env(disk, stride=2, max_mappings=3)


def test_head_truncation_drops_the_truncated_vlsns_from_the_log_item_cache():
    disk = SimDisk("head-cache")
    env = ReplicatedEnvironment.open(disk, small_config(file_max=1024, buffer_size=512, trace=False),
                                     VLSNIndexConfig(stride=4, min_vlsn_index_size=0, trace=False))
    db = env.database("t")
    for i in range(40):
        db.put(f"k{i:02d}", "v" * 20)
    env.checkpoint()
    index = env.vlsn_index
    oldest = min(v for v in range(1, index.range.last + 1) if index.log_item_cache.get(v) is not None)
    file_number = index.log_item_cache.get(oldest).lsn.file
    assert file_number < env.log.end_lsn.file
    result = index.truncate_head_for_file(file_number)  # VLSNs up to the oldest cached one and past it
    assert result.done and oldest <= result.delete_end
    assert all(index.log_item_cache.get(v) is None for v in range(1, result.delete_end + 1))
    assert index.log_item_cache.get(index.range.last).entry is not None  # the newest stay, entry in hand
