"""VLSN keys and allocation; the VLSN range's bookkeeping, shortening and bytes."""

import struct
import threading

import pytest
from hypothesis import given, strategies as st

from minidb.replication import EMPTY_RANGE, RANGE_KEY, VLSNAllocator, VLSNIndexError, VLSNRange, decode_key, encode_key


@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=2, max_size=20))
def test_keys_sort_as_bytes_like_the_numbers(values):
    assert sorted(values) == [decode_key(k) for k in sorted(encode_key(v) for v in values)]


def test_the_range_key_sorts_before_every_bucket():
    assert RANGE_KEY == bytes.fromhex("7fffffffffffffff")
    assert encode_key(1) == bytes.fromhex("8000000000000001")
    assert RANGE_KEY < encode_key(0) < encode_key(1) < encode_key(78)
    with pytest.raises(ValueError):
        encode_key(2**63)
    with pytest.raises(ValueError):
        decode_key(b"\x00" * 7)


def test_the_allocator_hands_out_every_number_once_from_many_threads():
    allocator = VLSNAllocator(last=41)
    got = []

    def take():
        mine = [allocator.bump() for _ in range(200)]
        got.extend(mine)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == list(range(42, 842)) and allocator.last == 841
    allocator.reset(100)
    assert allocator() == 101
    with pytest.raises(ValueError):
        allocator.reset(-1)


def test_range_bookkeeping_for_commit_abort_matchpoint_and_other_types():
    r = EMPTY_RANGE
    steps = [(1, "LN", (1, 1, 0, 0)), (2, "LN_TX", (1, 2, 0, 0)), (3, "Commit", (1, 3, 3, 3)),
             (4, "DEL_LN_TX", (1, 4, 3, 3)), (5, "Abort", (1, 5, 5, 5)), (6, "Matchpoint", (1, 6, 6, 5)),
             (7, "DEL_LN", (1, 7, 6, 5))]
    for vlsn, type_name, expected in steps:
        r = r.get_update_for_new_mapping(vlsn, type_name)
        assert (r.first, r.last, r.last_sync, r.last_txn_end) == expected, type_name
    assert r.size == 7 and r.contains(7) and not r.contains(8)


def test_an_out_of_order_vlsn_does_not_move_the_range():
    r = VLSNRange(1, 8, 0, 0)
    late = r.get_update_for_new_mapping(7, "Matchpoint")  # 8 was registered before 7
    assert (late.first, late.last, late.last_sync, late.last_txn_end) == (1, 8, 7, 0)
    late_commit = late.get_update_for_new_mapping(5, "Commit")
    assert (late_commit.last, late_commit.last_sync, late_commit.last_txn_end) == (8, 7, 5)
    assert VLSNRange(5, 8).get_update_for_new_mapping(4, "LN").first == 4  # before the head: first moves down


def test_shortening():
    r = VLSNRange(1, 100, 90, 80)
    head = r.shorten_from_head(84)
    assert (head.first, head.last, head.last_sync, head.last_txn_end) == (85, 100, 90, 0)
    assert r.shorten_from_head(0) is r
    with pytest.raises(ValueError):
        r.shorten_from_head(100)
    tail = r.shorten_from_end(86)
    assert (tail.first, tail.last, tail.last_sync, tail.last_txn_end) == (1, 85, 0, 80)
    assert r.shorten_from_end(86, last_sync=84, last_txn_end=80).last_sync == 84
    assert r.shorten_from_end(1).is_empty and r.shorten_from_end(101) is r


def test_invalid_ranges_are_refused():
    for args in [(0, 5), (5, 0), (6, 5), (1, 5, 6), (3, 5, 0, 2)]:
        with pytest.raises(ValueError):
            VLSNRange(*args)


def test_range_bytes():
    r = VLSNRange(3, 79, 79, 77)
    data = r.encode()
    assert len(data) == 33 and data[0] == 1
    assert VLSNRange.decode(data) == r
    assert VLSNRange.decode(EMPTY_RANGE.encode()).is_empty
    inconsistent = struct.pack("<B4Q", 1, 6, 5, 0, 0)  # first after last
    for bad in (data[:-1], b"\x02" + data[1:], inconsistent):
        with pytest.raises(VLSNIndexError):
            VLSNRange.decode(bad)
