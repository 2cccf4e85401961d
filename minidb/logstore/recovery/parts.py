"""The parts of an environment that recovery rebuilds, handed to it by the environment.

Recovery runs while the environment opens, after the environment has built
its parts empty: it reads the log and asks each part to take what it found
(the mapping tree its databases, the trees their nodes, the tracker its
counts, the transaction manager and the core the largest ids, the
checkpointer its last checkpoint). It reaches no part through another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from minidb.logstore.checkpoint.checkpointer import Checkpointer
    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.evictor import Evictor
    from minidb.logstore.mapping_tree import DbTree
    from minidb.logstore.records import RecordOps
    from minidb.logstore.txn.locks import LockTable
    from minidb.logstore.txn.txn import TxnManager


@dataclass(frozen=True)
class Parts:
    core: EnvCore
    utilization: UtilizationTracker
    locks: LockTable
    records: RecordOps
    evictor: Evictor
    db_tree: DbTree
    txn_manager: TxnManager
    checkpointer: Checkpointer


__all__ = ["Parts"]
