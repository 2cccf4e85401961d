"""Lock ids: printing like Shore's ids, the two hierarchies, order, bad input."""

import pytest
from hypothesis import given, settings, strategies as st

from minidb.errors import UserError
from minidb.pagestore import ExtentId, PageId, RecordId, StoreId, VolumeId
from minidb.pagestore.lock import BadLockRequest, LockId, LockSpace


def test_ids_print_like_the_page_stores():
    assert str(LockId.volume(VolumeId(1))) == "v(1)" and str(LockId.volume(1)) == "v(1)"
    assert str(LockId.store(StoreId(1, 3))) == "s(1.3)"
    assert str(LockId.page(PageId(1, 3, 48))) == "p(1.3.48)"
    assert str(LockId.record(RecordId(1, 3, 48, 2))) == "r(1.3.48.2)"
    assert str(LockId.extent(ExtentId(1, 6))) == "x(1.6)"
    assert str(LockId.user(7)) == "u(7)"
    assert str(LockId.kvl(StoreId(1, 3), b"apple")) == "k(1.3.'apple')"
    assert str(LockId.kvl(StoreId(1, 3), b"\x00\xff")) == "k(1.3.0x00ff)"
    assert str(LockId.end_of_index(StoreId(1, 3))) == "k(1.3.EOF)"
    assert repr(LockId.page(PageId(1, 3, 48))) == "p(1.3.48)"


def test_the_two_hierarchies():
    r = LockId.record(RecordId(1, 3, 48, 2))
    assert [str(a) for a in r.ancestors()] == ["v(1)", "s(1.3)", "p(1.3.48)"]
    assert str(r.parent()) == "p(1.3.48)" and str(r.parent().parent()) == "s(1.3)"
    assert str(r.parent().parent().parent()) == "v(1)" and r.parent().parent().parent().parent() is None
    k = LockId.kvl(StoreId(1, 3), b"apple")
    assert [str(a) for a in k.ancestors()] == ["v(1)", "s(1.3)"]
    for outside in (LockId.extent(ExtentId(1, 6)), LockId.user(7)):
        assert outside.parent() is None and outside.ancestors() == () and not outside.in_hierarchy
    assert LockId.page(PageId(1, 3, 48)).is_ancestor_of(r) and not r.is_ancestor_of(r)
    assert r.space is LockSpace.RECORD and k.space is LockSpace.KVL and r.vid == VolumeId(1)
    assert LockId.user(7).vid is None


def test_a_lock_id_is_its_own_lock_id():
    k = LockId.end_of_index(StoreId(1, 3))
    assert LockId.of(k) is k


def test_equal_ids_are_one_lock():
    assert LockId.page(PageId(1, 3, 48)) == LockId.record(RecordId(1, 3, 48, 2)).parent()
    assert len({LockId.page(PageId(1, 3, 48)), LockId.page(PageId(1, 3, 48))}) == 1
    assert LockId.store(StoreId(1, 6)) != LockId.extent(ExtentId(1, 6))


def test_sorted_in_hierarchy_order():
    ids = [LockId.user(1), LockId.extent(ExtentId(1, 0)), LockId.end_of_index(StoreId(1, 3)),
           LockId.kvl(StoreId(1, 3), b"\xff"), LockId.kvl(StoreId(1, 3), b"a"),
           LockId.record(RecordId(1, 3, 48, 2)), LockId.page(PageId(1, 3, 48)), LockId.store(StoreId(1, 4)),
           LockId.store(StoreId(1, 3)), LockId.volume(1), LockId.page(PageId(1, 3, 9))]
    assert [str(i) for i in sorted(ids)] == ["v(1)", "s(1.3)", "p(1.3.9)", "p(1.3.48)", "r(1.3.48.2)",
                                             "k(1.3.'a')", "k(1.3.0xff)", "k(1.3.EOF)", "s(1.4)",
                                             "x(1.0)", "u(1)"]
    assert LockId.volume(1) < LockId.store(StoreId(1, 3)) <= LockId.store(StoreId(1, 3))
    assert LockId.user(1) > LockId.volume(9) >= LockId.volume(9)


def test_parse_round_trips():
    for text in ("v(1)", "s(1.3)", "p(1.3.48)", "r(1.3.48.2)", "x(1.6)", "u(7)"):
        assert str(LockId.parse(text)) == text
    with pytest.raises(BadLockRequest, match="bad lock id 'q\\(1\\)'"):
        LockId.parse("q(1)")


@pytest.mark.parametrize("make, message", [
    (lambda: LockId.store(PageId(1, 3, 48)), "a store lock needs a StoreId, not PageId"),
    (lambda: LockId.page(StoreId(1, 3)), "a page lock needs a PageId"),
    (lambda: LockId.record(PageId(1, 3, 48)), "a record lock needs a RecordId"),
    (lambda: LockId.extent(StoreId(1, 6)), "an extent lock needs an ExtentId"),
    (lambda: LockId.volume(-1), "the volume number must be an integer"),
    (lambda: LockId.user(True), "a user lock's number must be an integer"),
    (lambda: LockId.kvl(StoreId(1, 3), "apple"), "the key as bytes"),
    (lambda: LockId.of("p(1.3.48)"), "is not a volume, store, page, record or extent id"),
])
def test_bad_ids_are_refused_clearly(make, message):
    with pytest.raises(BadLockRequest, match=message) as info:
        make()
    assert isinstance(info.value, UserError)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 65535))
def test_a_record_walks_up_to_its_volume(vol, store, page, slot):
    r = LockId.record(RecordId(vol, store, page, slot))
    assert r.ancestors() == (LockId.volume(vol), LockId.store(StoreId(vol, store)),
                             LockId.page(PageId(vol, store, page)))
    assert sorted([r, *r.ancestors()], reverse=True)[-1] == LockId.volume(vol)
    assert LockId.parse(str(r)) == r
