"""Wrong: step 3 takes the CkptStart itself for firstActiveLSN even while transactions are open, so recovery
replays no LN those transactions wrote before the checkpoint, though they commit after it."""

from minidb.log import NULL_LSN
from minidb.logstore.checkpoint import checkpointer as reference, dirty_map


class DirtyINMap(dirty_map.DirtyINMap):
    pass


class NoActiveTxns:
    """The transaction manager, but for a first active LSN that is always NULL_LSN."""

    def __init__(self, txn_manager):
        self.txn_manager = txn_manager

    def first_active_lsn(self):
        return NULL_LSN

    def __getattr__(self, name):
        return getattr(self.txn_manager, name)


class Checkpointer(reference.Checkpointer):
    def __init__(self, core, utilization, dirty_map, node_logger, db_tree, txn_manager):
        super().__init__(core, utilization, dirty_map, node_logger, db_tree, NoActiveTxns(txn_manager))
