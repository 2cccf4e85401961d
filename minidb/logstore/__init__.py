"""The log store: Berkeley DB Java Edition's architecture, where the log is the database.

Public surface::

    Environment, open_environment          an environment: the log, its databases, recovery (env.py)
    EnvironmentConfig, EnvironmentHooks,   configuration; hooks for the VLSN index (and steps 1, 9)
    Durability
    Database, Transaction, Cursor          records, transactions, scans
    LOGSTORE_TYPES, REPLICABLE_TYPES       the entry-type table (logdef.py)
    Provisional, is_provisional,           provisional logging (checkpoint/)
    checkpoint_provisional
    CkptState, DirtyINMap                  the checkpoint dirty map (checkpoint/)
    CheckpointRun, CheckpointResult        a checkpoint, step by step (checkpoint/)
    RecoveryInfo                           what recovery found and did (recovery/)
    FileSummary                            per-file utilization (cleaner/)
    Cleaner, FileCleaning, FileProtector,  the log cleaner (cleaner/): env.clean_log(), env.cleaner,
    ProtectedFileSet, CleanerThread        its protection registry, its background thread; lazy
                                           migration (cleaner_lazy_migration), reserved files
    DataEraser, EraserConfig, ManualClock  the data eraser: cycles, write protocol, throttle (eraser/)
    LockConflictError, LockTimeoutError,   errors (errors.py)
    DeadlockError, ...

Inside: ``tree/`` (IN, BIN, LN, Tree, Cursor, NodeLogger), ``mapping_tree`` (DbTree),
``records``, ``txn/`` (transactions, locks), ``evictor``, ``inspect``
(read-only views for pictures and checks), ``verify``,
``cases`` (the BEFORE_CKPT_END cases; ``clean_and_delete`` runs the real cleaner on them).
Its crash test is :mod:`minidb.crashtest.logstore`, above it.
"""

from minidb.log import Provisional
from minidb.logstore.checkpoint.checkpointer import checkpoint_provisional
from minidb.logstore.checkpoint.dirty_map import DirtyINMap
from minidb.logstore.checkpoint.provisional import is_provisional
from minidb.logstore.checkpoint.records import CheckpointResult, CkptState
from minidb.logstore.checkpoint.run import CheckpointRun
from minidb.logstore.cleaner import Cleaner, CleanerThread, FileCleaning, FileProtector, ProtectedFileSet
from minidb.logstore.cleaner.utilization import FileSummary
from minidb.logstore.config import Durability, EnvironmentConfig, EnvironmentHooks
from minidb.logstore.database import Database
from minidb.logstore.env import Environment, open_environment
from minidb.logstore.eraser import DataEraser, EraserConfig, ManualClock
from minidb.logstore.errors import (
                                    AbortNotLoggedError,
                                    DatabaseNotFoundError,
                                    DeadlockError,
                                    EnvironmentClosedError,
                                    EnvironmentFailureError,
                                    EnvironmentKindError,
                                    LockConflictError,
                                    LockTimeoutError,
                                    LogFileNotFound,
                                    ReadOnlyEnvironmentError,
                                    TransactionStateError,
                                    TreeError,
)
from minidb.logstore.logdef import LOGSTORE_TYPES, REPLICABLE_TYPES
from minidb.logstore.recovery import RecoveryInfo
from minidb.logstore.tree.cursor import Cursor
from minidb.logstore.txn.txn import Transaction

__all__ = [
    "Environment", "open_environment", "EnvironmentConfig", "EnvironmentHooks", "Durability", "Database",
    "Transaction", "Cursor", "LOGSTORE_TYPES", "REPLICABLE_TYPES", "Provisional", "is_provisional",
    "checkpoint_provisional", "CkptState", "DirtyINMap", "CheckpointRun", "CheckpointResult", "RecoveryInfo",
    "FileSummary", "DataEraser", "EraserConfig", "ManualClock", "LockConflictError", "DatabaseNotFoundError",
    "EnvironmentClosedError", "TransactionStateError", "TreeError", "EnvironmentFailureError", "LogFileNotFound",
    "AbortNotLoggedError", "EnvironmentKindError", "Cleaner", "CleanerThread", "FileCleaning", "FileProtector",
    "ProtectedFileSet", "ReadOnlyEnvironmentError", "LockTimeoutError", "DeadlockError",
]
