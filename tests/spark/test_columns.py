"""The data source's column builder gives exactly the rows of its former row-at-a-time path.

The logs here are written byte by byte (no Spark, no engine): an entry of every entry-type code
and of unknown codes, replicated, invisible, provisional and erased entries, values past 2**63
(stored as Java longs), items too short for their type, a corrupt entry the scan steps over, torn
tails, a file missing from the numbering and a file that is not a log at all.
"""

import copy
import os
import random

import pyarrow as pa
import pytest

from minidb.log import LSN, NULL_LSN, Provisional, file_name
from minidb.log.header import ERASED_TYPE, EXTRA_TYPE_CODES, MAX_TYPE_CODE, erased_item, make_flags, pack_entry
from minidb.log.logdef import FILE_HEADER, LOG_VERSION
from minidb.log.types import type_by_code
from minidb.spark.source import file_rows, log_file_partitions, to_record_batch

from tests.spark.row_path import row_batches, rows_to_record_batch

CODES = [*range(1, MAX_TYPE_CODE + 1), *EXTRA_TYPE_CODES]


def _file_header(number, last_entry):
    return pack_entry(FILE_HEADER.code, 0, 0, FILE_HEADER.encode(
        {"file_number": number, "created_ms": 7, "last_entry_lsn": last_entry, "log_version": LOG_VERSION,
         "env_id": 7}))


def _item(rng, code):
    """Random bytes; a transactional type mostly gets a real transaction prefix first. The prefix is drawn
    for every type, so the random stream (and the damage the fixture finds where) does not change when
    an entry type is added to a code."""
    entry_type = type_by_code(code)
    item = bytes(rng.randrange(256) for _ in range(rng.choice([0, 3, 15, 16, 24, 40])))
    prefixed = rng.random() < 0.8
    txn_id = rng.choice([1, 42, -5, (1 << 63) - 1])
    prev = rng.choice([NULL_LSN, LSN(1, 0x26), LSN(0x8000_0001, 0x1234)])  # high file: a negative long
    if entry_type is not None and entry_type.transactional and prefixed:
        item = txn_id.to_bytes(8, "little", signed=True) + prev.packed.to_bytes(8, "little") + item
    return item


