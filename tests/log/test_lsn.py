"""LSNs: packing, parsing, printing and order."""

import pytest
from hypothesis import given, strategies as st

from minidb.errors import UserError
from minidb.log import LSN, NULL_LSN

files = st.integers(0, 0xFFFF_FFFE)
offsets = st.integers(0, 0xFFFF_FFFF)
lsns = st.builds(LSN, files, offsets)


@given(lsns)
def test_pack_round_trip(lsn):
    assert LSN.unpack(lsn.packed) == lsn
    assert lsn.packed == (lsn.file << 32) | lsn.offset


@given(lsns)
def test_print_parse_round_trip(lsn):
    text = str(lsn)
    assert text == f"0x{lsn.file:x}/0x{lsn.offset:x}"
    assert LSN.parse(text) == lsn


@given(lsns, lsns)
def test_order_is_file_then_offset_and_matches_packed_order(a, b):
    assert (a < b) == ((a.file, a.offset) < (b.file, b.offset)) == (a.packed < b.packed)
    assert (a <= b) == (a.packed <= b.packed)
    assert (a > b) == (a.packed > b.packed)


def test_examples():
    assert str(LSN(1, 0x26)) == "0x1/0x26"
    assert LSN.parse("0x1/0x26") == LSN(1, 38)
    assert LSN.parse(" 0xA/0xff ") == LSN(10, 255)
    assert sorted([LSN(2, 0), LSN(1, 500), LSN(1, 7)]) == [LSN(1, 7), LSN(1, 500), LSN(2, 0)]


def test_null_lsn():
    assert str(NULL_LSN) == "NULL" and NULL_LSN.is_null
    assert NULL_LSN.packed == 0xFFFF_FFFF_FFFF_FFFF
    assert LSN.unpack(NULL_LSN.packed) is not None and LSN.unpack(NULL_LSN.packed).is_null
    assert LSN.parse("NULL") == NULL_LSN
    with pytest.raises(ValueError, match="NULL_LSN"):
        _ = NULL_LSN < LSN(1, 0)
    with pytest.raises(ValueError, match="NULL_LSN"):
        _ = LSN(1, 0) >= NULL_LSN


@pytest.mark.parametrize("text", ["1/2", "0x1", "0x1/", "0xg/0x1", "0x123456789/0x0", "", "lsn"])
def test_bad_syntax_is_a_user_error(text):
    with pytest.raises(UserError, match="expected the form 0x<file>/0x<offset>"):
        LSN.parse(text)
