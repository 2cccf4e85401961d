"""VLSNBucket: the JE documentation's example, refusals, out-of-order puts and holes, lookups, tail removal, bytes."""

import itertools

import pytest

from minidb.log import LSN
from minidb.replication import GhostBucket, VLSNBucket, VLSNIndexError
from minidb.replication.cases import example_buckets
from minidb.replication.vlsn.bucket import DEFAULT_MAX_DISTANCE, DEFAULT_MAX_MAPPINGS, DEFAULT_STRIDE


def test_defaults_are_jes():
    assert (DEFAULT_STRIDE, DEFAULT_MAX_MAPPINGS, DEFAULT_MAX_DISTANCE) == (10, 1000, 100_000)
    bucket = VLSNBucket(3)
    assert (bucket.stride, bucket.max_mappings, bucket.max_distance, bucket.first) == (10, 1000, 100_000, 1)


def test_the_seeds_example_vlsn_9_to_15_over_files_10_and_11_stride_4():
    first, second = example_buckets(stride=4)
    # file 10: offsets only for 9 and 13 (a stride apart), {100, 140}; 13 is also the last
    assert (first.file_number, first.first, first.last, first.last_lsn) == (10, 9, 13, LSN(10, 140))
    assert first.file_offsets == [100, 140]
    assert first.closed  # the tracker moved on to file 11
    # file 11: 14 on the stride, 15 kept as the last mapping though not on a stride
    assert (second.file_number, second.first, second.last, second.last_lsn) == (11, 14, 15, LSN(11, 120))
    assert second.file_offsets == [100]
    assert first.mappings() == [(9, LSN(10, 100)), (13, LSN(10, 140))]
    assert second.mappings() == [(14, LSN(11, 100)), (15, LSN(11, 120))]
    # exact, at-or-below, at-or-above
    assert [first.get_lsn(v) for v in range(9, 14)] == [LSN(10, 100), None, None, None, LSN(10, 140)]
    assert first.get_lte_lsn(11) == LSN(10, 100) and first.get_gte_lsn(11) == LSN(10, 140)
    assert first.get_lte_lsn(13) == first.get_gte_lsn(13) == LSN(10, 140)
    assert second.get_gte_lsn(15) == second.get_lte_lsn(15) == LSN(11, 120)
    assert not first.owns(14) and second.owns(14) and not second.owns(16)


def test_the_last_mapping_need_not_be_on_a_stride():
    """The JE documentation: a completed bucket gives 9 -> 10/100, 13 -> 10/140 and 15 -> 10/160."""
    bucket = VLSNBucket(10, 4, 1000, 100_000, 9)
    for vlsn, offset in zip(range(9, 16), range(100, 170, 10), strict=True):
        assert bucket.put(vlsn, LSN(10, offset))
    assert bucket.mappings() == [(9, LSN(10, 100)), (13, LSN(10, 140)), (15, LSN(10, 160))]
    assert bucket.get_gte_lsn(14) == LSN(10, 160) and bucket.get_lte_lsn(14) == LSN(10, 140)


# -- refusals ----------------------------------------------------------------------------------------

def test_refuses_a_mapping_from_another_file():
    bucket = VLSNBucket(10, 4, 1000, 100_000, 9)
    assert bucket.put(9, LSN(10, 100))
    before = bucket.encode()
    assert not bucket.put(10, LSN(11, 100))
    assert "file 0xb" in bucket.refusal(10, LSN(11, 100))
    assert bucket.encode() == before


def test_refuses_a_stride_mapping_when_full():
    bucket = VLSNBucket(10, 2, 3, 100_000, 1)
    for vlsn in range(1, 7):  # strides 1, 3, 5 fill the three offsets; 6 is a tail mapping
        assert bucket.put(vlsn, LSN(10, 100 * vlsn))
    assert bucket.file_offsets == [100, 300, 500] and bucket.last == 6
    before = bucket.encode()
    assert not bucket.put(7, LSN(10, 700))  # on a stride, no room
    assert "already holds 3 offsets" in bucket.refusal(7, LSN(10, 700))
    assert bucket.encode() == before


