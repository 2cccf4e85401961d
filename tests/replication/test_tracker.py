"""The tracker and the index over a real log: buckets per file, out-of-order puts, truncation at both ends."""

import functools
import itertools

import pytest

from minidb.log import LSN
from minidb.replication import VLSNIndexConfig, VLSNRangeError, VLSNTracker
from minidb.replication.vlsn.index import VLSN_INDEX

from tests.replication.helpers import trace_log


def index_over(log, stride=2, max_mappings=1000, max_distance=100_000, **extra):
    config = VLSNIndexConfig(stride=stride, max_mappings=max_mappings, max_distance=max_distance, trace=False,
                             **extra)
    return VLSN_INDEX.call(config, log=log)


def check_lookups(index, truth):
    """Every VLSN of the range: LTE <= it <= GTE, and both scanners find its entry."""
    forward, backward = index.forward_scanner(), index.backward_scanner()
    r = index.range
    for vlsn in range(r.first, r.last + 1):
        lsn = truth[vlsn]
        assert index.get_lte_lsn(vlsn) <= lsn <= index.get_gte_lsn(vlsn), vlsn
        assert forward.find(vlsn).lsn == lsn and backward.find(vlsn).lsn == lsn, vlsn


def test_in_order_puts_make_a_bucket_per_file_and_close_the_old_one():
    log, mappings = trace_log(30, file_max=400)
    index = index_over(log, stride=3)
    for vlsn, lsn in mappings:
        index.put(vlsn, lsn, "Trace")
    buckets = index.tracker.buckets()
    files = sorted({lsn.file for _, lsn in mappings})
    assert [b.file_number for b in buckets] == files  # one bucket per file here
    assert all(b.closed for b in buckets[:-1]) and not buckets[-1].closed
    for before, after in zip(buckets, buckets[1:], strict=False):
        assert before.last + 1 == after.first  # in order: no gaps between buckets
    r = index.range
    assert (r.first, r.last) == (1, 30)
    truth = dict(mappings)
    assert index.tracker.get_lte_bucket(1).get_lsn(1) == truth[1]  # the range's ends are mapped exactly
    assert buckets[-1].get_lsn(30) == truth[30]
    check_lookups(index, truth)


def test_only_the_last_bucket_is_updated():
    log, mappings = trace_log(30, file_max=400)
    index = index_over(log, stride=3)
    for vlsn, lsn in mappings[:25]:
        index.put(vlsn, lsn, "Trace")
    frozen = [b.encode() for b in index.tracker.buckets()[:-1]]
    for vlsn, lsn in list(reversed(mappings[:24])) + mappings[25:]:  # late repeats of old VLSNs, then new ones
        index.put(vlsn, lsn, "Trace")
    assert [b.encode() for b in index.tracker.buckets()[:len(frozen)]] == frozen
    assert index.tracker.stats["nMappingsNotKept"] > 0


def test_a_full_bucket_and_a_too_distant_mapping_start_new_buckets_in_the_same_file():
    log, mappings = trace_log(12, file_max=1 << 16)
    index = index_over(log, stride=2, max_mappings=2)
    for vlsn, lsn in mappings:
        index.put(vlsn, lsn, "Trace")
    assert [(b.first, b.last) for b in index.tracker.buckets()] == [(1, 4), (5, 8), (9, 12)]
    far = index_over(log, stride=4, max_distance=60)
    for vlsn, lsn in mappings:
        far.put(vlsn, lsn, "Trace")
    assert far.tracker.bucket_count > 1
    for bucket in far.tracker.buckets():
        stored = [lsn.offset for _, lsn in bucket.mappings()]
        assert all(b - a <= 60 for a, b in zip(stored, stored[1:], strict=False))
    check_lookups(far, dict(mappings))


def test_an_out_of_order_vlsn_does_not_move_the_range():
    log, mappings = trace_log(6)
    truth = dict(mappings)
    index = index_over(log, stride=2)
    for vlsn in (1, 2, 4):
        index.put(vlsn, truth[vlsn], "Trace")
    assert index.range.last == 4
    index.put(3, truth[3], "Commit")
    r = index.range
    assert (r.first, r.last, r.last_sync, r.last_txn_end) == (1, 4, 3, 3)
    assert index.tracker.stats["nOutOfOrderPuts"] == 1


