"""What every part of an environment shares: its log, its latch, its state, and how an entry is logged.

The environment (:mod:`.env`) is the composition root: it builds the parts
(the trees' cache, node logger and dirty map, records, transactions, the
mapping tree, the checkpointer, the cleaner, recovery) and hands each the
few collaborators it needs. What is not a part but every part uses is here,
in one :class:`EnvCore` the environment builds first:

- the disk and its shared log (:mod:`minidb.log`), the configuration and the hooks;
- the environment latch: every public operation holds it (a single-writer engine);
- the trace and the environment's statistics;
- whether the environment may still be used (closed, or invalid after a lost
  record) and whether it was opened read-only;
- the node ids (``next_node_id``);
- :meth:`EnvCore.log_entry`: every entry the environment writes goes through
  it, which counts it for the utilization tracker;
- :attr:`EnvCore.after_operation`: what runs after every operation (eviction
  to the budget, a checkpoint by log growth), given by the environment.

A part never reaches through the core to another part: the core knows no
part but the utilization tracker, which counts what it logs.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from minidb.log import LSN, LogManager, Provisional
from minidb.logstore.errors import EnvironmentClosedError, EnvironmentFailureError, ReadOnlyEnvironmentError
from minidb.stats import Stats, Trace

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.io import Disk
    from minidb.log.types import EntryType
    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.config import EnvironmentConfig, EnvironmentHooks

# Every change of these counters happens under the environment latch, so the paths that count them
# (puts, fetches, cursor steps) use ``Stats.add_held``, which takes no second lock.
ENV_STATS = ["nPuts", "nDeletes", "nGets", "nCursorSteps", "nCommits", "nAborts", "nINsFetched", "nLNsFetched",
             "nINsLogged", "nSplits", "nRootSplits", "nSlotsCompressed"]


class EnvCore:
    """The shared services of one open environment (see the module documentation)."""

    def __init__(self, disk: Disk, config: EnvironmentConfig, hooks: EnvironmentHooks, log: LogManager,
                 utilization: UtilizationTracker):
        self.disk = disk
        self.config = config
        self.hooks = hooks
        self.log = log
        self.utilization = utilization
        self.read_only = config.read_only
        self.latch = threading.RLock()
        self.trace = Trace(enabled=config.trace)
        self.stats = Stats("environment", ENV_STATS)
        self.closed = False
        self.invalid: str | None = None  # why a lost record invalidated the environment
        self.recovering = False
        self.last_node_id = 0
        self.after_operation: Callable[..., None] = lambda read=False: None  # the environment sets its own

    def where(self) -> str:
        return self.disk.where()

    def check_usable(self) -> None:
        if self.closed:
            raise EnvironmentClosedError(f"environment {self.where()} is closed; open it again")
        if self.invalid is not None:
            raise EnvironmentFailureError(f"environment {self.where()} is invalid ({self.invalid}); close it and "
                                          "open it again")

    def check_writable(self, what: str) -> None:
        """Refuse ``what`` (a write) in a read-only environment, before anything changes."""
        if self.read_only:
            raise ReadOnlyEnvironmentError(f"environment {self.where()} is open read-only: cannot {what}")

    def invalidate(self, reason: str) -> None:
        """A record is lost (JE's EnvironmentFailureException): refuse every operation from now on.

        ``close`` then closes the log without a checkpoint; opening again recovers."""
        self.invalid = reason

    def next_node_id(self) -> int:
        self.last_node_id += 1
        return self.last_node_id

    def note_node_id(self, node_id: int) -> None:
        """Recovery read a node with this id: new nodes get larger ones."""
        self.last_node_id = max(self.last_node_id, node_id)

    def now_ms(self) -> int:
        return int(self.config.clock() * 1000)

    def log_entry(self, entry_type: EntryType, values: dict[str, Any], *, provisional: Provisional = Provisional.NO,
                  replicated: bool = False, vlsn: int | None = None) -> LSN:
        """Append one entry to the log and count it for the utilization tracker.

        ``vlsn`` given: the entry takes that VLSN (a replica writing the master's entry), not a new one."""
        if self.read_only:  # every write is refused earlier; this is the last line
            self.check_writable(f"log {entry_type.name}")
        lsn = self.log.append(entry_type, values, provisional=provisional, replicated=replicated, vlsn=vlsn)
        end = self.log.end_lsn
        size = end.offset - lsn.offset if end.file == lsn.file else self.log.read(lsn).size
        self.utilization.count_new(lsn, size, entry_type.name)
        return lsn


__all__ = ["ENV_STATS", "EnvCore"]
