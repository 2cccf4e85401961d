"""Tests of exercise 12a: a VLSN bucket's offset array, holes, and its LTE/GTE lookups.

The worked example of JE's VLSNBucket documentation (docs/sources.md#vlsn-bucket) and small hand-made cases
give their expected answers in the test; the real-log tests take a replicated environment's own buckets and
check every answer against the log (the entry that carries each VLSN), never against minidb's functions.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on ``--exercise-impl``.
"""

from __future__ import annotations

import random

import pytest

from minidb.io import SimDisk
from minidb.log import LSN
from minidb.logstore import EnvironmentConfig
from minidb.replication import ReplicatedEnvironment, VLSNIndexConfig

EXAMPLE_FILE_10 = dict(file_number=10, first=9, stride=4, file_offsets=[100, 140], last=13, last_lsn=LSN(10, 140))
EXAMPLE_FILE_11 = dict(file_number=11, first=14, stride=4, file_offsets=[100], last=15, last_lsn=LSN(11, 120))
HOLES = dict(file_number=10, first=9, stride=2, file_offsets=[100, 0, 0, 160], last=15, last_lsn=LSN(10, 160))


# -- offset_array ---------------------------------------------------------------------------------------

def test_example_in_order_puts_keep_every_stride(impl):
    puts = [(9, 100), (10, 110), (11, 120), (12, 130), (13, 140)]
    assert impl.offset_array(9, 4, 1000, puts) == [100, 140]
    assert impl.offset_array(9, 1, 1000, puts) == [100, 110, 120, 130, 140]


def test_example_out_of_order_9_then_15(impl):
    """JE's VLSNBucket documentation: inserting 9, then 15, keeps an offset array of size 1 (stride 4)."""
    assert impl.offset_array(9, 4, 1000, [(9, 100), (15, 160)]) == [100]


def test_holes_from_out_of_order_puts(impl):
    assert impl.offset_array(9, 2, 1000, [(9, 100), (15, 160)]) == [100, 0, 0, 160]
    assert impl.offset_array(9, 2, 1000, [(9, 100), (15, 160), (11, 120)]) == [100, 120, 0, 160]


def test_holes_at_the_start_and_vlsns_before_first(impl):
    assert impl.offset_array(9, 2, 1000, [(13, 140), (8, 90)]) == [0, 0, 140]


def test_a_full_bucket_refuses_stride_vlsns(impl):
    puts = [(v, 10 * v) for v in range(1, 12)]
    assert impl.offset_array(1, 2, 3, puts) == [10, 30, 50]
    assert impl.offset_array(1, 2, 3, [(9, 90), (5, 50)]) == [0, 0, 50]


def test_every_order_ends_with_the_same_array(impl):
    rng = random.Random(7)
    puts = [(v, 100 + 8 * v) for v in range(5, 25)]
    expected = [100 + 8 * v for v in range(5, 25, 3)][:4]  # strides 5, 8, 11, 14 (max 4 offsets)
    for _ in range(30):
        order = puts[:]
        rng.shuffle(order)
        assert impl.offset_array(5, 3, 4, order) == expected


# -- get_lte_lsn / get_gte_lsn ----------------------------------------------------------------------------

def test_example_lookups(impl):
    assert impl.get_lte_lsn(vlsn=11, **EXAMPLE_FILE_10) == LSN(10, 100)
    assert impl.get_gte_lsn(vlsn=11, **EXAMPLE_FILE_10) == LSN(10, 140)
    assert impl.get_lte_lsn(vlsn=9, **EXAMPLE_FILE_10) == impl.get_gte_lsn(vlsn=9, **EXAMPLE_FILE_10) == LSN(10, 100)
    assert impl.get_lte_lsn(vlsn=13, **EXAMPLE_FILE_10) == impl.get_gte_lsn(vlsn=13, **EXAMPLE_FILE_10) == LSN(10, 140)


