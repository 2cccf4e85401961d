"""The log store's entry types, in one table (codes 0x40-0x6f).

In Berkeley DB Java Edition the log *is* the database: every version of every
node is an entry in the log, and nothing is ever updated in place. This table
declares those entries, like Shore's ``logdef.dat``; encoding, decoding and
printing come from it (:mod:`minidb.log.types`), and recovery looks up its
redo handler by the entry's type name (``redo_LN``, ``redo_IN`` ...).

====================  ====  =====  ==================================================
name                  code  flags  what it is
====================  ====  =====  ==================================================
``LN``                0x40  R      a record (leaf node) written without a transaction
``LN_TX``             0x41  RUT    a record written by a transaction, with its abort LSN
``DEL_LN``            0x42  R      a record deleted without a transaction
``DEL_LN_TX``         0x43  RUT    a record deleted by a transaction
``MapLN``             0x44  R      a record of the mapping tree: database name -> id, root
                                   (the mapping tree's own: is the environment replicated)
``OldFileSummaryLN``  0x45  R      a record of ``_utilization`` as logs written before 0x46 hold
                                   it: a file's counts and *all* its obsolete offsets; read as
                                   sequence 0 (its key is the file number alone); written
                                   again only when the cleaner migrates one
``FileSummaryLN``     0x46  R      a record of ``_utilization``: one log file's counts, and the
                                   obsolete offsets tracked since the file's previous record
``IN``                0x48  R      an upper internal node (level >= 2)
``BIN``               0x49  R      a bottom internal node (level 1): slots point at LNs
``Commit``            0x50  T      a transaction committed
``Abort``             0x51  T      a transaction aborted (logged before its undo)
``CkptStart``         0x58         a checkpoint began
``CkptEnd``           0x59         a checkpoint ended: where recovery starts
====================  ====  =====  ==================================================

Field by field (integers little-endian; ``BYTES`` is a U32 length and the
bytes; ``LSN`` is 8 bytes, ``file << 32 | offset``; ``ListOf`` is a U32 count
and the records; ``T`` types begin with ``txn_id`` I64 and ``txn_prev_lsn``)::

    LN_TX item                                  IN item
    +--------+--------------+                   +--------+-------------------+
    | 0  8   | txn_id       |                   | 0  4   | db_id             |
    | 8  8   | txn_prev_lsn |  the txn's chain  | 4  8   | node_id           |
    | 16 4   | db_id        |                   | 12 2   | level             |
    | 20 4+k | key          |                   | 14 1   | is_root           |
    | .. 4+d | data         |                   | 15 4+k | id_key (low bound)|
    | .. 8   | prev_lsn     |  version replaced | .. 1   | high_inf          |
    | .. 8   | abort_lsn    |  version before   | .. 4+h | high_key          |
    | .. 1   | abort_known_deleted   the txn    | .. 8   | prev_lsn          |
    +--------+--------------+                   | .. 4+  | obsolete: [lsn]   |
                                                | .. 4+  | entries: [key,    |
                                                |        |  lsn, node_id]    |
                                                +--------+-------------------+

A BIN is laid out like an IN, its entries ``[key, lsn, known_deleted]``. A
node records its key range: ``id_key`` is the low bound (JE's identifier
key: recovery and the checkpointer find a node's parent by it) and
``high_key`` the exclusive high bound (``high_inf`` for +infinity), so that
recovery can tell a version logged after a split that its parent does not
know about. ``prev_lsn`` is the node's previous version and ``obsolete``
lists the versions this entry made obsolete when it was logged
non-provisionally, so recovery can recount them (the utilization tracker).

Which entries a replicated environment gives VLSNs to is
:data:`REPLICABLE_TYPES`: the records and transaction ends of replicated
databases, and the MapLN that creates a replicated database (later MapLNs,
which record a new root, are local, as are nodes, checkpoints and internal
databases).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log.fields import BOOL, BYTES, LSN_FIELD, STR, U16, U32, U64, ListOf
from minidb.log.types import EntryTable, EntryType

if TYPE_CHECKING:
    from minidb.log.lsn import LSN

_KEY_RANGE = [("id_key", BYTES), ("high_inf", BOOL), ("high_key", BYTES)]
_NODE_HEAD = [("db_id", U32), ("node_id", U64), ("level", U16), ("is_root", BOOL)] + _KEY_RANGE + [
    ("prev_lsn", LSN_FIELD),
    ("obsolete", ListOf(("lsn", LSN_FIELD))),
]
_ABORT = [("abort_lsn", LSN_FIELD), ("abort_known_deleted", BOOL)]
_FILE_COUNTS = [("total_count", U32), ("total_size", U64), ("node_count", U32), ("node_size", U64),
                ("obsolete", ListOf(("offset", U32), ("size", U32))), ("prev_lsn", LSN_FIELD)]

LOGSTORE_TYPES = EntryTable(
    "logstore",
    [
        # name             code  flags  fields
        ("LN",             0x40, "R",   [("db_id", U32), ("key", BYTES), ("data", BYTES), ("prev_lsn", LSN_FIELD)]),
        ("LN_TX",          0x41, "RUT", [("db_id", U32), ("key", BYTES), ("data", BYTES), ("prev_lsn", LSN_FIELD)]
                                        + _ABORT),
        ("DEL_LN",         0x42, "R",   [("db_id", U32), ("key", BYTES), ("prev_lsn", LSN_FIELD)]),
        ("DEL_LN_TX",      0x43, "RUT", [("db_id", U32), ("key", BYTES), ("prev_lsn", LSN_FIELD)] + _ABORT),
        ("MapLN",          0x44, "R",   [("db_id", U32), ("name", STR), ("root_lsn", LSN_FIELD),
                                         ("internal", BOOL), ("replicated", BOOL), ("prev_lsn", LSN_FIELD)]),
        ("OldFileSummaryLN", 0x45, "R", [("file_number", U32)] + _FILE_COUNTS),
        ("FileSummaryLN",  0x46, "R",   [("file_number", U32), ("sequence", U32)] + _FILE_COUNTS),
        ("IN",             0x48, "R",   _NODE_HEAD + [("entries", ListOf(("key", BYTES), ("lsn", LSN_FIELD),
                                                                          ("node_id", U64)))]),
        ("BIN",            0x49, "R",   _NODE_HEAD + [("entries", ListOf(("key", BYTES), ("lsn", LSN_FIELD),
                                                                          ("known_deleted", BOOL)))]),
        ("Commit",         0x50, "T",   [("time_ms", U64)]),
        ("Abort",          0x51, "T",   [("time_ms", U64)]),
        ("CkptStart",      0x58, "",    [("checkpoint_id", U64), ("invoker", STR), ("time_ms", U64)]),
        ("CkptEnd",        0x59, "",    [("checkpoint_id", U64), ("invoker", STR), ("time_ms", U64),
                                         ("ckpt_start_lsn", LSN_FIELD), ("first_active_lsn", LSN_FIELD),
                                         ("root_lsn", LSN_FIELD), ("last_node_id", U64), ("last_db_id", U32),
                                         ("last_txn_id", U64),
                                         ("files_to_delete", ListOf(("file", U32)))]),
    ],
)

LN = LOGSTORE_TYPES.LN
LN_TX = LOGSTORE_TYPES.LN_TX
DEL_LN = LOGSTORE_TYPES.DEL_LN
DEL_LN_TX = LOGSTORE_TYPES.DEL_LN_TX
MAP_LN = LOGSTORE_TYPES.MapLN
FILE_SUMMARY_LN = LOGSTORE_TYPES.FileSummaryLN
OLD_FILE_SUMMARY_LN = LOGSTORE_TYPES.OldFileSummaryLN
IN_ENTRY = LOGSTORE_TYPES.IN
BIN_ENTRY = LOGSTORE_TYPES.BIN
COMMIT = LOGSTORE_TYPES.Commit
ABORT = LOGSTORE_TYPES.Abort
CKPT_START = LOGSTORE_TYPES.CkptStart
CKPT_END = LOGSTORE_TYPES.CkptEnd

#: Records of user databases (what recovery redoes and undoes).
USER_LN_TYPES = frozenset({"LN", "LN_TX", "DEL_LN", "DEL_LN_TX"})
#: The records of ``_utilization``: today's, and the one-record-per-file form of older logs.
FILE_SUMMARY_TYPES = frozenset({"FileSummaryLN", "OldFileSummaryLN"})
#: Every record type: a leaf node of some tree.
LN_TYPES = USER_LN_TYPES | {"MapLN"} | FILE_SUMMARY_TYPES
#: Internal nodes.
IN_TYPES = frozenset({"IN", "BIN"})
#: Entries the cleaner would have to migrate while live; all others are obsolete when written.
NODE_TYPES = LN_TYPES | IN_TYPES
#: What the data eraser erases: records' LNs and the INs that name their keys. An erased entry of
#: any other type is damage (verify, recovery and the cleaner say so).
ERASABLE_TYPES = USER_LN_TYPES | IN_TYPES
#: Deletions: obsolete as soon as the deletion is committed.
DELETED_LN_TYPES = frozenset({"DEL_LN", "DEL_LN_TX"})
#: Entry types that get a VLSN when logged for a replicated database of a
#: replicated environment (JE: LogEntryType.isReplicationPossible).
REPLICABLE_TYPES = frozenset({"LN", "LN_TX", "DEL_LN", "DEL_LN_TX", "Commit", "Abort", "MapLN"})


#: The ids and names of the internal databases every environment has, and the first id of a user one.
MAPPING_DB_ID = 0
UTILIZATION_DB_ID = 1
MAPPING_DB_NAME = "_mapping"
UTILIZATION_DB_NAME = "_utilization"
FIRST_USER_DB_ID = 2
#: The key of the mapping tree's own MapLN, the record of the environment's kind.
KIND_KEY = MAPPING_DB_NAME.encode("utf-8")

_INTERNAL_LN_TYPES = {MAPPING_DB_ID: frozenset({"MapLN"}), UTILIZATION_DB_ID: FILE_SUMMARY_TYPES}


def ln_types_of(db_id: int) -> frozenset[str]:
    """The LN entry types a slot of database ``db_id`` may point at."""
    return _INTERNAL_LN_TYPES.get(db_id, USER_LN_TYPES)


def is_replicable(entry_type: EntryType) -> bool:
    """May entries of this type carry a VLSN (in a replicated database)?"""
    return entry_type.name in REPLICABLE_TYPES


def recovery_start(ckpt_end_values: dict) -> LSN:
    """Where recovery starts reading, by a CkptEnd's values: min(firstActiveLSN, CkptStart). Recovery reads
    from there, the eraser never erases from there on, and verify refuses an erased entry there."""
    return min(ckpt_end_values["first_active_lsn"], ckpt_end_values["ckpt_start_lsn"])


__all__ = [
    "recovery_start", "LOGSTORE_TYPES", "LN", "LN_TX", "DEL_LN", "DEL_LN_TX", "MAP_LN", "FILE_SUMMARY_LN", "OLD_FILE_SUMMARY_LN",
    "FILE_SUMMARY_TYPES", "IN_ENTRY",
    "BIN_ENTRY", "COMMIT", "ABORT", "CKPT_START", "CKPT_END", "USER_LN_TYPES", "LN_TYPES", "IN_TYPES",
    "NODE_TYPES", "ERASABLE_TYPES", "DELETED_LN_TYPES", "REPLICABLE_TYPES", "is_replicable", "MAPPING_DB_ID",
    "UTILIZATION_DB_ID", "MAPPING_DB_NAME", "UTILIZATION_DB_NAME", "FIRST_USER_DB_ID", "KIND_KEY", "ln_types_of",
]
