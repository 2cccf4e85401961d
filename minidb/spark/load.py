"""The pipeline behind ``minidb spark load``: Spark sorts a dataset by key, minidb bulk-loads it into a B+tree.

:func:`load` reads a dataset (CSV with a header line, Parquet or JSON lines)
and builds one unique B+tree index of a page store volume from it:

1. **Rejects.** A row whose key is missing (null or absent) or does not
   convert to the key's type, or whose key and element are too large for a
   page (:func:`~minidb.pagestore.btree.keyed.max_entry`), is not loaded: it
   is written, every column as text plus a ``reason`` column, to the
   Parquet table ``VOLUME/rejects/NAME/`` (replaced if there), and counted.
2. **Sorting.** The other rows are range-partitioned by key and sorted
   within each partition (``repartitionByRange`` + ``sortWithinPartitions``)
   on the executors, so partition *i* holds keys below partition *i+1*'s.
3. **Loading.** The driver, where the volume is, reads the partitions one
   after the other in key order (``toLocalIterator``: one partition in
   memory at a time) into one bulk load
   (:meth:`~minidb.pagestore.sm.StorageManager.bulk_load_index`) in one
   transaction, committed at the end: the index is all there or not at all.

**Keys.** The key column's type picks the key descriptor: an integer
column is ``i8`` (64-bit signed), a string column ``str``; ``key_type``
("int" or "str") overrides it, converting each key (a string key that is not
a whole number is then a reject; an integer key becomes its decimal text).
Any other type needs ``key_type``. The index is **unique**: two rows with
the same key stop the load with an error naming the first duplicate key (the
bulk load's own check; nothing is left: no index, no rejects table).

**Elements** (the value columns, all but the key by default) are encoded
by Spark, each column as its text, length-prefixed::

    for each value column, in the order given:
        offset size  field
           0     4   n     length of the text, big-endian; 0xffffffff: null (no text follows)
           4     n   text  the value cast to a string, UTF-8

so ``(7, "ab", null)`` as three value columns is
``00 00 00 01 37 | 00 00 00 02 61 62 | ff ff ff ff``;
:func:`decode_element` turns an element back into the list of texts.
"""

from __future__ import annotations

import math
import os
import struct
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession, functions as F, types as T

from minidb.errors import UserError
from minidb.io import OSDisk
from minidb.pagestore.btree.bulkload import check_fill
from minidb.pagestore.btree.keyed import max_entry
from minidb.pagestore.ids import StoreId
from minidb.pagestore.sm import StorageManager
from minidb.pagestore.verify import is_pagestore

FORMATS = ("csv", "parquet", "json")
KEY_TYPES = {"int": "i8", "str": "str"}
NULL_LENGTH = 0xFFFFFFFF
ROWS_PER_PARTITION = 250_000  # what the driver holds at a time


@dataclass(frozen=True)
class LoadRequest:
    """What to load: ``src`` (a file or directory) into index ``index`` of the volume in ``volume``."""

    src: str
    volume: str
    index: str
    key: str
    values: tuple[str, ...] | None = None  # None: every column but the key
    fmt: str | None = None  # None: from the name's extension
    key_type: str | None = None  # None: from the key column's type
    fill: float = 0.9


@dataclass(frozen=True)
class LoadResult:
    index: str
    stid: StoreId
    rows: int
    rejected: int
    rejects: str
    pages: int
    height: int
    seconds: float

    def summary(self) -> str:
        return (f"minidb spark load: {self.rows:,} rows loaded into index {self.index!r} ({self.stid}), "
                f"{self.rejected:,} rejected ({self.rejects}), {self.pages:,} pages, tree height {self.height}, "
                f"{self.seconds:.1f} s")


def decode_element(el: bytes) -> list[str | None]:
    """The value texts of an element (see the module documentation)."""
    out, pos = [], 0
    while pos < len(el):
        (n,) = struct.unpack_from(">I", el, pos)
        pos += 4
        if n == NULL_LENGTH:
            out.append(None)
            continue
        out.append(el[pos:pos + n].decode())
        pos += n
    return out


def encode_element(values: Iterable[str | None]) -> bytes:
    """The element of value texts, as Spark builds it (for tests and for users' own loads)."""
    return b"".join(struct.pack(">I", NULL_LENGTH) if v is None else struct.pack(">I", len(v.encode())) + v.encode()
                    for v in values)


def source_format(request: LoadRequest) -> str:
    if request.fmt is not None:
        if request.fmt not in FORMATS:
            raise UserError(f"--format {request.fmt!r}: one of {', '.join(FORMATS)}")
        return request.fmt
    ext = os.path.splitext(request.src.rstrip("/"))[1].lstrip(".").lower()
    if ext in FORMATS:
        return ext
    raise UserError(f"{request.src}: cannot tell its format from its name; give --format ({', '.join(FORMATS)})")


def check_source(request: LoadRequest) -> None:
    """The dataset exists and its format is known (a one-line error otherwise)."""
    if not os.path.exists(request.src):
        raise UserError(f"{request.src}: no such file or directory")
    source_format(request)


def check_request(request: LoadRequest) -> None:
    """The checks that need no Spark: the dataset's, then the volume is there and the name is free."""
    check_source(request)
    check_fill(request.fill)
    open_volume(request).close()