def write_log_file(path, number, last_entry, rng, entries, erase_last=False):
    """A log file of ``entries`` random entries after its FileHeader; returns each entry's offset.
    ``erase_last``: the last entry in its erased form, whatever the draw."""
    data = bytearray(_file_header(number, last_entry))
    offsets, prev = [], 0
    for i in range(entries):
        code = CODES[i % len(CODES)] if i < len(CODES) else rng.choice(CODES)
        replicated = rng.random() < 0.5
        flags = make_flags(rng.choice(list(Provisional)), replicated, invisible=replicated and rng.random() < 0.3)
        vlsn = rng.choice([1, 99, (1 << 64) - 2]) if replicated else None  # the last: a negative long
        item = _item(rng, code)
        entry = bytearray(pack_entry(code, flags, prev, item, vlsn))
        erase = rng.random() < 0.08 or (erase_last and i == entries - 1)
        if erase and item:  # erased, as the data eraser leaves it: its erased form (of an LN_TX)
            entry = bytearray(pack_entry(ERASED_TYPE, flags, prev, erased_item(0x41, len(item)), vlsn))
        offsets.append(len(data))
        prev = len(data)
        data += entry
    with open(path, "wb") as f:
        f.write(data)
    return offsets


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Two environments: ``a`` with files 1, 2 (a corrupt entry, a torn tail) and 4 (3 missing;
    a torn tail), ``b`` with a file of random bytes named like a log file, ``c`` whose first file
    begins with a damaged FileHeader."""
    root = tmp_path_factory.mktemp("columns")
    rng = random.Random(17)
    a, b, c = root / "a", root / "b", root / "c"
    a.mkdir(), b.mkdir()
    first = write_log_file(a / file_name(1), 1, NULL_LSN, rng, 400)
    second = write_log_file(a / file_name(2), 2, LSN(1, first[-1]), rng, 300, erase_last=True)
    with open(a / file_name(2), "r+b") as f:
        f.seek(second[150] + 9)  # a byte of the prev field: corrupt, and the next entry names it
        f.write(b"\x7f")
        f.seek(second[200] + 5)  # both provisional flags: a header that cannot be, corrupt as well
        f.write(b"\x03")
        f.truncate(os.path.getsize(a / file_name(2)) - 5)
    write_log_file(a / file_name(4), 4, LSN(3, 0x26), rng, 200)
    with open(a / file_name(4), "r+b") as f:
        f.truncate(os.path.getsize(a / file_name(4)) - 3)
    (b / file_name(1)).write_bytes(bytes(rng.randrange(256) for _ in range(500)))
    c.mkdir()
    write_log_file(c / file_name(1), 1, NULL_LSN, rng, 5)
    with open(c / file_name(1), "r+b") as f:
        f.seek(4)  # the FileHeader's type byte: a damaged log file with nothing intact after it
        f.write(bytes([CODES[5]]))
    write_log_file(c / file_name(2), 2, LSN(1, 0x26), rng, 5)
    return str(root)


def tables(root, verify, batch_rows):
    """(the column builder's table, the row path's table) over every file under ``root``."""
    new, old = [], []
    for part in log_file_partitions(root):
        new += [to_record_batch(part, columns) for columns in file_rows(part, verify, batch_rows)]
        old += [rows_to_record_batch(part, rows) for rows in row_batches(part, verify, batch_rows)]
    return pa.Table.from_batches(new), pa.Table.from_batches(old)


@pytest.mark.parametrize("verify", [True, False])
@pytest.mark.parametrize("batch_rows", [7, 1 << 16])
def test_the_column_builder_gives_exactly_the_rows_of_the_row_path(logs, verify, batch_rows):
    new, old = tables(logs, verify, batch_rows)
    assert new.schema.equals(old.schema)
    for name in new.schema.names:  # column by column, so a failure names the column
        assert new[name].to_pylist() == old[name].to_pylist(), name
    assert new.num_rows == old.num_rows > 900


def test_the_logs_hold_every_kind_of_row(logs):
    rows = tables(logs, True, 1 << 16)[0].to_pylist()
    assert {r["type_code"] for r in rows} >= set(CODES) | {ERASED_TYPE}
    assert any(r["invisible"] for r in rows) and any(r["erased"] for r in rows)
    # an erased entry is checked in its erased form, like any other
    assert all(r["checksum_valid"] is True for r in rows if r["erased"] and r["problem"] is None)
    assert {r["provisional"] for r in rows} == {"NO", "YES", "BEFORE_CKPT_END", None}
    assert any(r["vlsn"] is not None and r["vlsn"] < 0 for r in rows)
    assert any(r["txn_prev_lsn_packed"] is not None and r["txn_prev_lsn_packed"] < 0 for r in rows)
    assert any(r["txn_prev_lsn"] == "0x1/0x26" for r in rows)
    assert any(r["problem"] and r["problem"].startswith("item does not match") for r in rows)
    flagged = [(r["env"], r["file"], r["problem"]) for r in rows if r["checksum_valid"] is False]
    expected = [
        ("a", 2, "corrupt: prev offset 0x7f00167d"),
        ("a", 2, "corrupt: both provisional flags"),
        ("a", 2, "corrupt: entry of 30 bytes runs"),  # cut short, but erased (0xff): never a torn tail
        ("a", 3, "log file is missing"),
        ("b", 1, "not a minidb log file"),
        ("c", 1, "corrupt: checksum mismatch"),
        ("c", 1, "log file is empty but is not the last"),
    ]
    assert len(flagged) == len(expected)
    assert [(env, file, problem[:len(start)])
            for (env, file, problem), (_, _, start) in zip(flagged, expected, strict=True)] == expected
    corrupt = next(r["offset"] for r in rows if r["checksum_valid"] is False)
    assert [r for r in rows if r["file"] == 2 and r["offset"] > corrupt and r["problem"] is None]


def test_an_erased_entry_accepted_through_the_erasers_recorded_intent_is_not_called_checked(logs):
    """While the eraser is still erasing a file, an entry it names in its intent is accepted in any of its
    states without its checksum: that row's ``checksum_valid`` is null, the others' stay true."""
    part = next(p for p in log_file_partitions(logs) if p.env == "a" and p.number == 1)
    rows = [r for columns in file_rows(part) for r in to_record_batch(part, columns).to_pylist()]
    erased = [r["offset"] for r in rows if r["erased"] and r["problem"] is None]
    assert erased
    part = copy.copy(part)
    part.erasing = {erased[0]: 0x41}
    rows = [r for columns in file_rows(part) for r in to_record_batch(part, columns).to_pylist()]
    assert [r["checksum_valid"] for r in rows if r["offset"] == erased[0]] == [None]
    assert all(r["checksum_valid"] is True for r in rows if r["offset"] != erased[0] and r["problem"] is None)
