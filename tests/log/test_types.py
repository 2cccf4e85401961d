"""Entry types: every declared type round-trips; tables refuse collisions."""

import pytest
from hypothesis import given, strategies as st

import minidb.cli.engines  # noqa: F401  (registers every engine's entry types)
from minidb.log import LSN, NULL_LSN, fields, known_types
from minidb.log.fields import ItemFormatError, ListOf
from minidb.log.types import EntryTable

lsns = st.one_of(st.just(NULL_LSN), st.builds(LSN, st.integers(0, 2**32 - 2), st.integers(0, 2**32 - 1)))
STRATEGIES = {
    fields.U8: st.integers(0, 2**8 - 1),
    fields.U16: st.integers(0, 2**16 - 1),
    fields.U32: st.integers(0, 2**32 - 1),
    fields.U64: st.integers(0, 2**64 - 1),
    fields.I64: st.integers(-(2**63), 2**63 - 1),
    fields.BOOL: st.booleans(),
    fields.LSN_FIELD: lsns,
    fields.BYTES: st.binary(max_size=300),
    fields.STR: st.text(max_size=100),
}


def strategy_for(kind):
    if isinstance(kind, ListOf):
        return st.lists(st.fixed_dictionaries({n: strategy_for(k) for n, k in kind.fields}), max_size=5)
    if kind in STRATEGIES:
        return STRATEGIES[kind]
    return STRATEGIES[getattr(fields, kind.name)]  # an engine's variant of a field kind (how it prints)


def values_for(entry_type):
    return st.fixed_dictionaries({name: strategy_for(kind) for name, kind in entry_type.all_fields})


@pytest.mark.parametrize("entry_type", known_types(), ids=lambda t: t.name)
def test_every_entry_type_round_trips(entry_type):
    @given(values_for(entry_type))
    def round_trip(values):
        item = entry_type.encode(values)
        assert entry_type.decode(item) == values
        # a truncated item never decodes silently
        if item:
            with pytest.raises(ItemFormatError):
                entry_type.decode(item[:-1])

    round_trip()


def test_list_field_round_trip_and_format():
    table_kind = ListOf(("key", fields.BYTES), ("lsn", fields.LSN_FIELD))
    out = bytearray()
    records = [{"key": b"a", "lsn": LSN(1, 2)}, {"key": b"bc", "lsn": NULL_LSN}]
    table_kind.encode(records, out)
    assert table_kind.decode(bytes(out), 0) == (records, len(out))
    assert table_kind.format(records) == "[key=61 lsn=0x1/0x2; key=6263 lsn=NULL]"


def test_encoding_names_the_wrong_field():
    trace = known_types()[1]
    with pytest.raises(ItemFormatError, match="missing fields"):
        trace.encode({})
    with pytest.raises(ItemFormatError, match="unknown fields"):
        trace.encode({"message": "x", "extra": 1})
    header = known_types()[0]
    bad = {"file_number": -1, "created_ms": 0, "last_entry_lsn": NULL_LSN, "log_version": 2, "env_id": 7}
    with pytest.raises(ItemFormatError, match="FileHeader.file_number"):
        header.encode(bad)


def test_tables_refuse_collisions_and_foreign_codes():
    with pytest.raises(ValueError, match="outside log's range"):
        EntryTable("log", [("Bad", 0x40, "", [])])
    with pytest.raises(ValueError, match="is both FileHeader and Clash"):
        EntryTable("log", [("Clash", 0x01, "", [])])
    with pytest.raises(ValueError, match="declared twice"):
        EntryTable("log", [("Twice", 0x06, "", []), ("Twice", 0x05, "", [])], register=False)
    with pytest.raises(ValueError, match="unknown flags"):
        EntryTable("log", [("Flagged", 0x04, "Z", [])], register=False)


def test_owner_ranges_partition_the_valid_codes():
    from minidb.log.header import valid_type_code
    from minidb.log.types import OWNER_CODES

    codes = sorted(code for owned in OWNER_CODES.values() for code in owned)
    assert codes == [c for c in range(0x01, 0xFF) if valid_type_code(c)]  # every valid code, each once
    assert 0x80 in OWNER_CODES["pagestore"] and 0x8F in OWNER_CODES["pagestore"] and 0x40 not in OWNER_CODES["pagestore"]
    assert not valid_type_code(0x7F) and not valid_type_code(0x90) and valid_type_code(0x85)
    assert OWNER_CODES["log"] == range(0x01, 0x08) and OWNER_CODES["generator"] == range(0x08, 0x10)
    with pytest.raises(ValueError, match="outside log's range"):
        EntryTable("log", [("NotMine", 0x08, "", [])], register=False)
    with pytest.raises(ValueError, match="outside generator's range"):
        EntryTable("generator", [("NotMineEither", 0x02, "", [])], register=False)


def test_transactional_types_get_txn_fields():
    table = EntryTable("logstore", [("TestTxnEntry", 0x6F, "TRU", [("key", fields.BYTES)])], register=False)
    entry_type = table.TestTxnEntry
    assert [n for n, _ in entry_type.all_fields] == ["txn_id", "txn_prev_lsn", "key"]
    assert entry_type.transactional and entry_type.redoable and entry_type.undoable
    values = {"txn_id": 7, "txn_prev_lsn": LSN(1, 0x26), "key": b"k"}
    assert entry_type.format(values) == '<TestTxnEntry txn_id="7" txn_prev_lsn="0x1/0x26" key="6b"/>'


def test_lsn_spans_find_every_lsn_in_lists_and_after_sized_fields():
    from minidb.log.fields import BYTES, LSN_FIELD, U32, ListOf, encode_fields, lsn_spans, static_lsn_offsets

    fields = (("a", LSN_FIELD), ("n", U32), ("key", BYTES), ("b", LSN_FIELD),
              ("refs", ListOf(("k", BYTES), ("at", LSN_FIELD))))
    values = {"a": LSN(1, 2), "n": 7, "key": b"xyz", "b": LSN(3, 4),
              "refs": [{"k": b"p", "at": LSN(5, 6)}, {"k": b"", "at": LSN(7, 8)}]}
    out = bytearray()
    encode_fields(fields, values, out, "test")
    spans = lsn_spans(fields, bytes(out))
    assert [LSN.unpack(int.from_bytes(out[s:e], "little")) for s, e in spans] == [
        LSN(1, 2), LSN(3, 4), LSN(5, 6), LSN(7, 8)]
    assert static_lsn_offsets(fields) is None  # key's length moves b
    assert static_lsn_offsets(fields[:2]) == (0,)
    assert static_lsn_offsets((("n", U32), ("b", LSN_FIELD), ("key", BYTES))) == (4,)
    with pytest.raises(ItemFormatError):
        lsn_spans(fields, bytes(out[:-3]))
