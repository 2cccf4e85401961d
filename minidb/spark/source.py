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
files in parallel. A task reads its whole file and walks it as
:func:`minidb.log.scan_tolerant` does, with the shared log's own checks (each
entry through the log's ``check_entry``, the file's FileHeader and a bad
entry through its ``FileScanner`` and ``judge_bad_entry``): the header format is
decoded in :mod:`minidb.log.header` and nowhere else. Rows go out as Arrow
record batches built against :data:`~minidb.spark.schema.ARROW_SCHEMA` (at
most :data:`BATCH_ROWS` rows each), column by column: the walk fills a few
Python lists of raw numbers per batch (:class:`FileColumns`), and Arrow's
vectorised functions derive the columns from them (the type name by a
dictionary of every type byte's name, the flags' booleans by bit tests), with
no tuple, dict or string made per row. That keeps the data source's own work
about as fast as the engine's plain reader (``BENCHMARKS.md``).

Bad input never kills the job:

- a torn tail (or unwritten space) at the end of an environment's *last* file
  is what a crash leaves: rows stop where the log ends, exactly as the
  engine's reader stops (no row for it);
- an erased entry is checked in its erased form (:mod:`minidb.log.header`);
  one the log store's eraser was still erasing when it stopped is accepted
  because the environment's ``eraser.state`` records that intent (read once
  per environment at planning); any other 0xff entry that does not verify is
  corrupt;
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
  the numbering a row at offset 0 of the missing file (files below the log
  head, or named by the deleted-files record, :mod:`minidb.log.deleted`, were
  deleted on purpose: they are neither listed nor missing).

