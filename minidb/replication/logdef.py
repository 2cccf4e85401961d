"""Replication's entry types, in one table (codes 0x70-0x7e).

The records and transaction ends of replicated databases are the log
store's own types (:data:`minidb.logstore.REPLICABLE_TYPES`), tagged with a
VLSN in the entry header. Replication adds the entries that exist only in
the replication stream:

==============  ====  =====  ===================================================
name            code  flags  what it is
==============  ====  =====  ===================================================
``Matchpoint``  0x70         a sync point that is not a transaction end (JE's
                             LOG_MATCHPOINT): a syncup may end here, so it moves
                             the VLSN range's ``last_sync`` but not ``last_txn_end``
``RollbackStart`` 0x71       a syncup rollback begins (JE's LOG_ROLLBACK_START):
                             everything after the matchpoint is rolled back
``RollbackEnd`` 0x72         that rollback is finished (JE's LOG_ROLLBACK_END)
``TermStart``   0x73         the first entry a newly elected master logs: the
                             term it was elected for; the entries after it (up to
                             the next TermStart) are that term's master's own.
                             Elections rank a node's log by its last TermStart
                             first (:mod:`minidb.replication.group.elections`); a sync
                             point, like a Matchpoint
==============  ====  =====  ===================================================

Field by field (little-endian)::

    Matchpoint item
    +--------+----------------+
    | 0  4   | master_node_id |   the node that was master when it was logged
    | 4  8   | time_ms        |
    +--------+----------------+

    RollbackStart item                          RollbackEnd item
    +--------+------------------+               +--------+-------------------+
    | 0  8   | matchpoint_vlsn  |               | 0  8   | matchpoint_vlsn   |
    | 8  8   | matchpoint_lsn   |  (LSN)        | 8  8   | rollback_start_lsn|
    | 16 8   | last_vlsn        |  the last     +--------+-------------------+
    |        |                  |  rolled back
    | 24 4+8t| txn_ids: [I64]   |  the transactions rolled back
    +--------+------------------+

    TermStart item
    +--------+----------------+
    | 0  8   | term           |   the election term of the master that logged it
    | 8  4   | master_node_id |
    | 12 8   | time_ms        |
    +--------+----------------+

A Matchpoint and a TermStart are always replicated: they carry a VLSN, and both are
sync points (a syncup may end at either). RollbackStart and
RollbackEnd are local to the node that rolls back: never replicated, no VLSN
(:mod:`minidb.replication.syncup.rollback` says what they guarantee).
"""

from __future__ import annotations

from minidb.log.fields import I64, LSN_FIELD, U32, U64, ListOf
from minidb.log.types import EntryTable

REPLICATION_TYPES = EntryTable(
    "replication",
    [
        # name         code  flags  fields
        ("Matchpoint", 0x70, "",    [("master_node_id", U32), ("time_ms", U64)]),
        ("RollbackStart", 0x71, "", [("matchpoint_vlsn", U64), ("matchpoint_lsn", LSN_FIELD),
                                     ("last_vlsn", U64), ("txn_ids", ListOf(("txn_id", I64)))]),
        ("RollbackEnd", 0x72, "",   [("matchpoint_vlsn", U64), ("rollback_start_lsn", LSN_FIELD)]),
        ("TermStart", 0x73, "",     [("term", U64), ("master_node_id", U32), ("time_ms", U64)]),
    ],
)

MATCHPOINT = REPLICATION_TYPES.Matchpoint
ROLLBACK_START = REPLICATION_TYPES.RollbackStart
ROLLBACK_END = REPLICATION_TYPES.RollbackEnd
TERM_START = REPLICATION_TYPES.TermStart

__all__ = ["REPLICATION_TYPES", "MATCHPOINT", "ROLLBACK_START", "ROLLBACK_END", "TERM_START"]
