"""A Spark data source for minidb logs: ``spark.read.format("minidb").load(path)``.

Written with PySpark's Python Data Source API (``pyspark.sql.datasource``).
``path`` is one of

- an environment directory (its log files ``00000001.jdb``, ...);
- a directory of environments: every directory below it that holds log
  files is an environment, named by its path relative to ``path``
  (``env-00``, ``group/node1``);
- a glob (``out/gen/env-0*``), each match taken as above; a match that is a
  log file adds that file alone.

The result has one row per log entry with the columns of
:mod:`minidb.spark.schema`. Planning lists the files (a missing path, or one
without log files, is a :class:`~minidb.errors.UserError` at ``load()``);
each log file is one input partition, so a cluster reads many environments'
files in parallel. A task reads its whole file and walks it with
:func:`minidb.log.scan_tolerant`, the shared log's own scanner: the header
format is decoded in :mod:`minidb.log.header` and nowhere else. Rows go out
as Arrow record batches built against :data:`~minidb.spark.schema.ARROW_SCHEMA`
(at most :data:`BATCH_ROWS` rows each), not one Python tuple at a time.

Bad input never kills the job:

- a torn tail (or unwritten space) at the end of an environment's *last* file
  is what a crash leaves: rows stop where the log ends, exactly as the
  engine's reader stops (no row for it);
- a corrupt entry gets a row with ``checksum_valid = false`` and the
  ``problem``; the scan resynchronises at the next intact entry (the one whose
  ``prev`` names the bad one) and goes on;
- a file that is not a log file (its first entry is no FileHeader), a torn
  entry in a file that is not the last one, or a file that cannot be read
  gives one row flagged the same way, naming the file's problem, and that
  file's scan stops;
- a file that is not the last and ends before the next file's FileHeader
  says (empty, or cut at an entry boundary: every entry left reads as
  intact) gives a row at the offset where it ends, and a file missing from
  the numbering a row at offset 0 of the missing file.

Files are judged by :mod:`minidb.log.check`, as ``minidb verify`` and the
engine's reader judge them, so all report the same problems. To compare a
file's end with the next file's FileHeader, a task reads the first bytes of
the next file too.

Option ``verify_checksums`` (default ``true``): with ``false``, checksums are
not computed (faster; ``checksum_valid`` is null for intact entries), and
only structural damage is found.

Worked example: ``load("out/gen")`` over three environments of two files each
plans six partitions; the row of the entry at ``0x2/0x26`` of ``env-01`` has
``env="env-01"``, ``file=2``, ``offset=38``, ``lsn="0x2/0x26"``.
"""

from __future__ import annotations

import glob
import os
import struct
import zlib
from collections.abc import Callable, Iterator
from functools import lru_cache

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

import minidb.cli.engines  # noqa: F401  (every engine's entry types, for type names)
from minidb.errors import UserError
from minidb.log import (
    LSN, NULL_LSN, LogEntry, bad_entry_problem, file_name, file_number, missing_file, next_file_problem, scan_tolerant,
    type_by_code,
)
from minidb.io import OSDisk
from minidb.log.head import HEAD_FILE, read_log_head
from minidb.log.fields import ItemFormatError, decode_fields, lsn_spans, static_lsn_offsets
from minidb.log.header import EntryHeader
from minidb.log.scan import FileScanner
from minidb.log.types import TXN_FIELDS
from minidb.spark.schema import ARROW_SCHEMA, COLUMN_NAMES, LOG_SCHEMA

FORMAT = "minidb"
BATCH_ROWS = 64 * 1024
_SIGN = 1 << 63


class LogFilePartition(InputPartition):
    """One log file of one environment: the unit of work of a Spark task.

    ``next_number`` is the file after it when that one exists (its FileHeader says where this
    file must end); ``problem`` is set instead for a file that is missing from the numbering."""

    def __init__(self, env: str, env_path: str, path: str, number: int, last: bool,
                 next_number: int | None = None, problem: str | None = None):
        super().__init__(path)
        self.env = env
        self.env_path = env_path
        self.path = path
        self.number = number
        self.last = last  # the environment's highest-numbered file: a torn end is the log's end
        self.next_number = next_number
        self.problem = problem

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LogFilePartition) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"LogFilePartition({self.env}/{file_name(self.number)}{', last' if self.last else ''})"