def test_refuses_a_tail_mapping_too_far_from_the_last_stored_offset():
    bucket = VLSNBucket(10, 4, 1000, 500, 1)
    assert bucket.put(1, LSN(10, 100))
    assert bucket.put(2, LSN(10, 600))  # exactly max_distance past 0x64: allowed
    before = bucket.encode()
    assert not bucket.put(3, LSN(10, 601))  # 501 bytes past the last stored offset (100)
    assert "max distance 500" in bucket.refusal(3, LSN(10, 601))
    assert bucket.encode() == before
    assert not bucket.put(5, LSN(10, 2000))  # a stride mapping too far is refused too


def test_refuses_everything_once_closed_and_before_its_first():
    bucket = VLSNBucket(10, 4, 1000, 100_000, 9)
    assert not bucket.put(8, LSN(10, 50))
    bucket.put(9, LSN(10, 100))
    bucket.close()
    assert not bucket.put(10, LSN(10, 110))
    assert bucket.refusal(10, LSN(10, 110)) == "the bucket is closed"


def test_bad_parameters():
    for args in [(1, 0), (1, 4, 0), (1, 4, 10, -1), (1, 4, 10, 10, 0)]:
        with pytest.raises(ValueError):
            VLSNBucket(*args)


# -- out of order, holes --------------------------------------------------------------------------------

def test_insertion_order_9_then_15_keeps_an_offset_array_of_size_1():
    bucket = VLSNBucket(10, 4, 1000, 100_000, 9)
    bucket.put(9, LSN(10, 100))
    bucket.put(15, LSN(10, 160))
    assert bucket.file_offsets == [100] and bucket.last == 15
    assert bucket.get_lte_lsn(13) == LSN(10, 100)  # 13 was never seen
    bucket.put(13, LSN(10, 140))  # the laggard arrives while the bucket is open
    assert bucket.file_offsets == [100, 140] and bucket.last == 15


def test_out_of_order_puts_leave_holes():
    bucket = VLSNBucket(10, 2, 1000, 100_000, 9)
    bucket.put(9, LSN(10, 100))
    bucket.put(15, LSN(10, 160))
    assert bucket.file_offsets == [100, 0, 0, 160]
    assert bucket.holes() == [11, 13]
    assert bucket.get_lsn(11) is None and bucket.get_lsn(15) == LSN(10, 160)
    assert bucket.get_lte_lsn(14) == LSN(10, 100)  # skips both holes downwards
    assert bucket.get_gte_lsn(10) == LSN(10, 160)  # ... and upwards
    bucket.put(11, LSN(10, 120))
    assert bucket.holes() == [13] and bucket.get_lte_lsn(14) == LSN(10, 120)
    assert "hole" in bucket.dump()


MAPPINGS = [(v, LSN(10, 100 + 16 * (v - 1))) for v in range(1, 7)]


def lookups(bucket):
    return [(bucket.get_lsn(v), bucket.get_lte_mapping(v), bucket.get_gte_mapping(v)) for v in range(0, 9)]


@pytest.mark.parametrize("stride", [1, 2, 3, 4])
def test_every_permutation_gives_the_same_lookups(stride):
    """Puts of 1..6 in all 720 orders: once all have arrived, the bucket answers exactly as after in-order puts."""
    truth = dict(MAPPINGS)
    in_order = VLSNBucket(10, stride, 1000, 100_000, 1)
    for vlsn, lsn in MAPPINGS:
        in_order.put(vlsn, lsn)
    expected = lookups(in_order)
    for order in itertools.permutations(MAPPINGS):
        bucket = VLSNBucket(10, stride, 1000, 100_000, 1)
        for vlsn, lsn in order:
            assert bucket.put(vlsn, lsn)
            for v in range(1, bucket.last + 1):  # meanwhile: never wrong, LTE <= v <= GTE
                lte, gte = bucket.get_lte_mapping(v), bucket.get_gte_mapping(v)
                assert gte[0] >= v and truth[gte[0]] == gte[1]
                assert lte is None or (lte[0] <= v and truth[lte[0]] == lte[1])
        assert lookups(bucket) == expected, order
        assert bucket.file_offsets == in_order.file_offsets and bucket.last_lsn == truth[6]


