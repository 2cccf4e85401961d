"""The twin's generated codecs (minidb/fast/log/codec.py) agree byte for byte with the reference codec
(the field table walked field by field, minidb/log/codec.py), and fail alike."""

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import minidb.cli.engines  # noqa: F401  (registers every engine's entry types, replication's too)
from minidb.fast.log.codec import Codec, Mismatch, codec_of, codec_source, generate_source, picker_source
from minidb.log import LSN, NULL_LSN, TRACE, codec as reference, known_types
from minidb.log.fields import BOOL, BYTES, STR, U8, U32, ItemFormatError, ListOf
from minidb.log.header import SUMMED

from tests.log.test_types import values_for

TYPES = known_types()
GENERATED = [t for t in TYPES if codec_of(t).source is not None]


def generic_encode(name, fields, values):
    return reference.Codec(name, fields).encode(values)


def generic_decode(name, fields, item):
    return reference.Codec(name, fields).decode(item)


EXAMPLES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_engine_and_replication_has_generated_codecs():
    owners = {t.owner for t in GENERATED}
    assert {"log", "pagestore", "logstore", "replication", "generator"} <= owners
    # a kind the generator does not know (the page store's image bytes) keeps the generic path
    odd = [t.name for t in TYPES if codec_of(t).source is None]
    assert odd == ["page_image"]


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_generated_and_generic_agree_both_directions(entry_type):
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type))
    def check(values):
        item = codec.strict_encode(values)  # the generated function itself, no fallback
        assert item == generic_encode(entry_type.name, entry_type.all_fields, values)
        assert codec.strict_decode(item) == values
        assert codec.strict_decode(memoryview(item)) == generic_decode(entry_type.name, entry_type.all_fields, item)

    check()


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_header_and_item_in_one_piece_are_the_reference_bytes(entry_type):
    """``encode_summed`` (what append uses) packs the header after its checksum with the item: the same
    bytes as ``SUMMED.pack`` followed by the generic item, from the generated code alone."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type), st.integers(0, 0xFF), st.sampled_from([0, 1, 2]), st.integers(0, 2**32 - 1))
    def check(values, code, flags, prev):
        item = generic_encode(entry_type.name, entry_type.all_fields, values)
        assert codec.strict_encode_summed(values, code, flags, prev) == SUMMED.pack(code, flags, prev, len(item)) + item

    check()


def _outcome(function, *args):
    try:
        return "ok", function(*args)
    except ItemFormatError as e:
        return "error", str(e)


def _damaged(item: bytes, data) -> bytes:
    """The item cut, lengthened or with one byte overwritten (hypothesis draws which, and where)."""
    item = bytearray(item)
    how = data.draw(st.sampled_from(["cut", "extend", "overwrite"]))
    if how == "cut" and item:
        del item[data.draw(st.integers(0, len(item) - 1)):]
    elif how == "extend":
        item += data.draw(st.binary(min_size=1, max_size=4))
    elif item:
        at = data.draw(st.integers(0, len(item) - 1))
        item[at] = data.draw(st.integers(0, 255))
    return bytes(item)


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_bad_items_fail_alike(entry_type):
    """Cut, lengthened or overwritten items: the generated decoder refuses exactly what the generic
    one refuses, and the error the caller sees is the generic one, naming the field."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type), st.data())
    def check(values, data):
        item = _damaged(codec.strict_encode(values), data)
        generic = _outcome(generic_decode, entry_type.name, entry_type.all_fields, item)
        try:
            generated = "ok", codec.strict_decode(item)
        except Exception:
            generated = "refused", None
        assert generated[0] == ("ok" if generic[0] == "ok" else "refused")
        if generic[0] == "ok":
            assert generated[1] == generic[1]
        assert _outcome(codec.decode, item) == generic

    check()


