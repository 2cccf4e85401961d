"""Shore's identifiers: printing, parsing back, extent arithmetic."""

import pytest
from hypothesis import given, settings, strategies as st

from minidb.errors import UserError
from minidb.pagestore.ids import (
    ExtentId,
    PageId,
    RecordId,
    StoreId,
    VolumeId,
    extent_of,
    first_page_of,
    index_in_extent,
    pages_of,
    parse_id,
    parse_typed,
)


def test_ids_print_exactly_like_shore():
    assert str(VolumeId(1)) == "v(1)"
    assert str(StoreId(1, 3)) == "s(1.3)"
    assert str(PageId(1, 3, 48)) == "p(1.3.48)"
    assert str(RecordId(1, 3, 48, 2)) == "r(1.3.48.2)"
    assert str(ExtentId(1, 6)) == "x(1.6)"
    assert repr(PageId(1, 3, 48)) == "p(1.3.48)"


def test_ids_derive_each_other():
    rid = RecordId(1, 3, 48, 2)
    assert rid.pid == PageId(1, 3, 48)
    assert rid.pid.stid == StoreId(1, 3)
    assert StoreId(1, 3).volume == VolumeId(1)
    assert StoreId(1, 3).page(48).record(2) == rid
    assert PageId(1, 3, 48).key == PageId(1, 7, 48).key == (1, 48)  # the store does not locate a page


@pytest.mark.parametrize("text, expected", [
    ("v(1)", VolumeId(1)), ("s(1.3)", StoreId(1, 3)), ("p(1.3.48)", PageId(1, 3, 48)),
    ("r(1.3.48.2)", RecordId(1, 3, 48, 2)), ("x(1.6)", ExtentId(1, 6)), ("  p(2.0.0) ", PageId(2, 0, 0)),
])
def test_ids_parse_back(text, expected):
    assert parse_id(text) == expected
    assert type(parse_id(text)) is type(expected)


@pytest.mark.parametrize("text, message", [
    ("p(1.3)", "page id 'p(1.3)': p(...) takes 3 numbers"),
    ("r(1.3.48)", "record id"),
    ("q(1)", "bad id"),
    ("p(1.-3.4)", "bad id"),
    ("p(1.3.48", "bad id"),
    ("", "bad id"),
])
def test_malformed_ids_are_user_errors(text, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse_id(text)


def test_parse_typed_checks_the_kind():
    assert parse_typed("p(1.3.48)", PageId) == PageId(1, 3, 48)
    with pytest.raises(UserError, match="is a StoreId, not a PageId"):
        parse_typed("s(1.3)", PageId)


@settings(deadline=None)
@given(st.sampled_from([VolumeId, StoreId, PageId, RecordId, ExtentId]), st.data())
def test_every_id_round_trips(cls, data):
    numbers = [data.draw(st.integers(0, 2**32 - 1)) for _ in cls._fields]
    ident = cls(*numbers)
    assert parse_id(str(ident)) == ident


def test_extent_arithmetic_worked_example():
    # ext_sz 8: page 48 is the first page of extent 6, whose pages are 48..55.
    assert extent_of(48, 8) == 6
    assert first_page_of(6, 8) == 48
    assert list(pages_of(6, 8)) == list(range(48, 56))
    assert index_in_extent(48, 8) == 0 and index_in_extent(55, 8) == 7
    assert extent_of(55, 8) == 6 and extent_of(56, 8) == 7


@settings(deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 32))
def test_extent_arithmetic_round_trips(page, ext_sz):
    ext = extent_of(page, ext_sz)
    assert page in pages_of(ext, ext_sz)
    assert first_page_of(ext, ext_sz) + index_in_extent(page, ext_sz) == page