- a file of another environment (its FileHeader's environment id is not the
  one the driver learned for the environment when it planned the job: a page
  store's volume header's, else the first kept file's) gives one row naming
  the file and both ids, and none of its entries; a file of another log
  format version one row naming it.

Files are judged by :mod:`minidb.log.check`, as ``minidb verify`` and the
engine's reader judge them, so all report the same problems. To compare a
file's end with the next file's FileHeader, a task reads the first bytes of
the next file too.

Option ``verify_checksums`` (default ``true``): with ``false``, checksums are
not computed (faster; ``checksum_valid`` is null for intact entries), and
only structural damage is found.

Worked example: ``load("out/gen")`` over three environments of two files each
plans six partitions; the row of the entry at ``0x2/0x2e`` of ``env-01`` has
``env="env-01"``, ``file=2``, ``offset=46``, ``lsn="0x2/0x2e"``.
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
from minidb.errors import ForeignLogFileError, LogVersionError, UserError
from minidb.io import OSDisk
from minidb.log import (
    LSN,
    NULL_LSN,
    LogEntry,
    bad_entry_problem,
    file_name,
    file_number,
    missing_file,
    next_file_problem,
    type_by_code,
)
from minidb.log.check import foreign_file_problem
from minidb.log.deleted import DELETED_FILE, read_deleted_files
from minidb.log.end import log_env_id
from minidb.log.fields import ItemFormatError, decode_fields, lsn_spans, static_lsn_offsets
from minidb.log.head import HEAD_FILE, read_log_head
from minidb.log.header import (
    CHECK_ENTRY,
    ERASED_TYPE,
    HEADER_SIZE,
    INVISIBLE,
    MAX_HEADER_SIZE,
    REPLICATED,
    VLSN_PRESENT,
    EntryHeader,
)
from minidb.log.scan import FileScanner, judge_bad_entry
from minidb.log.types import TXN_FIELDS
from minidb.logstore.eraser.state import erasing_of
from minidb.pagestore.volume.volfile import volume_env_id
from minidb.spark.schema import ARROW_SCHEMA, COLUMN_NAMES, LOG_SCHEMA

FORMAT = "minidb"
BATCH_ROWS = 64 * 1024
_SIGN = 1 << 63


class LogFilePartition(InputPartition):
    """One log file of one environment: the unit of work of a Spark task.

    ``next_number`` is the file after it when that one exists (its FileHeader says where this
    file must end); ``problem`` is set instead for a file that is missing from the numbering."""

    def __init__(self, env: str, env_path: str, path: str, number: int, last: bool,
                 next_number: int | None = None, problem: str | None = None, erasing: dict[int, int] | None = None,
                 env_id: int | None = None):
        super().__init__(path)
        self.env = env
        self.env_path = env_path
        self.path = path
        self.number = number
        self.last = last  # the environment's highest-numbered file: a torn end is the log's end
        self.next_number = next_number
        self.problem = problem
        self.erasing = erasing  # an unfinished erasure of this file the log store's eraser recorded: offset -> type
        self.env_id = env_id  # the environment's id, learned once by the driver: the file must carry it

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
    disk = OSDisk(directory, readonly=True)
    head = read_log_head(disk) if HEAD_FILE in names else 1
    deleted = read_deleted_files(disk) if DELETED_FILE in names else frozenset()
    # below the head, or recorded deleted from the middle: deleted on purpose
    return sorted(n for n in numbers if n is not None and n >= head and n not in deleted)


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
        erasing = erasing_of(OSDisk(env, readonly=True))  # the eraser's recorded intent, read once per environment
        deleted = read_deleted_files(OSDisk(env, readonly=True))  # middle files deleted on purpose
        env_id = _environment_id(env, numbers)
        for number, after in zip(numbers, numbers[1:] + [None], strict=True):
            if wanted is None or number in wanted:
                following = after if after == number + 1 else None
                partitions.append(LogFilePartition(names[env], env, os.path.join(env, file_name(number)),
                                                   number, after is None, following, erasing=erasing.get(number),
                                                   env_id=env_id))
            gap = missing_file([number, after], deleted) if after is not None and wanted is None else None
            if gap is not None:  # one row for the first file missing there, as verify reports it
                partitions.append(LogFilePartition(names[env], env, os.path.join(env, gap.file_name),
                                                   number + 1, False, problem=gap.what))
    return partitions


def _environment_id(env_path: str, numbers: list[int]) -> int | None:
    """The environment's id, as the engine would take it: a page store's volume header's, else the one
    its log files carry (:func:`~minidb.log.end.log_env_id`: the first and last file's, the majority's
    when they differ; on a tie, the first file's, so the last is reported as foreign); None if nothing
    says: each file's own check reports why."""
    disk = OSDisk(env_path, readonly=True)
    env_id = volume_env_id(disk)
    if env_id is None:
        first, last = _file_header(env_path, numbers[0]), _file_header(env_path, numbers[-1])
        try:
            env_id = log_env_id(disk, numbers, first, last)
        except ForeignLogFileError:
            env_id = None if first is None else first["env_id"]
    return env_id


def _env_name(env: str, root: str) -> str:
    return os.path.basename(env) if env == root else os.path.relpath(env, root)


# -- reading: one file's columns ----------------------------------------------------
# A task fills, in one pass over the file's bytes, a few Python lists per batch (FileColumns:
# the raw numbers of each entry, no tuple, dict or string per row); to_record_batch then makes
# every column of the schema from them with Arrow's vectorised functions: the type name and the
# provisional state are dictionary columns (indices + names), the flags' booleans bit tests, the
# LSN text one %-format per batch. The columns that are the same for the whole file (env,
# env_path, file) are added per batch, and lsn_packed is file << 32 | offset.
PER_FILE = ("env", "env_path", "file", "lsn_packed")
_TXN_PREFIX = struct.Struct("<qQ")  # TXN_FIELDS: txn_id (I64), txn_prev_lsn (LSN, packed)
_NULL_LSN_PACKED = NULL_LSN.packed
_PROVISIONAL_NAMES = pa.array(["NO", "YES", "BEFORE_CKPT_END", "YES"])  # by flags & 3, as EntryHeader.provisional
_MASK_32 = 0xFFFF_FFFF


@lru_cache(maxsize=None)
def _type_name(code: int) -> str:
    """The name minidb's reader gives this type code (LogEntry.type_name)."""
    return LogEntry(LSN(0, 0), EntryHeader(0, code, 0, 0, 0), b"").type_name


@lru_cache(maxsize=1)
def type_names() -> pa.Array:
    """The dictionary of the type_name column: the name of every type byte, indexed by the byte."""
    return pa.array([_type_name(code) for code in range(256)], pa.string())


@lru_cache(maxsize=None)
def _transactional(code: int) -> bool:
    """Does an intact entry of this type start with the transaction prefix (TXN_FIELDS)?"""
    entry_type = type_by_code(code)
    return code != ERASED_TYPE and entry_type is not None and entry_type.transactional


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


class FileColumns:
    """One batch of one file's rows, column by column: the raw numbers of each entry.

    Per row: ``offset``; ``code``, ``flags``, ``vlsn``, ``item_size`` from its header (None
    when not even the header could be read); ``txn_id`` and ``prev_lsn`` (packed, unsigned;
    None for NULL_LSN) of a transactional entry; ``checksum`` (the item checksum; None exactly
    for a row that reports a bad entry or file) and ``problem``. ``checked`` is what
    ``checksum_valid`` says of an intact entry (True, or None when checksums were not verified; an
    erased entry the eraser's recorded intent accepted is None whatever it says).
    :func:`to_record_batch` derives every other column from these."""

    __slots__ = ("offset", "code", "flags", "vlsn", "item_size", "txn_id", "prev_lsn", "checksum", "problem",
                 "checked")
    LISTS = __slots__[:-1]

    def __init__(self, checked: bool | None = True):
        for name in self.LISTS:
            setattr(self, name, [])
        self.checked = checked

    def __len__(self) -> int:
        return len(self.offset)

    def add_bad(self, offset: int, header: EntryHeader | None, problem: str) -> None:
        """A row for a bad entry (with what its header says, if it could be read) or a bad file."""
        self.offset.append(offset)
        self.code.append(None if header is None else header.type_code)
        self.flags.append(None if header is None else header.flags)
        self.vlsn.append(None if header is None else header.vlsn)
        self.item_size.append(None if header is None else header.item_size)
        self.txn_id.append(None)
        self.prev_lsn.append(None)
        self.checksum.append(None)
        self.problem.append(problem)


def file_rows(part: LogFilePartition, verify: bool = True, batch_rows: int = BATCH_ROWS) -> Iterator[FileColumns]:
    """The rows of one log file, in batches of at most ``batch_rows`` rows (see :func:`to_record_batch`).

    The walk is :func:`minidb.log.scan_tolerant`'s, unrolled so that a good entry costs one call
    of the log's :func:`~minidb.log.header.check_entry` (its hot spot ``CHECK_ENTRY``) and a few
    list appends: the file's first entry and a bad entry go through the log's
    :class:`~minidb.log.scan.FileScanner`, and a bad entry is judged by
    :func:`~minidb.log.scan.judge_bad_entry`, exactly as ``scan_tolerant`` does."""
    number = part.number
    columns = FileColumns(True if verify else None)
    if part.problem is not None:
        columns.add_bad(0, None, part.problem)
        yield columns
        return
    try:
        with open(part.path, "rb") as f:
            buf = f.read()
    except OSError as e:
        columns.add_bad(0, None, f"cannot read {part.path}: {e.strerror or e}")
        yield columns
        return
    view = memoryview(buf)
    size = len(buf)
    checksummers: dict[int, Callable] = {}
    unpack_prefix = _TXN_PREFIX.unpack_from
    last_offset, end = None, 0  # the last intact entry, and where it ends
    pos, prev = 0, None  # the entry to read, and the one before it (None: pos is the FileHeader's place)
    stopped = False
    while pos < size:
        if prev is not None:
            erasing = part.erasing.get(pos) if part.erasing else None
            header, problem = CHECK_ENTRY.call(buf, pos, prev, verify, erasing)
        if prev is None or problem is not None:  # the FileHeader, or a bad entry: the scanner judges it
            scanner = FileScanner(buf, number, verify=verify, start=pos, prev=prev, erasing=part.erasing)
            try:
                found = next(iter(scanner), None)
            except LogVersionError as e:  # a file of another log format version: refused, by name
                columns.add_bad(0, None, str(e))
                stopped = True
                break
            foreign = foreign_file_problem(number, scanner.file_header, part.env_id) if pos == 0 else None
            if foreign is not None:  # another environment's file: none of its entries is this log's
                columns.add_bad(0, None, foreign.what)
                stopped = True
                break
            if found is None:
                bad, bad_header = scanner.bad_offset or 0, scanner.bad_header
                verdict = judge_bad_entry(buf, bad, bad_header)
                problem = bad_entry_problem(number, bad, verdict.kind, scanner.problem, part.last)
                if verdict.kind == "corrupt":
                    columns.add_bad(bad, bad_header, f"corrupt: {problem.what}")
                    if verdict.successor is not None:  # resynchronise at the entry whose prev names it
                        pos, prev = verdict.successor, bad
                        continue
                    break  # nothing intact after it: the file was still read to its end
                if problem is not None:
                    columns.add_bad(problem.offset, None if verdict.kind == "foreign" else bad_header, problem.what)
                stopped = True  # the file's scan stops here (in the last file, a crash's tail ends the log)
                break
            header = found[1]
        code, item_size = header.type_code, header.item_size
        start = pos + (MAX_HEADER_SIZE if header.flags & VLSN_PRESENT else HEADER_SIZE)
        txn_id = prev_lsn = problem = None
        if _transactional(code):
            if item_size >= _TXN_PREFIX.size:
                txn_id, prev_lsn = unpack_prefix(buf, start)
                if prev_lsn == _NULL_LSN_PACKED:
                    prev_lsn = None
            else:  # too short: the field decoder says what is missing
                try:
                    decode_fields(TXN_FIELDS, view[start:start + item_size], 0)
                except ItemFormatError as e:
                    problem = f"item does not match {_type_name(code)}: {e}"
        checksummer = checksummers.get(code)
        if checksummer is None:
            checksummer = checksummers[code] = _checksummer(code)
        columns.offset.append(pos)
        columns.code.append(code)
        columns.flags.append(header.flags)
        columns.vlsn.append(header.vlsn)
        columns.item_size.append(item_size)
        columns.txn_id.append(txn_id)
        columns.prev_lsn.append(prev_lsn)
        columns.checksum.append(checksummer(view[start:start + item_size]))
        columns.problem.append(problem)
        last_offset, prev = pos, pos
        pos = end = start + item_size
        if len(columns) >= batch_rows:
            yield columns
            columns = FileColumns(columns.checked)
    if not stopped and not part.last:  # read to its end: a file that is not the last must end where the next one says
        following = None if part.next_number is None else _file_header(part.env_path, part.next_number)
        problem = next_file_problem(number, last_offset, end, part.next_number, following)
        if problem is not None:
            columns.add_bad(problem.offset, None, problem.what)
    if len(columns):
        yield columns


def _file_header(env_path: str, number: int) -> dict | None:
    """The values of the FileHeader that starts log file ``number``, or None if it has none (or one of
    another log format version)."""
    try:
        with open(os.path.join(env_path, file_name(number)), "rb") as f:
            head = f.read(4096)  # a FileHeader entry is a few dozen bytes
    except OSError:
        return None
    scanner = FileScanner(head, number)
    try:
        next(iter(scanner), None)
    except LogVersionError:  # its own partition names it
        return None
    return scanner.file_header


def _hex_text(template: str, values: list[int]) -> list[str]:
    """``template`` (one line, ``%x`` fields) filled from ``values`` for each row: one %-format over
    the whole batch (a loop in C), not a Python f-string per row."""
    if not values:
        return []
    rows = len(values) // template.count("%")
    return (template * rows % tuple(values))[:-1].split("\n")


def _bit(flags: pa.Array, bit: int) -> pa.Array:
    return pc.not_equal(pc.bit_wise_and(flags, pa.scalar(bit, pa.int32())), pa.scalar(0, pa.int32()))


def _as_signed(values: list[int | None]) -> pa.Array:
    """Unsigned 64-bit values as Spark longs (the Java long with the same bits)."""
    return pa.array(values, pa.uint64()).view(pa.int64())


def to_record_batch(part: LogFilePartition, columns: FileColumns) -> pa.RecordBatch:
    """One batch of a file's rows (:class:`FileColumns`) as an Arrow record batch
    of exactly :data:`~minidb.spark.schema.ARROW_SCHEMA`, built column by column."""
    n = len(columns)
    offset = pa.array(columns.offset, pa.int64())
    code = pa.array(columns.code, pa.int32())
    flags = pa.array(columns.flags, pa.int32())
    item_size = pa.array(columns.item_size, pa.int64())
    checksum = pa.array(columns.checksum, pa.int64())
    erased = pc.equal(code, pa.scalar(ERASED_TYPE, pa.int32()))
    # The names as dictionary columns: a vectorised take by the type byte (and by flags & 3),
    # then decoded to the plain strings the schema has.
    type_name = pa.DictionaryArray.from_arrays(code, type_names()).dictionary_decode()
    provisional = pa.DictionaryArray.from_arrays(pc.bit_wise_and(flags, pa.scalar(3, pa.int32())),
                                                 _PROVISIONAL_NAMES).dictionary_decode()
    vlsn_present = _bit(flags, VLSN_PRESENT)
    entry_size = pc.add(item_size, pc.if_else(vlsn_present, pa.scalar(MAX_HEADER_SIZE, pa.int64()),
                                              pa.scalar(HEADER_SIZE, pa.int64())))
    # A row without a checksum reports a bad entry (false); an intact one is `checked` (an erased one was
    # checked in its erased form), unless an unfinished erasure of it was accepted through the eraser's
    # recorded intent, without its checksum (null).
    checked = pa.scalar(columns.checked, pa.bool_())
    intent = pa.array(sorted(part.erasing or ()), pa.int64())
    by_intent = pc.and_(erased, pc.is_in(offset, value_set=intent))
    checksum_valid = pc.if_else(pc.is_null(checksum), pa.scalar(False),
                                pc.if_else(by_intent, pa.scalar(None, pa.bool_()), checked))
    prev_lsn = _as_signed(columns.prev_lsn)
    halves = [half for p in columns.prev_lsn if p is not None for half in (p >> 32, p & _MASK_32)]
    prev_text = pa.array(_hex_text("0x%x/0x%x\n", halves), pa.string())
    # Each row with a previous LSN takes the next text: index = running count of such rows - 1.
    has_prev = pc.is_valid(prev_lsn)
    index = pc.subtract(pc.cumulative_sum(has_prev.cast(pa.int32())), pa.scalar(1, pa.int32()))
    txn_prev_lsn = pc.take(prev_text, pc.if_else(has_prev, index, pa.scalar(None, pa.int32())))
    high = part.number << 32
    if high < _SIGN:
        lsn_packed = pc.add(offset, pa.scalar(high, pa.int64()))
    else:  # file numbers from 2**31 on wrap around, as a Java long would
        lsn_packed = _as_signed([high | o for o in columns.offset])
    arrays = {
        "env": pa.repeat(pa.scalar(part.env, pa.string()), n),
        "env_path": pa.repeat(pa.scalar(part.env_path, pa.string()), n),
        "file": pa.repeat(pa.scalar(part.number, pa.int64()), n),
        "offset": offset,
        "lsn": pa.array(_hex_text(f"0x{part.number:x}/0x%x\n", columns.offset), pa.string()),
        "lsn_packed": lsn_packed,
        "type_name": type_name,
        "type_code": code,
        "provisional": provisional,
        "replicated": _bit(flags, REPLICATED),
        "invisible": _bit(flags, INVISIBLE),
        "vlsn": _as_signed(columns.vlsn),
        "txn_id": pa.array(columns.txn_id, pa.int64()),
        "txn_prev_lsn": txn_prev_lsn,
        "txn_prev_lsn_packed": prev_lsn,
        "item_size": item_size,
        "entry_size": entry_size,
        "item_checksum": checksum,
        "checksum_valid": checksum_valid,
        "erased": erased,
        "problem": pa.array(columns.problem, pa.string()),
    }
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
        for columns in file_rows(partition, self.verify):
            yield to_record_batch(partition, columns)