def open_volume(request: LoadRequest) -> StorageManager:
    """The volume in ``request.volume``, with the index name still free (a one-line error otherwise)."""
    if not os.path.isdir(request.volume) or not is_pagestore(OSDisk(request.volume, readonly=True)):
        raise UserError(f"--volume {request.volume}: no page store volume there (--create makes one)")
    sm = StorageManager.open(OSDisk(request.volume), restart_trace=False, frames=256)
    if sm.find_index(request.index) is not None:
        sm.close()
        raise UserError(f"--index {request.index!r}: the volume {request.volume} already has an index of that name")
    return sm


def read_source(spark: SparkSession, request: LoadRequest) -> DataFrame:
    fmt = source_format(request)
    reader = spark.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", "true").option("inferSchema", "true")
    return reader.load(request.src)


def key_descriptor(df: DataFrame, request: LoadRequest) -> str:
    """``i8`` or ``str`` (see the module documentation); a one-line error for an unknown or unusable column."""
    columns = {f.name: f.dataType for f in df.schema.fields}
    for name in (request.key, *(request.values or ())):
        if name not in columns:
            raise UserError(f"{request.src}: no column {name!r} (columns: {', '.join(columns)})")
    if request.key_type is not None:
        if request.key_type not in KEY_TYPES:
            raise UserError(f"--key-type {request.key_type!r}: one of {', '.join(KEY_TYPES)}")
        return KEY_TYPES[request.key_type]
    kind = columns[request.key]
    if isinstance(kind, T.IntegralType):
        return "i8"
    if isinstance(kind, T.StringType):
        return "str"
    raise UserError(f"{request.src}: key column {request.key!r} is of type {kind.simpleString()}: "
                    f"give --key-type int or str")


def _length(n: Column) -> Column:
    return F.unhex(F.lpad(F.hex(n.cast("long")), 8, "0"))


def element_column(names: Iterable[str]) -> Column:
    """The element built by Spark (see the module documentation)."""
    parts = []
    for name in names:
        text = F.col(name).cast("string")
        parts.append(F.when(text.isNull(), F.unhex(F.lit("FFFFFFFF")))
                     .otherwise(F.concat(_length(F.octet_length(text)), F.encode(text, "UTF-8"))))
    return F.concat(*parts) if parts else F.lit(b"").cast("binary")


def with_key_and_element(df: DataFrame, request: LoadRequest, desc: str, most: int) -> DataFrame:
    """``df`` with ``_key`` (converted, null if it does not convert), ``_el`` and ``_reason`` (null: a good row)."""
    key = F.col(request.key)
    values = request.values if request.values is not None else [c for c in df.columns if c != request.key]
    if desc == "i8":
        converted = key.cast("long") if isinstance(df.schema[request.key].dataType, T.IntegralType) \
            else F.expr(f"try_cast(trim(cast(`{request.key}` as string)) as bigint)")
        size = F.lit(8)
        bad = "the key is not a 64-bit integer"
    else:
        converted = key.cast("string")
        size = F.octet_length(converted) + 2  # the escaped UTF-8 and its terminator, at least
        bad = "the key is not text"
    df = df.select("*", converted.alias("_key"), element_column(values).alias("_el"))
    too_big = size + F.length(F.col("_el")) > most
    reason = (F.when(key.isNull(), F.lit("missing key"))
              .when(F.col("_key").isNull(), F.lit(bad))
              .when(too_big, F.concat(F.lit("key and values take more than "), F.lit(str(most)), F.lit(" bytes"))))
    return df.withColumn("_reason", reason)


def load(spark: SparkSession, request: LoadRequest, progress: Callable[[Iterator, int], Iterator] | None = None) -> LoadResult:
    """Load ``request`` (see the module documentation); ``progress(rows, total)`` may wrap the row stream."""
    started = time.monotonic()
    check_request(request)
    sm = open_volume(request)
    rejects = os.path.join(request.volume, "rejects", request.index)
    rows = None
    try:
        df = read_source(spark, request)
        desc = key_descriptor(df, request)
        rows = with_key_and_element(df, request, desc, max_entry(sm.bp.page_size)).cache()
        bad = rows.where(F.col("_reason").isNotNull())
        bad.select(*[F.col(c).cast("string") for c in df.columns], F.col("_reason").alias("reason")) \
            .coalesce(1).write.mode("overwrite").parquet(rejects)
        rejected = spark.read.parquet(rejects).count()
        total = rows.count() - rejected
        parts = max(1, math.ceil(total / ROWS_PER_PARTITION))
        good = (rows.where(F.col("_reason").isNull()).select("_key", "_el")
                .repartitionByRange(parts, "_key").sortWithinPartitions("_key"))
        stream: Iterator = ((r[0], bytes(r[1])) for r in good.toLocalIterator(prefetchPartitions=True))
        if progress is not None:
            stream = progress(stream, total)
        t = sm.begin()
        try:
            stid, report = sm.bulk_load_index(t, desc, stream, unique=True, fill=request.fill, name=request.index)
        except BaseException:
            sm.abort(t)
            _remove_tree(rejects)
            raise
        sm.commit(t)
    finally:
        if rows is not None:
            rows.unpersist()
        sm.close()
    return LoadResult(request.index, stid, report.rows, rejected, rejects, report.pages, report.height,
                      time.monotonic() - started)


def _remove_tree(path: str) -> None:
    """Remove the rejects table this load wrote (its files, then its directories)."""
    for top, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.remove(os.path.join(top, name))
        for name in dirs:
            os.rmdir(os.path.join(top, name))
    if os.path.isdir(path):
        os.rmdir(path)