# -- removing from the tail -------------------------------------------------------------------------------

def full_bucket(stride=3):
    bucket = VLSNBucket(10, stride, 1000, 100_000, 5)
    for vlsn in range(5, 18):
        bucket.put(vlsn, LSN(10, 10 * vlsn))
    return bucket


@pytest.mark.parametrize("stride", [1, 3, 4])
def test_remove_from_tail_at_every_point(stride):
    for start in range(4, 20):
        for with_prev in (False, True):
            bucket = full_bucket(stride)
            prev = LSN(10, 10 * (start - 1)) if with_prev and start > 5 else None
            bucket.remove_from_tail(start, prev)
            if start <= 5:
                assert bucket.is_empty and bucket.mappings() == []
                continue
            if start > 17:
                assert bucket.last == 17
                continue
            kept = bucket.mappings()
            assert all(v < start for v, _ in kept)
            assert all(lsn == LSN(10, 10 * v) for v, lsn in kept)  # nothing wrong is left
            if with_prev:
                assert bucket.last == start - 1 and bucket.last_lsn == prev
            else:  # the highest stored mapping below start becomes the last
                stored = [5 + i * stride for i in range((start - 1 - 5) // stride + 1)]
                assert bucket.last == stored[-1]
            for vlsn in range(5, bucket.last + 1):
                assert bucket.get_lte_mapping(vlsn)[0] <= vlsn <= bucket.get_gte_mapping(vlsn)[0]
            assert bucket.dirty


# -- bytes -------------------------------------------------------------------------------------------------

def test_encoding_round_trips():
    bucket = VLSNBucket(10, 2, 7, 900, 9)
    bucket.put(9, LSN(10, 100))
    bucket.put(15, LSN(10, 160))
    bucket.close()
    data = bucket.encode()
    assert len(data) == 46 + 4 * 4 == bucket.encoded_size()
    assert data[:2] == bytes([1, 0x01])  # format 1, CLOSED
    again = VLSNBucket.decode(data)
    assert (again.file_number, again.stride, again.max_mappings, again.max_distance) == (10, 2, 7, 900)
    assert (again.first, again.last, again.last_lsn, again.file_offsets, again.closed) == (
        9, 15, LSN(10, 160), [100, 0, 0, 160], True)


def test_decoding_refuses_bad_bytes():
    data = VLSNBucket(10, 2, 7, 900, 9).encode()
    for bad in (b"", data[:-1] + b"", b"\x02" + data[1:], data + b"\0\0\0\0"):
        with pytest.raises(VLSNIndexError):
            VLSNBucket.decode(bad)


def test_a_ghost_bucket():
    ghost = GhostBucket(42, LSN(7, 0), LSN(8, 0x120))
    assert ghost.owns(42) and not ghost.owns(43) and ghost.closed and ghost.is_ghost
    assert ghost.get_lsn(42) is None
    assert ghost.get_lte_lsn(42) == LSN(7, 0) and ghost.get_gte_lsn(42) == LSN(8, 0x120)
    assert not ghost.put(42, LSN(7, 0x40))
    again = VLSNBucket.decode(ghost.encode())
    assert isinstance(again, GhostBucket) and again.first == 42
    assert again.first_possible_lsn == LSN(7, 0) and again.last_possible_lsn == LSN(8, 0x120)
