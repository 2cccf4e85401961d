"""Rollback periods (JE's ``RollbackTracker``): the checkpoints recovery may not start from.

A syncup rollback's **rollback period** runs from its matchpoint to its
``RollbackEnd``; one whose ``RollbackEnd`` a crash kept from the log runs to
the end of the log. A checkpoint whose CkptStart lies inside a rollback
period was written while the node still held the entries rolled back: its
BINs and its flushed VLSN index may hold versions the rollback took back.
Recovery does not start from such a checkpoint; it takes the checkpoint
before (and so on), or the start of the log if none is left, so the tree is
rebuilt from before the matchpoint, where the rolled-back versions, INVISIBLE
in the log, are skipped. This is the rule of JE's **hard recovery**
(:mod:`.rollback`).

The log store knows nothing of rollbacks: it asks
(``EnvironmentHooks.checkpoint_not_usable``) about the checkpoint it would
start from, with the entries it has read from before that CkptStart to the
end of the log, and :func:`checkpoint_in_rollback_period` answers from the
``RollbackStart`` and ``RollbackEnd`` entries among them. A period that
contains a CkptStart has its end after it, so only the rollback entries
after the CkptStart matter: a ``RollbackEnd`` names its ``RollbackStart``
(read from the log if it lies before the CkptStart: recovery's checkpoint
that finished a rollback a crash cut short starts between the two), whose
``matchpoint_lsn`` is where the period begins.

Example (LSNs schematic)::

    100  Commit        VLSN 10   <- the matchpoint
    200  CkptStart 7             inside 100..500: not used
    300  CkptEnd 7
    400  RollbackStart matchpoint VLSN 10 at 100
    500  RollbackEnd
    600  CkptStart 8             after 500: used

A crash before CkptStart 8 leaves checkpoint 7 the last: recovery starts
from the checkpoint before 100.
"""

from __future__ import annotations

from dataclasses import dataclass

from minidb.log import LSN, NULL_LSN, LogEntry, LogManager
from minidb.replication.logdef import ROLLBACK_END, ROLLBACK_START


@dataclass(frozen=True)
class RollbackPeriod:
    """From a rollback's matchpoint to its RollbackEnd (NULL_LSN: none logged yet, the end of the log)."""

    matchpoint_lsn: LSN
    start_lsn: LSN  # the RollbackStart
    end_lsn: LSN = NULL_LSN

    def holds(self, lsn: LSN) -> bool:
        return self.matchpoint_lsn < lsn and (self.end_lsn.is_null or lsn < self.end_lsn)

    def __str__(self) -> str:
        end = "the end of the log" if self.end_lsn.is_null else f"RollbackEnd {self.end_lsn}"
        return f"the rollback period from matchpoint {self.matchpoint_lsn} to {end} (RollbackStart {self.start_lsn})"


def periods_after(log: LogManager, after: LSN, entries: list[LogEntry]) -> list[RollbackPeriod]:
    """The rollback periods that end after ``after``, as the rollback entries among ``entries`` (in log
    order, to the end of the log) after ``after`` show them, newest first."""
    periods: list[RollbackPeriod] = []
    ended: set[LSN] = set()
    for entry in reversed(entries):
        if entry.lsn <= after:
            break
        code = entry.header.type_code
        if code == ROLLBACK_END.code:
            start_lsn = entry.values["rollback_start_lsn"]
            ended.add(start_lsn)
            start = log.read(start_lsn)
            periods.append(RollbackPeriod(start.values["matchpoint_lsn"], start_lsn, entry.lsn))
        elif code == ROLLBACK_START.code and entry.lsn not in ended:
            periods.append(RollbackPeriod(entry.values["matchpoint_lsn"], entry.lsn))
    return periods


def checkpoint_in_rollback_period(log: LogManager, ckpt_start: LSN, entries: list[LogEntry]) -> str | None:
    """The log store's ``checkpoint_not_usable`` hook: why recovery may not start from the checkpoint that
    began at ``ckpt_start`` (None: it may)."""
    inside = next((p for p in periods_after(log, ckpt_start, entries) if p.holds(ckpt_start)), None)
    return None if inside is None else f"its CkptStart lies inside {inside}"


__all__ = ["RollbackPeriod", "periods_after", "checkpoint_in_rollback_period"]
