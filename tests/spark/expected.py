"""What minidb.log's own reader says about a log, as rows of the Spark schema.

The data source must return exactly these rows for an intact log: they come
from ``LogManager(readonly=True).scan()``, entry by entry, with nothing
shared with the data source's code but the schema's column order.
"""

import os
import zlib

from minidb.io import OSDisk
from minidb.log import NULL_LSN, LogManager, log_file_numbers
from minidb.log.fields import LSN_FIELD, ListOf, encode_fields
from minidb.spark.schema import COLUMN_NAMES


def signed(value):
    return value - (1 << 64) if value is not None and value >= 1 << 63 else value


def _null_lsns(kind, value):
    if kind is LSN_FIELD:
        return NULL_LSN
    if isinstance(kind, ListOf):
        return [{name: _null_lsns(k, record[name]) for name, k in kind.fields} for record in value]
    return value


def lsns_nulled(entry):
    """The entry's item encoded again from its decoded values, every LSN set to NULL_LSN."""
    if entry.entry_type is None or entry.header.erased:
        return entry.item
    fields = entry.entry_type.all_fields
    out = bytearray()
    encode_fields(fields, {name: _null_lsns(kind, entry.values[name]) for name, kind in fields}, out, "expected")
    return bytes(out)


def reader_rows(env_dir, env_name):
    """One dict per entry, as the engine's reader returns the log of ``env_dir``."""
    env_path = os.path.abspath(env_dir)
    log = LogManager(OSDisk(env_path, readonly=True), readonly=True)
    rows = []
    for e in log.scan():
        prev = e.txn_prev_lsn
        prev = None if prev is None or prev.is_null else prev
        neutral = lsns_nulled(e)
        rows.append(dict(
            env=env_name, env_path=env_path, file=e.lsn.file, offset=e.lsn.offset, lsn=str(e.lsn),
            lsn_packed=signed(e.lsn.packed), type_name=e.type_name, type_code=e.header.type_code,
            provisional=e.provisional.name, replicated=e.header.replicated, invisible=e.header.invisible,
            vlsn=signed(e.vlsn), txn_id=signed(e.txn_id), txn_prev_lsn=None if prev is None else str(prev),
            txn_prev_lsn_packed=None if prev is None else signed(prev.packed), item_size=e.header.item_size,
            entry_size=e.size, item_checksum=zlib.crc32(neutral), checksum_valid=True,
            erased=e.header.erased, problem=None,
        ))
    log.close()
    assert list(rows[0]) == COLUMN_NAMES if rows else True
    return rows


def file_sizes(env_dir):
    disk = OSDisk(env_dir, readonly=True)
    return {n: disk.size(f"{n:08x}.jdb") for n in log_file_numbers(disk)}


def log_pos(sizes, lsn):
    """Bytes of the log before ``lsn``: every earlier file whole, then the offset."""
    return sum(size for number, size in sizes.items() if number < lsn.file) + lsn.offset