BAD_VALUES = [None, -1, 2**64, "x", b"x", 1.5, [1], {"a": 1}]


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_bad_values_fail_alike(entry_type):
    """A missing, extra or wrongly typed field: the generated encoder refuses whatever the generic one
    refuses, and the caller sees the generic error."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type), st.data())
    def check(values, data):
        names = [n for n, _ in entry_type.all_fields]
        how = data.draw(st.sampled_from(["drop", "add", "replace"] if names else ["add"]))
        if how == "drop":
            del values[data.draw(st.sampled_from(names))]
        elif how == "add":
            values["no_such_field"] = 1
        else:
            values[data.draw(st.sampled_from(names))] = data.draw(st.sampled_from(BAD_VALUES))
        generic = _outcome(generic_encode, entry_type.name, entry_type.all_fields, values)
        try:
            generated = "ok", codec.strict_encode(values)
        except Exception:
            generated = "refused", None
        assert generated[0] == ("ok" if generic[0] == "ok" else "refused")
        if generic[0] == "ok":
            assert generated[1] == generic[1]
        assert _outcome(codec.encode, values) == generic
        try:
            summed = "ok", codec.strict_encode_summed(values, entry_type.code, 0, 0x40)
        except Exception:
            summed = "refused", None
        assert summed[0] == generated[0]
        if generic[0] == "ok":
            assert summed[1] == SUMMED.pack(entry_type.code, 0, 0x40, len(generic[1])) + generic[1]
        expected = generic if generic[0] == "error" else ("ok", summed[1])
        assert _outcome(codec.encode_summed, values, entry_type.code, 0, 0x40) == expected

    check()


def test_a_bad_item_is_named_by_the_generic_path():
    with pytest.raises(ItemFormatError, match=r"STR of 5 bytes at item offset 0 runs past the item"):
        codec_of(TRACE).decode(b"\x05\x00hel")
    with pytest.raises(ItemFormatError, match=r"Trace: missing fields \['message'\]"):
        codec_of(TRACE).encode({})
    with pytest.raises(Mismatch):
        codec_of(TRACE).strict_decode(b"\x05\x00hel")


def test_runs_of_fixed_fields_share_one_struct_with_the_next_length():
    fields = (("a", U8), ("b", U32), ("s", STR), ("items", ListOf(("k", BYTES), ("n", U32))), ("c", U32))
    source = generate_source("Example", fields)
    assert "struct.Struct('<BIH')" in source  # a, b and the STR's length: one pack
    assert "struct.Struct('<I')" in source
    codec = Codec("Example", fields)
    values = {"a": 1, "b": 2, "s": "hé", "items": [{"k": b"xy", "n": 7}], "c": 9}
    item = codec.encode(values)
    assert item == generic_encode("Example", fields, values)
    assert codec.decode(item) == values
    assert codec.decode(memoryview(item))["items"][0]["k"] == b"xy"
    # with the header after the checksum: its four fields go into the first run's Struct
    assert "struct.Struct('<BBIIBIH')" in source
    assert codec.strict_encode_summed(values, 0x10, 1, 0x99) == SUMMED.pack(0x10, 1, 0x99, len(item)) + item
    empty = Codec("Empty", ())  # no field: the header alone
    assert empty.strict_encode_summed({}, 0x11, 0, 7) == SUMMED.pack(0x11, 0, 7, 0)


def test_the_source_is_readable_and_names_the_type():
    source = codec_source(TRACE)
    assert source.startswith("# generated from the field table of Trace: message:STR")
    assert "def encode_Trace(values):" in source and "def decode_Trace(buf):" in source
    assert "def summed_Trace(values, code, flags, prev):" in source
    assert "no generated codec" in codec_source(next(t for t in TYPES if t.name == "page_image"))


def test_codecs_are_built_once_and_cached():
    assert codec_of(TRACE) is codec_of(TRACE)
    assert codec_of(TRACE).decode(codec_of(TRACE).encode({"message": "hi"})) == {"message": "hi"}
    lsn = LSN(3, 0x40)
    file_header = next(t for t in TYPES if t.name == "FileHeader")
    values = {"file_number": 3, "created_ms": 5, "last_entry_lsn": lsn, "log_version": 2, "env_id": 7}
    decoded = codec_of(file_header).decode(codec_of(file_header).encode(values))
    assert decoded == values and type(decoded["last_entry_lsn"]) is LSN


def test_a_bool_other_than_0_or_1_is_refused():
    codec = Codec("Flag", (("f", BOOL), ("g", U8)))
    assert codec.strict_decode(b"\x01\x02") == {"f": True, "g": 2}
    with pytest.raises(Mismatch):
        codec.strict_decode(b"\x02\x00")
    with pytest.raises(ItemFormatError, match="BOOL at item offset 0 holds 2"):
        codec.decode(b"\x02\x00")


def _some_fields(entry_type, data) -> tuple[str, ...]:
    names = [n for n, _ in entry_type.all_fields]
    return tuple(data.draw(st.permutations(names)))[: data.draw(st.integers(0, len(names)))]


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_a_picker_gives_the_decoded_values_of_its_fields(entry_type):
    """A picker (any fields, in any order) gives what the decoded dict holds for them, from the
    generated code alone."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type), st.data())
    def check(values, data):
        picks = _some_fields(entry_type, data)
        item = codec.strict_encode(values)
        expected = tuple(values[name] for name in picks)
        assert codec.picker(picks, strict=True)(item) == expected
        assert codec.picker(picks, strict=True)(memoryview(item)) == expected
        assert all(type(got) is type(want) for got, want in zip(codec.picker(picks)(item), expected, strict=True))

    check()


