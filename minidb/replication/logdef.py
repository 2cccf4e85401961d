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
==============  ====  =====  ===================================================

Field by field (little-endian)::

    Matchpoint item
    +--------+----------------+
    | 0  4   | master_node_id |   the node that was master when it was logged
    | 4  8   | time_ms        |
    +--------+----------------+

A Matchpoint is always replicated: it carries a VLSN.
"""

from __future__ import annotations

from minidb.log.fields import U32, U64
from minidb.log.types import EntryTable

REPLICATION_TYPES = EntryTable(
    "replication",
    [
        # name         code  flags  fields
        ("Matchpoint", 0x70, "",    [("master_node_id", U32), ("time_ms", U64)]),
    ],
)

MATCHPOINT = REPLICATION_TYPES.Matchpoint

__all__ = ["REPLICATION_TYPES", "MATCHPOINT"]