# -- planning: which files --------------------------------------------------------
def _log_numbers(directory: str) -> list[int]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    numbers = (file_number(n) for n in names if os.path.isfile(os.path.join(directory, n)))
    head = read_log_head(OSDisk(directory, readonly=True)) if HEAD_FILE in names else 1
    return sorted(n for n in numbers if n is not None and n >= head)  # below the head: deleted on purpose


def _environments_under(root: str) -> list[str]:
    found = []
    for directory, subdirs, _ in os.walk(root):
        subdirs.sort()
        if _log_numbers(directory):
            found.append(directory)
    return found


def log_file_partitions(path: str) -> list[LogFilePartition]:
    """The log files that ``load(path)`` reads, one partition each (see the module doc)."""
    if not path:
        raise UserError("no path given: use spark.read.format('minidb').load(PATH)")
    chosen: dict[str, set[int] | None] = {}  # env dir -> chosen file numbers (None: all)
    roots: dict[str, str] = {}  # env dir -> the directory its name is relative to

    def add_tree(root: str) -> None:
        for env in _environments_under(root):
            chosen[env] = None
            roots.setdefault(env, root)

    def add_file(file_path: str) -> None:
        env = os.path.dirname(file_path)
        if chosen.get(env, set()) is not None:
            chosen.setdefault(env, set()).add(file_number(os.path.basename(file_path)))
            roots.setdefault(env, env)

    matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
    if glob.has_magic(path) and not matches:
        raise UserError(f"{path}: the pattern matches nothing")
    for match in matches:
        match = os.path.abspath(match)
        if os.path.isdir(match):
            add_tree(match)
        elif os.path.isfile(match) and file_number(os.path.basename(match)) is not None:
            add_file(match)
        elif not glob.has_magic(path):
            if not os.path.exists(match):
                raise UserError(f"{path}: no such file or directory")
            raise UserError(f"{path}: not a log file (log files are named like 00000001.jdb)")
    if not chosen:
        raise UserError(f"{path}: no minidb log files (named like 00000001.jdb) found there")
    names = {env: _env_name(env, roots[env]) for env in chosen}
    if len(set(names.values())) < len(names):  # two environments would share a name
        common = os.path.commonpath(list(chosen))
        names = {env: os.path.relpath(env, os.path.dirname(common) if env == common else common) for env in chosen}
    partitions = []
    for env in sorted(chosen, key=lambda e: names[e]):
        numbers = _log_numbers(env)
        wanted = chosen[env]
        for number, after in zip(numbers, numbers[1:] + [None]):
            if wanted is None or number in wanted:
                following = after if after == number + 1 else None
                partitions.append(LogFilePartition(names[env], env, os.path.join(env, file_name(number)),
                                                   number, after is None, following))
            gap = missing_file([number, after]) if after is not None and wanted is None else None
            if gap is not None:  # one row for the first file missing there, as verify reports it
                partitions.append(LogFilePartition(names[env], env, os.path.join(env, gap.file_name),
                                                   number + 1, False, problem=gap.what))
    return partitions


def _env_name(env: str, root: str) -> str:
    return os.path.basename(env) if env == root else os.path.relpath(env, root)


# -- reading: one file's rows -----------------------------------------------------
# A task builds, per entry, a tuple of the columns that vary from entry to entry
# (ROW_COLUMNS); the columns that are the same for the whole file (env, env_path,
# file) and lsn_packed (file << 32 | offset) are added to each batch by Arrow.
PER_FILE = ("env", "env_path", "file", "lsn_packed")
ROW_COLUMNS = [name for name in COLUMN_NAMES if name not in PER_FILE]


@lru_cache(maxsize=None)
def _type_name(code: int) -> str:
    """The name minidb's reader gives this type code (LogEntry.type_name)."""
    return LogEntry(LSN(0, 0), EntryHeader(0, code, 0, 0, 0), b"").type_name


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


_NULL_LSN_BYTES = struct.pack("<Q", NULL_LSN.packed)


def _crc_with_null_lsns(item: bytes | memoryview, spans) -> int:
    crc, pos = 0, 0
    for start, end in spans:
        crc = zlib.crc32(_NULL_LSN_BYTES, zlib.crc32(item[pos:start], crc))
        pos = end
    return zlib.crc32(item[pos:], crc)