@pytest.mark.parametrize("entry_type", GENERATED, ids=lambda t: t.name)
def test_bad_items_fail_alike_when_picked(entry_type):
    """A picker checks the whole item as the decoder does (the fields it does not pick too): it refuses
    exactly what the generic decode refuses, and its caller sees the generic error naming the field."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type), st.data())
    def check(values, data):
        picks = _some_fields(entry_type, data)
        item = _damaged(codec.strict_encode(values), data)
        generic = _outcome(generic_decode, entry_type.name, entry_type.all_fields, item)
        try:
            strict = "ok", codec.picker(picks, strict=True)(item)
        except Exception:
            strict = "refused", None
        assert strict[0] == ("ok" if generic[0] == "ok" else "refused")
        expected = generic if generic[0] == "error" else ("ok", tuple(generic[1][name] for name in picks))
        if generic[0] == "ok":
            assert strict == expected
        assert _outcome(codec.picker(picks), item) == expected

    check()


def test_a_picker_makes_only_the_values_it_gives():
    """The LN picker redo uses: the data and the key are sliced, an LSN is made only if picked, and a
    NULL LSN is NULL_LSN itself; a bad item is named by the generic path."""
    from minidb.logstore.logdef import LN
    source = picker_source("LN", LN.all_fields, ("db_id", "key"))
    assert "def pick_LN(buf):" in source and source.count("buf[p:e]") == 1 and "new_lsn" not in source
    assert "return (v0, v1)" in source
    pick = codec_of(LN).picker(("db_id", "key", "prev_lsn", "data"))
    assert codec_of(LN).picker(("db_id", "key", "prev_lsn", "data")) is pick  # built once
    item = LN.encode({"db_id": 7, "key": b"k", "data": b"dd", "prev_lsn": NULL_LSN})
    assert pick(item) == (7, b"k", NULL_LSN, b"dd") and pick(item)[2] is NULL_LSN
    assert pick(LN.encode({"db_id": 7, "key": b"k", "data": b"", "prev_lsn": LSN(2, 9)}))[2] == LSN(2, 9)
    with pytest.raises(ItemFormatError, match=r"LSN at item offset 15 runs past the item"):
        pick(item[:-1])
    with pytest.raises(Mismatch):
        codec_of(LN).picker(("key",), strict=True)(item[:-1])
    with pytest.raises(ValueError, match="cannot pick"):
        codec_of(LN).picker(("no_such_field",))
    with pytest.raises(ValueError, match="cannot pick"):
        codec_of(LN).picker(("key", "key"))


def test_a_picker_unpacks_an_item_of_known_lengths_at_once():
    """The LN picker unpacks an item by one Struct made for its key's and data's lengths, kept for the next
    item of the same lengths; past LAYOUTS combinations the field-by-field code reads the others, with the
    same answers, and an item whose lengths do not add up is still named by the generic path."""
    from minidb.fast.log.codec import LAYOUTS
    from minidb.logstore.logdef import LN
    source = picker_source("LN", LN.all_fields, ("db_id", "key", "prev_lsn", "data"))
    assert "layout.unpack(buf)" in source and "Struct('<II%dsI%dsQ' % (n1, n2))" in source
    pick = Codec("LN", LN.all_fields).picker(("db_id", "key", "prev_lsn", "data"))  # a fresh cache
    values = [{"db_id": 3, "key": b"k" * k, "data": b"d" * d, "prev_lsn": LSN(1, k * 100 + d)}
              for k in range(12) for d in range(12)]
    items = [LN.encode(v) for v in values]
    expected = [(v["db_id"], v["key"], v["prev_lsn"], v["data"]) for v in values]
    assert [pick(item) for item in items] == expected == [pick(item) for item in reversed(items)][::-1]
    assert len(pick.__globals__["layouts"]) == LAYOUTS < len(items)
    item = items[-1]
    short_data = item[:8 + 11] + (10).to_bytes(4, "little") + item[8 + 11 + 4:]  # the data's length one short
    with pytest.raises(ItemFormatError, match="1 bytes left over after the last field"):
        pick(short_data)


def test_a_table_without_generated_code_picks_from_the_generic_decode():
    page_image = next(t for t in TYPES if codec_of(t).source is None)
    names = tuple(name for name, _ in page_image.all_fields)[::2]
    assert picker_source(page_image.name, page_image.all_fields, names) is None

    @EXAMPLES
    @given(values_for(page_image))
    def check(values):
        item = generic_encode(page_image.name, page_image.all_fields, values)
        assert codec_of(page_image).picker(names)(item) == tuple(values[n] for n in names)

    check()


WITH_LISTS = [t for t in GENERATED if any(isinstance(kind, ListOf) for _, kind in t.all_fields)]


def _as_tuples(entry_type, values: dict) -> dict:
    """The values with every list's records as tuples of their values in field order."""
    out = dict(values)
    for name, kind in entry_type.all_fields:
        if isinstance(kind, ListOf):
            out[name] = [tuple(record[n] for n, _ in kind.fields) for record in values[name]]
    return out


