"""Entry types of the synthetic workloads that ``minidb generate --engine log`` writes.

The data pipeline needs logs with transactions, checkpoints and replicated
entries to analyse. ``--engine logstore`` (:mod:`minidb.spark.gen_logstore`)
has the log store write them for real; ``--engine log`` writes smaller ones
faster, with a gap and a duplicate in a VLSN stream planted on purpose, which
no engine would write. That generator (:mod:`minidb.spark.gen_log`) writes
through the shared log with this table of its own, in the ``generator`` code
range (0x08-0x0f, see :mod:`minidb.log.types`), so the names and codes can
never collide with an engine's. They mirror JE's and Shore's roles:

``GenUpdate``     a record written by a transaction (an LN of JE, a Shore
                  update record): key and data; transactional, so the item
                  starts with ``txn_id`` and ``txn_prev_lsn``, the previous
                  entry of the same transaction (NULL for its first).
``GenCommit``     a transaction committed (JE ``TxnCommit``); its
                  ``txn_prev_lsn`` is the transaction's last update.
``GenAbort``      a transaction aborted (JE ``TxnAbort``).
``GenCkptStart``  a checkpoint began (JE ``CkptStart``).
``GenCkptEnd``    a checkpoint ended (JE ``CkptEnd``): which checkpoint, the
                  LSN of its start and the first active LSN, the first LSN
                  of the oldest transaction open at the start (never after
                  ``ckpt_start_lsn``), where recovery would begin.

In a replication group the transactional entries are replicated: each gets
a VLSN, the same on every node, while checkpoints stay local to a node.
"""

from minidb.log.fields import BYTES, LSN_FIELD, U64
from minidb.log.types import EntryTable

GENERATOR_TYPES = EntryTable(
    "generator",
    [
        # name            code  flags  fields
        ("GenUpdate",     0x08, "TRU", [("key", U64), ("data", BYTES)]),
        ("GenCommit",     0x09, "T",   []),
        ("GenAbort",      0x0A, "T",   []),
        ("GenCkptStart",  0x0B, "",    [("ckpt_id", U64)]),
        ("GenCkptEnd",    0x0C, "",    [("ckpt_id", U64), ("ckpt_start_lsn", LSN_FIELD),
                                        ("first_active_lsn", LSN_FIELD)]),
    ],
)

GEN_UPDATE = GENERATOR_TYPES.GenUpdate
GEN_COMMIT = GENERATOR_TYPES.GenCommit
GEN_ABORT = GENERATOR_TYPES.GenAbort
GEN_CKPT_START = GENERATOR_TYPES.GenCkptStart
GEN_CKPT_END = GENERATOR_TYPES.GenCkptEnd