def test_a_vlsn_below_the_first_one_registered_makes_a_head_bucket():
    log, mappings = trace_log(6, file_max=1 << 16)
    truth = dict(mappings)
    index = index_over(log, stride=2)
    for vlsn in (3, 4, 1, 2, 5, 6):
        index.put(vlsn, truth[vlsn], "Trace")
    assert [(b.first, b.last) for b in index.tracker.buckets()] == [(1, 1), (3, 6)]
    assert (index.range.first, index.range.last) == (1, 6)
    check_lookups(index, truth)


@functools.cache
def small_log():
    """6 VLSNs over three files, with non-replicated entries between them: built once, by the first test that
    reads it, never when the module is collected (a function, not a fixture, so that a project's tests can
    collect these tests again by importing them)."""
    return trace_log(6, file_max=256, every=2)


def test_the_small_log_spans_files():
    log, mappings = small_log()
    assert len({lsn.file for _, lsn in mappings}) >= 2


@pytest.mark.parametrize("stride", [1, 2, 3])
def test_out_of_order_puts_in_every_permutation_give_the_same_lookups(stride):
    """720 orders: whatever is kept, every VLSN of the range always finds its own entry, and the range is 1..6."""
    log, mappings = small_log()
    truth = dict(mappings)
    not_kept = bucket_counts = 0
    for order in itertools.permutations(mappings):
        index = index_over(log, stride=stride)
        for vlsn, lsn in order:
            index.put(vlsn, lsn, "Trace")
            r = index.range
            for v in (r.first, r.last):  # the range's ends always have mappings
                assert index.get_lte_lsn(v) <= truth[v] <= index.get_gte_lsn(v)
        assert (index.range.first, index.range.last) == (1, 6)
        found = [(index.find(v).lsn, index.backward_scanner().find(v).lsn) for v in range(1, 7)]
        assert found == [(truth[v], truth[v]) for v in range(1, 7)], order
        not_kept += index.tracker.stats["nMappingsNotKept"] > 0
        bucket_counts |= 1 << index.tracker.bucket_count
    assert not_kept > 100  # many orders lose mappings to closed buckets ...
    assert bucket_counts.bit_count() >= 3  # ... and they end with different numbers of buckets


def test_remove_from_tail_at_every_point_over_a_real_log():
    log, mappings = trace_log(24, file_max=400)
    truth = dict(mappings)
    for delete_start in range(1, 26):
        index = index_over(log, stride=3)
        for vlsn, lsn in mappings:
            index.put(vlsn, lsn, "Commit" if vlsn % 5 == 0 else "Trace")
        r = index.truncate_from_tail_in_rollback(delete_start)
        if delete_start == 1:
            assert r.is_empty and index.tracker.bucket_count == 0
            continue
        last = min(delete_start - 1, 24)
        assert (r.first, r.last) == (1, last)
        assert index.allocator.last == (last if delete_start <= 24 else 0)
        assert all(b.last <= last for b in index.tracker.buckets())
        check_lookups(index, truth)
        # the stream goes on at delete_start: the next put extends the range with a mapping
        if delete_start <= 24:
            index.put(delete_start, truth[delete_start], "Trace")
            assert index.range.last == delete_start
            assert index.get_gte_lsn(delete_start) == truth[delete_start]


def test_tail_truncation_needs_the_lsn_before_when_it_cannot_find_it():
    tracker = VLSNTracker(stride=4)
    for vlsn in range(1, 10):
        tracker.track(vlsn, LSN(1, 100 * vlsn), "LN")
    with pytest.raises(VLSNRangeError):
        tracker.remove_from_tail(7, LSN(0xFFFFFFFF, 0xFFFFFFFF))  # VLSN 6 is not kept and no LSN was given
    assert tracker.range.last == 9  # unchanged
    tracker.remove_from_tail(6, LSN(0xFFFFFFFF, 0xFFFFFFFF))  # VLSN 5 is on a stride: found in the bucket
    assert tracker.range.last == 5 and tracker.get_lte_lsn(5) == LSN(1, 500)


def test_lookups_outside_the_range_are_errors():
    log, mappings = trace_log(5)
    index = index_over(log)
    for vlsn, lsn in mappings:
        index.put(vlsn, lsn, "Trace")
    for vlsn in (0, 6):
        with pytest.raises(VLSNRangeError):
            index.get_lte_lsn(vlsn)
        with pytest.raises(VLSNRangeError):
            index.find(vlsn)
