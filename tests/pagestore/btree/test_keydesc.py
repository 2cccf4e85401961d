"""Key descriptors: the encoding sorts like the keys, decodes back, and refuses what does not fit."""

import pytest
from hypothesis import given, settings, strategies as st

from minidb.pagestore.btree.keydesc import BadKeyError, KeyDescriptor, successor
from minidb.pagestore.errors import BadRequestError

FIELDS = {
    "i1": st.integers(-2**7, 2**7 - 1), "i2": st.integers(-2**15, 2**15 - 1), "i4": st.integers(-2**31, 2**31 - 1),
    "i8": st.integers(-2**63, 2**63 - 1), "u1": st.integers(0, 255), "u2": st.integers(0, 2**16 - 1),
    "u4": st.integers(0, 2**32 - 1), "u8": st.integers(0, 2**64 - 1),
    "f8": st.floats(allow_nan=False), "str": st.text(max_size=8), "bytes": st.binary(max_size=8),
}


def _order(value):
    return value.encode() if isinstance(value, str) else value  # str order is UTF-8 byte order


@pytest.mark.parametrize("name", sorted(FIELDS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_each_field_encodes_in_key_order_and_decodes_back(name, data):
    desc = KeyDescriptor(name)
    a, b = data.draw(FIELDS[name]), data.draw(FIELDS[name])
    ea, eb = desc.encode(a), desc.encode(b)
    assert desc.decode(ea) == a and desc.decode(eb) == b
    assert (ea < eb) == (_order(a) < _order(b)) and (ea == eb) == (_order(a) == _order(b))


@settings(max_examples=300, deadline=None)
@given(st.tuples(FIELDS["i2"], FIELDS["str"], FIELDS["bytes"]), st.tuples(FIELDS["i2"], FIELDS["str"], FIELDS["bytes"]))
def test_compound_keys_sort_field_by_field(a, b):
    desc = KeyDescriptor("i2, str, bytes")
    assert desc.spec == "i2,str,bytes"
    assert desc.decode(desc.encode(a)) == a
    assert (desc.encode(a) < desc.encode(b)) == ((a[0], a[1].encode(), a[2]) < (b[0], b[1].encode(), b[2]))


def test_the_documented_example():
    desc = KeyDescriptor("i2,str")
    assert desc.encode((-1, "ab")).hex() == "7fff61620000"
    assert desc.encode((0, "")).hex() == "80000000"
    assert KeyDescriptor.unpack(desc.pack()) == desc


@pytest.mark.parametrize("spec, key, match", [
    ("i1", 128, "outside -128..127"), ("u2", -1, "outside 0..65535"), ("i4", "7", "not an int"),
    ("i4", True, "not an int"), ("str", b"x", "not a str"), ("bytes", "x", "not bytes"),
    ("f8", float("nan"), "NaN"), ("i4,str", 3, "needs a tuple of 2"), ("i4,str", (1,), "needs a tuple of 2"),
])
def test_a_key_that_does_not_fit_its_descriptor_is_refused(spec, key, match):
    with pytest.raises(BadKeyError, match=match):
        KeyDescriptor(spec).encode(key)


def test_unknown_descriptors_and_bad_bytes_are_named():
    with pytest.raises(BadRequestError, match="unknown field 'int'"):
        KeyDescriptor("i4,int")
    with pytest.raises(BadRequestError, match="give fields"):
        KeyDescriptor("")
    with pytest.raises(BadKeyError, match="no terminator"):
        KeyDescriptor("str").decode(b"ab")
    with pytest.raises(BadKeyError, match="left after"):
        KeyDescriptor("u1").decode(b"\x01\x02")


def test_successor_is_just_past_every_string_with_the_prefix():
    assert successor(b"ab") == b"ac" and successor(b"a\xff\xff") == b"b" and successor(b"\xff") is None
    assert b"ab\xff\xff\xff" < successor(b"ab") and not b"ab" >= successor(b"ab")