@pytest.mark.parametrize("entry_type", WITH_LISTS, ids=lambda t: t.name)
def test_list_records_given_as_tuples_are_the_bytes_of_dicts(entry_type):
    """A list's records may be given as tuples in field order (a node's slots, zipped): the same item,
    from the generated code alone and from the generic path."""
    codec = codec_of(entry_type)

    @EXAMPLES
    @given(values_for(entry_type))
    def check(values):
        rows = _as_tuples(entry_type, values)
        item = generic_encode(entry_type.name, entry_type.all_fields, values)
        assert codec.strict_encode(rows) == item == generic_encode(entry_type.name, entry_type.all_fields, rows)
        assert codec.strict_encode_summed(rows, 1, 0, 2) == SUMMED.pack(1, 0, 2, len(item)) + item

    check()


def test_a_bad_tuple_record_is_named_by_the_generic_path():
    from minidb.logstore.logdef import BIN_ENTRY
    values = {"db_id": 1, "node_id": 2, "level": 1, "is_root": True, "id_key": b"", "high_inf": True,
              "high_key": b"", "prev_lsn": NULL_LSN, "obsolete": [(LSN(1, 2),)],
              "entries": [(b"a", LSN(1, 5), False)]}
    assert BIN_ENTRY.decode(BIN_ENTRY.encode(values))["entries"] == [{"key": b"a", "lsn": LSN(1, 5),
                                                                     "known_deleted": False}]
    short = dict(values, entries=[(b"a", LSN(1, 5))])
    with pytest.raises(ItemFormatError, match=r"list record: 2 values for the fields \['key', 'lsn', 'known_deleted'\]"):
        BIN_ENTRY.encode(short)
    with pytest.raises(Mismatch):
        codec_of(BIN_ENTRY).strict_encode(short)
    not_an_lsn = dict(values, entries=[(b"a", 5, False)])
    with pytest.raises(ItemFormatError, match=r"list record\.lsn: LSN field needs an LSN, not 5"):
        BIN_ENTRY.encode(not_an_lsn)
    with pytest.raises(ItemFormatError, match=r"list record\.lsn"):
        codec_of(BIN_ENTRY).encode_summed(not_an_lsn, BIN_ENTRY.code, 0, 0)
