"""The data source's former row-at-a-time path, kept as the reference its column builder must match.

It walks a file with :func:`minidb.log.scan_tolerant` and builds one tuple of the columns per entry
(f-strings for the LSNs), then zips the tuples into Arrow arrays: slow, but plain enough to read
line by line. ``tests/spark/test_columns.py`` checks that :func:`minidb.spark.source.file_rows` and
:func:`~minidb.spark.source.to_record_batch` give exactly its rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc

from minidb.log import bad_entry_problem, next_file_problem, scan_tolerant, type_by_code
from minidb.log.fields import ItemFormatError, decode_fields
from minidb.log.header import EntryHeader
from minidb.log.types import TXN_FIELDS
from minidb.spark.schema import ARROW_SCHEMA, COLUMN_NAMES
from minidb.spark.source import _SIGN, BATCH_ROWS, PER_FILE, LogFilePartition, _checksummer, _file_header, _type_name

ROW_COLUMNS = [name for name in COLUMN_NAMES if name not in PER_FILE]


@lru_cache(maxsize=None)
def _header_facts(code: int, flags: int) -> tuple[str, bool, bool, str, bool, bool]:
    """(type name, erased, transactional, provisional, replicated, invisible) of a header."""
    header = EntryHeader(0, code, flags, 0, 0)
    entry_type = type_by_code(code)
    transactional = not header.erased and entry_type is not None and entry_type.transactional
    return (_type_name(code), header.erased, transactional, header.provisional.name, header.replicated,
            header.invisible)


def _signed(value: int) -> int:
    """An unsigned 64-bit value as the Java long with the same bits."""
    return value - (1 << 64) if value >= _SIGN else value


def row_batches(part: LogFilePartition, verify: bool = True, batch_rows: int = BATCH_ROWS) -> Iterator[list[tuple]]:
    """The rows of one log file, in batches of at most ``batch_rows`` tuples
    of the :data:`ROW_COLUMNS` (see :func:`to_record_batch`)."""
    number = part.number

    def bad_row(offset: int, header: EntryHeader | None, problem: str) -> tuple:
        lsn = f"0x{number:x}/0x{offset:x}"
        if header is None:
            return (offset, lsn, None, None, None, None, None, None, None, None, None, None, None, None,
                    False, None, problem)
        name, erased, _, provisional, replicated, invisible = _header_facts(header.type_code, header.flags)
        vlsn = None if header.vlsn is None else _signed(header.vlsn)
        return (offset, lsn, name, header.type_code, provisional, replicated, invisible, vlsn, None, None, None,
                header.item_size, header.entry_size, None, False, erased, problem)

    if part.problem is not None:
        yield [bad_row(0, None, part.problem)]
        return
    try:
        with open(part.path, "rb") as f:
            buf = f.read()
    except OSError as e:
        yield [bad_row(0, None, f"cannot read {part.path}: {e.strerror or e}")]
        return
    view = memoryview(buf)
    checked = True if verify else None
    rows: list[tuple] = []
    last_offset, end = None, 0  # the last intact entry, and where it ends
    for scanned in scan_tolerant(buf, number, verify):
        offset, header = scanned.offset, scanned.header
        if scanned.problem is not None:
            problem = bad_entry_problem(number, offset, scanned.verdict, scanned.problem, part.last)
            if scanned.verdict == "corrupt":
                rows.append(bad_row(offset, header, f"corrupt: {problem.what}"))
                continue
            if problem is not None:
                rows.append(bad_row(problem.offset, None if scanned.verdict == "foreign" else header, problem.what))
            break  # the file's scan stops here (in the last file, a crash's tail simply ends the log)
        last_offset, end = offset, offset + header.entry_size
        code = header.type_code
        name, erased, transactional, provisional, replicated, invisible = _header_facts(code, header.flags)
        start = offset + header.size
        item = view[start:start + header.item_size]
        txn_id = prev = prev_packed = problem = None
        if transactional:
            try:
                values, _ = decode_fields(TXN_FIELDS, item, 0)
            except ItemFormatError as e:
                problem = f"item does not match {name}: {e}"
            else:
                txn_id = _signed(values["txn_id"])
                prev_lsn = values["txn_prev_lsn"]
                if not prev_lsn.is_null:
                    prev, prev_packed = str(prev_lsn), _signed(prev_lsn.packed)
        vlsn = header.vlsn
        rows.append((
            offset, f"0x{number:x}/0x{offset:x}", name, code, provisional, replicated, invisible,
            None if vlsn is None else _signed(vlsn), txn_id, prev, prev_packed,
            header.item_size, header.entry_size, _checksummer(code)(item),
            None if erased and offset in (part.erasing or {}) else checked, erased, problem,
        ))
        if len(rows) >= batch_rows:
            yield rows
            rows = []
    else:  # read to its end: a file that is not the last must end where the next one says
        if not part.last:
            following = None if part.next_number is None else _file_header(part.env_path, part.next_number)
            problem = next_file_problem(number, last_offset, end, part.next_number, following)
            if problem is not None:
                rows.append(bad_row(problem.offset, None, problem.what))
    if rows:
        yield rows


_ROW_FIELDS = [ARROW_SCHEMA.field(name) for name in ROW_COLUMNS]


def rows_to_record_batch(part: LogFilePartition, rows: list[tuple]) -> pa.RecordBatch:
    """Rows of one file (tuples of :data:`ROW_COLUMNS`) as an Arrow record batch
    of exactly :data:`~minidb.spark.schema.ARROW_SCHEMA`."""
    n = len(rows)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(ROW_COLUMNS)
    arrays = {field.name: pa.array(column, type=field.type) for column, field in zip(columns, _ROW_FIELDS, strict=True)}
    arrays["env"] = pa.repeat(pa.scalar(part.env, pa.string()), n)
    arrays["env_path"] = pa.repeat(pa.scalar(part.env_path, pa.string()), n)
    arrays["file"] = pa.repeat(pa.scalar(part.number, pa.int64()), n)
    high = part.number << 32
    if high < _SIGN:
        arrays["lsn_packed"] = pc.add(arrays["offset"], pa.scalar(high, pa.int64()))
    else:  # file numbers from 2**31 on wrap around, as a Java long would
        arrays["lsn_packed"] = pa.array([_signed(high | o) for o in columns[0]], pa.int64())
    return pa.RecordBatch.from_arrays([arrays[name] for name in COLUMN_NAMES], schema=ARROW_SCHEMA)