def test_example_the_last_mapping_off_the_stride(impl):
    assert impl.get_gte_lsn(vlsn=15, **EXAMPLE_FILE_11) == LSN(11, 120)
    assert impl.get_lte_lsn(vlsn=15, **EXAMPLE_FILE_11) == LSN(11, 120)
    assert impl.get_lte_lsn(vlsn=14, **EXAMPLE_FILE_11) == LSN(11, 100)
    assert impl.get_gte_lsn(vlsn=14, **EXAMPLE_FILE_11) == LSN(11, 100)


def test_lookups_skip_holes(impl):
    assert impl.get_lte_lsn(vlsn=14, **HOLES) == LSN(10, 100)
    assert impl.get_lte_lsn(vlsn=12, **HOLES) == LSN(10, 100)
    assert impl.get_gte_lsn(vlsn=10, **HOLES) == LSN(10, 160)
    assert impl.get_gte_lsn(vlsn=12, **HOLES) == LSN(10, 160)


def test_lookups_outside_the_bucket(impl):
    assert impl.get_lte_lsn(vlsn=8, **EXAMPLE_FILE_10) is None
    assert impl.get_gte_lsn(vlsn=14, **EXAMPLE_FILE_10) is None
    assert impl.get_lte_lsn(vlsn=20, **EXAMPLE_FILE_10) == LSN(10, 140)  # past the last: the last mapping
    assert impl.get_gte_lsn(vlsn=2, **EXAMPLE_FILE_10) == LSN(10, 100)  # before the first: the first mapping


def test_the_last_mapping_past_the_array(impl):
    bucket = dict(file_number=3, first=1, stride=4, file_offsets=[0x40, 0x90], last=7, last_lsn=LSN(3, 0x130))
    assert impl.get_lte_lsn(vlsn=6, **bucket) == LSN(3, 0x90)
    assert impl.get_gte_lsn(vlsn=6, **bucket) == LSN(3, 0x130)


@pytest.fixture(scope="module")
def replicated():
    config = EnvironmentConfig(node_max_entries=8, file_max=1500, checkpoint_bytes_interval=None,
                               clock=lambda: 1_700_000_000.0, trace=False)
    env = ReplicatedEnvironment.open(SimDisk("exercise-07"), config, VLSNIndexConfig(stride=3, max_mappings=3))
    db = env.database("t")
    for i in range(45):
        db.put(f"key{i:02d}", "v" * (i % 5))
        if i % 9 == 4:
            with env.begin() as txn:
                db.put(f"key{i:02d}", "in a txn", txn=txn)
    truth = {e.vlsn: e.lsn for e in env.log.scan() if e.vlsn is not None}
    return env, truth


def test_log_every_vlsn_of_every_real_bucket(impl, replicated):
    """A real index's buckets: LTE and GTE are kept mappings, the nearest ones, and bracket the entry's LSN."""
    env, truth = replicated
    buckets = env.vlsn_index.tracker.buckets()
    assert len(buckets) > 3
    for b in buckets:
        fields = dict(file_number=b.file_number, first=b.first, stride=b.stride, file_offsets=list(b.file_offsets),
                      last=b.last, last_lsn=b.last_lsn)
        kept = [b.first + i * b.stride for i, off in enumerate(b.file_offsets) if off] + [b.last]
        for vlsn in range(b.first, b.last + 1):
            lte = impl.get_lte_lsn(vlsn=vlsn, **fields)
            gte = impl.get_gte_lsn(vlsn=vlsn, **fields)
            assert lte == truth[max(k for k in kept if k <= vlsn)]
            assert gte == truth[min(k for k in kept if k >= vlsn)]
            assert lte <= truth[vlsn] <= gte


def test_log_the_offset_array_of_a_real_file(impl, replicated):
    """Puts of one file's VLSNs, in order and reversed: the strides of its first bucket, nothing else."""
    env, truth = replicated
    bucket = env.vlsn_index.tracker.buckets()[1]
    puts = [(v, truth[v].offset) for v in range(bucket.first, bucket.last + 1)]
    expected = [truth[v].offset for v in range(bucket.first, bucket.last + 1, 3)][:3]
    assert impl.offset_array(bucket.first, 3, 3, puts) == expected
    assert impl.offset_array(bucket.first, 3, 3, list(reversed(puts))) == expected


