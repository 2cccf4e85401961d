"""Bad input to replication: a MinidbError naming what and where; nothing changed; the index still works."""

import pytest

from minidb.io import SimDisk
from minidb.log import LSN
from minidb.replication import VLSNBucket, VLSNIndexError, VLSNRangeError

from tests.replication.helpers import open_env


@pytest.fixture
def env():
    env = open_env(SimDisk("node"))
    db = env.database("a")
    for i in range(5):
        db.put(f"k{i}", "v")
    yield env
    env.close()


@pytest.mark.parametrize("vlsn, timeout, where", [
    ("3", 0, "cannot wait for VLSN '3': VLSNs are integers from 1"),
    (None, 0, "cannot wait for VLSN None"),
    (0, 0, "cannot wait for VLSN 0"),
    (999, "x", "cannot wait for VLSN 999: the timeout is None (forever) or seconds >= 0, not 'x'"),
    (999, -1, "not -1"),
    (999, float("nan"), "not nan"),
])
def test_wait_for_vlsn_refuses_bad_arguments_and_leaves_no_waiter(env, vlsn, timeout, where):
    index = env.vlsn_index
    before = index.range
    with pytest.raises(VLSNRangeError) as caught:
        index.wait_for_vlsn(vlsn, timeout)
    assert where in str(caught.value)
    assert index.waiting_for() == []  # no latch left behind for a wait that never started
    assert index.stats["nWaits"] == 0
    env.database("a").put("more", "v")  # the index still takes mappings and serves waits
    assert index.range.last == before.last + 1
    index.wait_for_vlsn(before.last + 1, 0)


@pytest.mark.parametrize("call", [
    lambda index: index.get_gte_lsn("3"),
    lambda index: index.get_lte_lsn(None),
    lambda index: index.find(2.5),
])
def test_a_vlsn_that_is_not_an_integer_is_a_range_error(env, call):
    index = env.vlsn_index
    with pytest.raises(VLSNRangeError, match=r"a VLSN is a positive integer, not .* \(the index holds 1\.\."):
        call(index)
    assert index.get_lte_lsn(3) is not None


def a_bucket() -> bytes:
    bucket = VLSNBucket(1, stride=2)
    for vlsn, offset in [(1, 0x26), (2, 0x40), (3, 0x60)]:
        assert bucket.put(vlsn, LSN(1, offset))
    return bucket.encode()


@pytest.mark.parametrize("position, value, where", [
    (9, 0x02, "offsets with stride 33554434 do not fit VLSNs 1..3"),  # stride's high byte
    (46 + 4 + 2, 0xFF, "offsets with stride 2 do not fit VLSNs 1..3 ending at 0x1/0x60"),  # second offset grows
    (46 + 3, 0xFF, "offsets with stride 2 do not fit"),  # first offset passes the second
])
def test_a_corrupt_bucket_whose_offsets_do_not_climb_is_refused(position, value, where):
    data = bytearray(a_bucket())
    data[position] = value
    with pytest.raises(VLSNIndexError) as caught:
        VLSNBucket.decode(bytes(data))
    assert str(caught.value).startswith("VLSN bucket 1: ") and where in str(caught.value)
    assert VLSNBucket.decode(a_bucket()).mappings() == [(1, LSN(1, 0x26)), (3, LSN(1, 0x60))]


def test_a_bucket_with_holes_still_decodes():
    bucket = VLSNBucket(1, stride=2)
    bucket.put(1, LSN(1, 0x26))
    bucket.put(7, LSN(1, 0x90))  # 3 and 5 are holes
    decoded = VLSNBucket.decode(bucket.encode())
    assert decoded.holes() == [3, 5]


@pytest.mark.parametrize("data", [None, "bucket"])
def test_decoding_something_that_is_not_bytes(data):
    with pytest.raises(VLSNIndexError, match="not a VLSN bucket: .*, not bytes"):
        VLSNBucket.decode(data)
