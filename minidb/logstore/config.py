"""How an environment is configured (JE's ``EnvironmentConfig``, reduced).

Every setting has a JE counterpart, named after it:

================================  ==============================  ===============
setting                           JE parameter                    default
================================  ==============================  ===============
``file_max``                      je.log.fileMax                  10 MiB
``buffer_size``                   je.log.bufferSize               64 KiB
``node_max_entries``              je.nodeMaxEntries               128
``node_budget``                   je.maxMemory (in nodes here)    None (no limit)
``checkpoint_bytes_interval``     je.checkpointer.bytesInterval   20 MiB
``durability``                    Durability.SyncPolicy (commit)  SYNC
``replicated``                    a ReplicatedEnvironment         False
``cleaner_min_utilization``       je.cleaner.minUtilization       50 (percent)
``cleaner_min_file_utilization``  je.cleaner.minFileUtilization   5 (percent)
``run_cleaner``                   je.env.runCleaner (a thread)    False
``cleaner_bytes_interval``        je.cleaner.bytesInterval        1 MiB
``cleaner_lazy_migration``        je.cleaner.lazyMigration        False
``cleaner_delete_middle_files``   none (JE always does)           True
``read_only``                     je.env.isReadOnly               False
``lock_timeout``                  je.lock.timeout (seconds here)  0.5
``env_seed``                      none (minidb's own)             None
``cleaner_whole_summary_offsets`` none (minidb's own)             0 (off)
================================  ==============================  ===============

``cleaner_whole_summary_offsets``: while a log file's list of obsolete
offsets holds at most this many, its FileSummaryLN is one record, rewritten
whole at each checkpoint that changes the file, instead of a new record per
checkpoint holding only the new offsets (:mod:`minidb.logstore.cleaner.utilization`,
"Small files: one record"). With log files of a few kilobytes the records
that accumulate are most of the log; 0 keeps every record incremental.

``cleaner_delete_middle_files``: checkpoint step 9 deletes a cleaned file
wherever it lies, as JE does, a file above a kept one recorded in the
deleted-files record (:mod:`minidb.log.deleted`); False keeps the older,
simpler rule that files leave from the log's head only, so a cleaned file
above a file still in use waits (notebook 11 shows that rule at work).

``lock_timeout`` is how long an operation waits for a record another
transaction write-locked (:mod:`minidb.logstore.txn.locks`) before it fails
with a ``LockTimeoutError``; 0 means no waiting (a ``LockConflictError`` at
once). ``env.begin(lock_timeout=...)`` sets it for one transaction. The time
is ``clock``'s, the environment's clock.

``read_only`` opens an existing environment without writing a byte to its
disk (:mod:`minidb.logstore.env`); the cleaner thread cannot run in it.

``env_seed`` seeds the environment id of a *new* environment's log
(:mod:`minidb.log.envid`): None draws it at random on a real disk with the
real clock, and as seed 0 on a simulated disk or with an injected ``clock``.

``bug_evict_with_before_ckpt_end`` exists only to demonstrate the bug of the
JE documentation's third BEFORE_CKPT_END case (JE SR #19422, CacheMode.EVICT_BIN): the
evictor logs with BEFORE_CKPT_END where the checkpoint rules say YES. It is
never on by default, and nothing but the demonstrations turns it on.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from minidb.errors import UserError

MIN_NODE_MAX_ENTRIES = 4


class Durability(enum.Enum):
    """What a commit waits for (JE's Durability.SyncPolicy)."""

    SYNC = "sync"  # the Commit entry is fsynced before commit returns
    WRITE_NO_SYNC = "write_no_sync"  # written to the file, not fsynced
    NO_SYNC = "no_sync"  # left in the log buffer


@dataclass
class EnvironmentConfig:
    file_max: int = 10 * 1024 * 1024
    buffer_size: int = 64 * 1024
    node_max_entries: int = 128
    node_budget: int | None = None
    checkpoint_bytes_interval: int | None = 20 * 1024 * 1024
    durability: Durability = Durability.SYNC
    replicated: bool = False
    clock: Callable[[], float] = time.time
    bug_evict_with_before_ckpt_end: bool = False
    trace: bool = True
    cleaner_min_utilization: int = 50
    cleaner_min_file_utilization: int = 5
    run_cleaner: bool = False
    cleaner_bytes_interval: int = 1024 * 1024
    cleaner_lazy_migration: bool = False
    cleaner_delete_middle_files: bool = True
    read_only: bool = False
    env_seed: int | str | None = None
    lock_timeout: float = 0.5
    checkpointer_high_priority: bool = False  # je.checkpointer.highPriority: step 5 logs a subtree in one stretch
    cleaner_whole_summary_offsets: int = 0

    def __post_init__(self) -> None:
        if self.node_max_entries < MIN_NODE_MAX_ENTRIES:
            raise UserError(f"node_max_entries {self.node_max_entries} is too small (at least {MIN_NODE_MAX_ENTRIES})")
        if self.node_budget is not None and self.node_budget < 1:
            raise UserError(f"node_budget {self.node_budget} must be positive (or None for no limit)")
        if self.checkpoint_bytes_interval is not None and self.checkpoint_bytes_interval < 1:
            raise UserError(f"checkpoint_bytes_interval {self.checkpoint_bytes_interval} must be positive (or None)")
        if not isinstance(self.durability, Durability):
            raise UserError(f"durability must be a Durability, not {self.durability!r}")
        for name in ("cleaner_min_utilization", "cleaner_min_file_utilization"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= 100:
                raise UserError(f"{name} {value!r} must be a percentage, 0 to 100")
        if self.read_only and self.run_cleaner:
            raise UserError("run_cleaner cannot be on in a read-only environment (the cleaner writes)")
        check_lock_timeout(self.lock_timeout)
        if self.cleaner_bytes_interval < 1:
            raise UserError(f"cleaner_bytes_interval {self.cleaner_bytes_interval} must be positive")
        if self.cleaner_whole_summary_offsets < 0:
            raise UserError(f"cleaner_whole_summary_offsets {self.cleaner_whole_summary_offsets} must be 0 (off) or more")


def check_lock_timeout(timeout: object) -> None:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 <= timeout < float("inf"):
        raise UserError(f"lock_timeout {timeout!r} must be a number of seconds, 0 or more (0: no waiting)")


@dataclass
class EnvironmentHooks:
    """Where other parts plug in: replication's VLSN index (:mod:`minidb.replication.env` sets
    ``flush_vlsn_index`` and ``recovery_listeners``) and, in place of the log cleaner's own
    steps 1 and 9 (:mod:`minidb.logstore.cleaner`), a caller's.

    ``cleaner_files_to_delete``  checkpoint step 1: files the cleaner may delete
                                 once this checkpoint ends
    ``flush_vlsn_index``         checkpoint step 6: make the VLSN index recoverable
                                 (called with the CheckpointRun; a returned
                                 string becomes the step's trace line)
    ``delete_cleaned_files``     checkpoint step 9: delete the files of step 1
    ``recovery_listeners``       called by recovery with every entry from the
                                 last CkptStart to the end of the log, in order
    ``checkpoint_not_usable``    asked by recovery, for the checkpoint it would start
                                 from (the log, its CkptStart, the entries read
                                 from before it to the end of the log): a reason
                                 not to use it (None: use it); recovery then
                                 starts from the checkpoint before
    ``recovery_read_done``       called when recovery has read the log, before it
                                 writes anything: a listener's last chance to
                                 refuse what it saw (a raised error stops the open)
    ``close_listeners``          called by ``close()`` first, without the latch
                                 (the data eraser stops its thread, suspends its cycle)
    ``before_file_erased``       called by the data eraser with a file's number just
                                 before the file begins to change (whoever caches
                                 what the file holds, such as a network restore
                                 server's file checksums, forgets it)
    """

    cleaner_files_to_delete: Callable[[], list[int]] | None = None
    flush_vlsn_index: list[Callable[[object], "str | None"]] = field(default_factory=list)
    delete_cleaned_files: Callable[[list[int]], None] | None = None
    recovery_listeners: list[Callable[[object], None]] = field(default_factory=list)
    checkpoint_not_usable: list[Callable[[object, object, list], "str | None"]] = field(default_factory=list)
    recovery_read_done: list[Callable[[], None]] = field(default_factory=list)
    close_listeners: list[Callable[[], None]] = field(default_factory=list)
    before_file_erased: list[Callable[[int], None]] = field(default_factory=list)


__all__ = ["Durability", "EnvironmentConfig", "EnvironmentHooks", "MIN_NODE_MAX_ENTRIES", "check_lock_timeout"]