# What student.py may import from the modules that implement this exercise (minidb grade refuses the rest).
STUDENT_MAY_IMPORT = {"minidb.log": ["LSN"]}


# Typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test): minidb's
# answer with one rule broken.
def _bucket(file_number, first, stride, file_offsets, last, last_lsn, max_mappings=None):
    from minidb.replication.vlsn.bucket import VLSNBucket
    bucket = VLSNBucket(file_number, stride, max_mappings or max(1, len(file_offsets)), 1 << 32, first)
    bucket.file_offsets = list(file_offsets)
    bucket.last, bucket.last_lsn = last, last_lsn
    return bucket


def _offsets(first, stride, max_mappings, puts):
    bucket = _bucket(1, first, stride, [], first, LSN(1, 0), max_mappings)
    for vlsn, offset in puts:
        bucket.put(vlsn, LSN(1, offset))
    return list(bucket.file_offsets)


def _lte_stops_at_a_hole(file_number, first, stride, offsets, last, last_lsn, vlsn):
    index = (vlsn - first) // stride
    if first <= vlsn < last and index < len(offsets) and offsets[index] == 0:
        return LSN(file_number, 0)
    return _bucket(file_number, first, stride, offsets, last, last_lsn).get_lte_lsn(vlsn)


MUTANTS = {
    "a_full_bucket_takes_more": {"offset_array": lambda first, stride, most, puts: _offsets(first, stride, 1 << 20, puts)},
    "lte_stops_at_a_hole": {"get_lte_lsn": _lte_stops_at_a_hole},
    "lte_never_gives_the_last_mapping": {"get_lte_lsn": lambda f, first, stride, offsets, last, last_lsn, vlsn: _bucket(
        f, first, stride, offsets, 1 << 40, last_lsn).get_lte_lsn(vlsn)},
    "gte_past_the_last_gives_the_last": {"get_gte_lsn": lambda f, first, stride, offsets, last, last_lsn, vlsn: (
        last_lsn if vlsn > last else _bucket(f, first, stride, offsets, last, last_lsn).get_gte_lsn(vlsn))},
}


def random_bucket(rng):
    """A bucket as the VLSN index keeps it: offsets on the stride (some holes), the last mapping after."""
    first, stride = rng.randrange(1, 20), rng.randrange(1, 5)
    offsets = [rng.choice([0, 1]) for _ in range(rng.randrange(1, 6))]
    offsets[0] = 1
    offset = 0x26
    for i, kept in enumerate(offsets):
        offset += rng.randrange(0x10, 0x40)
        offsets[i] = offset if kept else 0
    last = first + (len(offsets) - 1) * stride + rng.randrange(0, stride)
    last_lsn = LSN(7, offset if last == first + (len(offsets) - 1) * stride and offsets[-1] else offset + 0x30)
    return dict(file_number=7, first=first, stride=stride, file_offsets=offsets, last=last, last_lsn=last_lsn)


def random_cases(rng):
    """For ``minidb grade``: random puts (in and out of order, some past a small bucket's end) and
    lookups at, between, before and after a random bucket's mappings."""
    for _ in range(100):
        first, stride = rng.randrange(1, 20), rng.randrange(1, 5)
        vlsns = list(range(first - 2, first + 8 * stride))
        puts = [(v, 0x26 + 0x20 * (v - first + 2)) for v in rng.sample(vlsns, rng.randrange(0, len(vlsns)))]
        yield "offset_array", (first, stride, rng.randrange(1, 8), puts), {}
    for _ in range(100):
        bucket = random_bucket(rng)
        vlsn = rng.randrange(bucket["first"] - 2, bucket["last"] + 3)
        yield rng.choice(["get_lte_lsn", "get_gte_lsn"]), (), {**bucket, "vlsn": vlsn}