@lru_cache(maxsize=None)
def _checksummer(code: int) -> Callable[[bytes | memoryview], int]:
    """The item checksum of one type code, made once: most types hold no LSN or one at a fixed
    offset, and the data source computes this for every entry, so those get the short paths."""
    entry_type = type_by_code(code)
    offsets = static_lsn_offsets(entry_type.all_fields) if entry_type is not None else ()
    if offsets == ():
        return zlib.crc32
    if offsets is None:  # an LSN after a sized field or in a list: find them item by item
        fields = entry_type.all_fields

        def walked(item: bytes | memoryview) -> int:
            try:
                spans = lsn_spans(fields, item)
            except ItemFormatError:  # reported in the row's problem; the raw bytes are all there is
                return zlib.crc32(item)
            return _crc_with_null_lsns(item, spans)
        return walked
    if len(offsets) == 1:
        (first,) = offsets
        after = first + 8

        def one(item: bytes | memoryview) -> int:
            if len(item) < after:
                return zlib.crc32(item)
            return zlib.crc32(item[after:], zlib.crc32(_NULL_LSN_BYTES, zlib.crc32(item[:first])))
        return one
    spans = tuple((o, o + 8) for o in offsets)
    return lambda item: _crc_with_null_lsns(item, [span for span in spans if span[1] <= len(item)])


def item_checksum(item: bytes | memoryview, code: int) -> int:
    """CRC-32 of an item with every LSN it holds read as NULL_LSN (see the schema): LSNs are
    node-local, so the same replicated entry has the same checksum on every node of a group."""
    return _checksummer(code)(item)


def file_rows(part: LogFilePartition, verify: bool = True, batch_rows: int = BATCH_ROWS) -> Iterator[list[tuple]]:
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
            None if erased else checked, erased, problem,
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


def _file_header(env_path: str, number: int) -> dict | None:
    """The values of the FileHeader that starts log file ``number``, or None if it has none."""
    try:
        with open(os.path.join(env_path, file_name(number)), "rb") as f:
            head = f.read(4096)  # a FileHeader entry is a few dozen bytes
    except OSError:
        return None
    scanner = FileScanner(head, number)
    next(iter(scanner), None)
    return scanner.file_header


_ROW_FIELDS = [ARROW_SCHEMA.field(name) for name in ROW_COLUMNS]


def to_record_batch(part: LogFilePartition, rows: list[tuple]) -> pa.RecordBatch:
    """Rows of one file (tuples of :data:`ROW_COLUMNS`) as an Arrow record batch
    of exactly :data:`~minidb.spark.schema.ARROW_SCHEMA`."""
    n = len(rows)
    columns = list(zip(*rows)) if rows else [()] * len(ROW_COLUMNS)
    arrays = {field.name: pa.array(column, type=field.type) for column, field in zip(columns, _ROW_FIELDS)}
    arrays["env"] = pa.repeat(pa.scalar(part.env, pa.string()), n)
    arrays["env_path"] = pa.repeat(pa.scalar(part.env_path, pa.string()), n)
    arrays["file"] = pa.repeat(pa.scalar(part.number, pa.int64()), n)
    high = part.number << 32
    if high < _SIGN:
        arrays["lsn_packed"] = pc.add(arrays["offset"], pa.scalar(high, pa.int64()))
    else:  # file numbers from 2**31 on wrap around, as a Java long would
        arrays["lsn_packed"] = pa.array([_signed(high | o) for o in columns[0]], pa.int64())
    return pa.RecordBatch.from_arrays([arrays[name] for name in COLUMN_NAMES], schema=ARROW_SCHEMA)


def parse_bool(name: str, text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise UserError(f"option {name} must be true or false, not {text!r}")


# -- the data source ------------------------------------------------------------------
class MinidbLogSource(DataSource):
    """``spark.read.format("minidb")``: minidb log entries as rows."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        log_file_partitions(self.options.get("path", ""))  # a bad path fails at load(), not later
        return LOG_SCHEMA

    def reader(self, schema: StructType) -> "MinidbLogReader":
        return MinidbLogReader(self.options)


class MinidbLogReader(DataSourceReader):
    def __init__(self, options):
        self.verify = parse_bool("verify_checksums", options.get("verify_checksums", "true"))
        self.parts = log_file_partitions(options.get("path", ""))

    def partitions(self) -> list[LogFilePartition]:
        return self.parts

    def read(self, partition: LogFilePartition) -> Iterator[pa.RecordBatch]:
        for rows in file_rows(partition, self.verify):
            yield to_record_batch(partition, rows)
