"""The schema of a minidb log as a table: one row per log entry.

``spark.read.format("minidb").load(path)`` returns exactly these columns, in
this order (the Spark schema :data:`LOG_SCHEMA` and its Arrow twin
:data:`ARROW_SCHEMA`, which the data source builds its record batches
against)::

    column               type     null?  meaning
    -------------------  -------  -----  ------------------------------------------
    env                  string   no     the environment's name (its directory,
                                         relative to the path that was loaded)
    env_path             string   no     the environment directory, absolute
    file                 long     no     log file number (00000003.jdb -> 3)
    offset               long     no     byte offset of the entry in the file
    lsn                  string   no     the LSN as JE prints it: 0x3/0x1a0
    lsn_packed           long     no     file << 32 | offset (as JE's DbLsn long)
    type_name            string   yes    entry type (FileHeader, GenUpdate, ...;
                                         Erased, Unknown(0x..)); null if unreadable
    type_code            int      yes    the type byte
    provisional          string   yes    NO | YES | BEFORE_CKPT_END
    replicated           boolean  yes    the REPLICATED flag
    invisible            boolean  yes    the INVISIBLE flag (rolled back by syncup)
    vlsn                 long     yes    the VLSN; null when the entry has none
    txn_id               long     yes    transaction id, for transactional types
    txn_prev_lsn         string   yes    the transaction's previous entry; null for
                                         its first entry and for other types
    txn_prev_lsn_packed  long     yes    the same, packed
    item_size            long     yes    bytes of the item (after the header)
    entry_size           long     yes    header plus item: the bytes the entry takes
    item_checksum        long     yes    CRC-32 of the item with every LSN in it
                                         (txn_prev_lsn, prev_lsn, abort_lsn ...)
                                         read as NULL_LSN: LSNs are node-local, so
                                         the same VLSN has the same checksum on
                                         every node of a replication group
    checksum_valid       boolean  yes    true: checksum verified; false: the entry
                                         is bad (see problem); null: not checked
                                         (verify_checksums=false, or an entry of
                                         an erasure still in progress, accepted
                                         through its recorded intent; an erased
                                         entry is otherwise checked in its
                                         erased form)
    erased               boolean  yes    the data eraser rewrote the entry into
                                         its erased form
    problem              string   yes    null for an intact entry; otherwise what is
                                         wrong (checksum mismatch, not a log file...)

Values that are unsigned 64-bit in the log (``txn_id``, ``vlsn``, packed
LSNs) are stored as Spark longs, two's complement as in Java: the same bits
JE's ``long`` holds. Every value minidb writes today is far below 2**63.

Worked example: the first entry after the FileHeader of a fresh log is the
row ``lsn="0x1/0x2e", lsn_packed=4294967342, offset=46`` (the FileHeader takes
bytes 0..45).
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

# (name, Spark type, Arrow type, nullable)
COLUMNS = [
    ("env", StringType(), pa.string(), False),
    ("env_path", StringType(), pa.string(), False),
    ("file", LongType(), pa.int64(), False),
    ("offset", LongType(), pa.int64(), False),
    ("lsn", StringType(), pa.string(), False),
    ("lsn_packed", LongType(), pa.int64(), False),
    ("type_name", StringType(), pa.string(), True),
    ("type_code", IntegerType(), pa.int32(), True),
    ("provisional", StringType(), pa.string(), True),
    ("replicated", BooleanType(), pa.bool_(), True),
    ("invisible", BooleanType(), pa.bool_(), True),
    ("vlsn", LongType(), pa.int64(), True),
    ("txn_id", LongType(), pa.int64(), True),
    ("txn_prev_lsn", StringType(), pa.string(), True),
    ("txn_prev_lsn_packed", LongType(), pa.int64(), True),
    ("item_size", LongType(), pa.int64(), True),
    ("entry_size", LongType(), pa.int64(), True),
    ("item_checksum", LongType(), pa.int64(), True),
    ("checksum_valid", BooleanType(), pa.bool_(), True),
    ("erased", BooleanType(), pa.bool_(), True),
    ("problem", StringType(), pa.string(), True),
]

COLUMN_NAMES = [name for name, *_ in COLUMNS]
LOG_SCHEMA = StructType([StructField(name, spark_type, nullable) for name, spark_type, _, nullable in COLUMNS])
ARROW_SCHEMA = pa.schema([pa.field(name, arrow_type, nullable=nullable) for name, _, arrow_type, nullable in COLUMNS])
