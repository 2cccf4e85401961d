"""What recovery found and did (:class:`RecoveryInfo`), pass by pass (:class:`RecoveryPhase`).

Every pass of recovery is a phase: a name and the lines it said, also
emitted on the environment's trace (``recovery: <phase>: <line>``). A
notebook sees the phases as they end (``phase_listener``) and the counts
below when recovery is over (``env.recovery_info``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb.log import LSN, NULL_LSN

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.stats import Trace


@dataclass
class RecoveryPhase:
    name: str
    lines: list[str] = field(default_factory=list)


@dataclass
class RecoveryInfo:
    """What recovery found and did."""

    end_of_log: LSN = NULL_LSN  # where the log ended when opened, before recovery wrote anything
    tail_cut: str | None = None
    last_ckpt_end: LSN = NULL_LSN
    last_ckpt_start: LSN = NULL_LSN
    first_active_lsn: LSN = NULL_LSN
    checkpoint_id: int = 0
    scan_start: LSN = NULL_LSN
    checkpoints_not_used: list[LSN] = field(default_factory=list)  # CkptEnds a hook said not to use, newest first
    entries_read: int = 0
    ins_replayed: int = 0
    ins_provisional: int = 0
    ins_not_newer: int = 0
    ins_not_placed: int = 0
    map_lns_redone: int = 0
    lns_redone: int = 0
    lns_not_newer: int = 0
    lns_undone: int = 0
    committed: set[int] = field(default_factory=set)
    losers: set[int] = field(default_factory=set)
    phases: list[RecoveryPhase] = field(default_factory=list)

    def summary(self) -> str:
        where = (f"last CkptEnd {self.last_ckpt_end} (CkptStart {self.last_ckpt_start}, "
                 f"firstActiveLSN {self.first_active_lsn})" if not self.last_ckpt_end.is_null
                 else "no checkpoint: from the start of the log")
        if self.checkpoints_not_used:
            where += f" (not used: CkptEnd {', '.join(str(lsn) for lsn in self.checkpoints_not_used)})"
        return (f"recovery: log ends at {self.end_of_log}; {where}; read {self.entries_read} entries; "
                f"INs replayed {self.ins_replayed}, provisional {self.ins_provisional}, "
                f"not newer {self.ins_not_newer}, not placed {self.ins_not_placed}; "
                f"LNs redone {self.lns_redone}, undone {self.lns_undone}; "
                f"committed txns {sorted(self.committed)}, losers {sorted(self.losers)}")


class Phases:
    """Recovery's phases as they happen: begun, said, done (the listener told)."""

    def __init__(self, trace: Trace, info: RecoveryInfo, listener: Callable[[str], None] | None = None):
        self.trace, self.info, self.listener = trace, info, listener

    def begin(self, name: str) -> RecoveryPhase:
        phase = RecoveryPhase(name)
        self.info.phases.append(phase)
        return phase

    def say(self, phase: RecoveryPhase, message: str, *args: object) -> None:
        line = message % args if args else message
        phase.lines.append(line)
        self.trace.emit("recovery: %s: %s", phase.name, line)

    def done(self, phase: RecoveryPhase) -> None:
        if self.listener is not None:
            self.listener(phase.name)


__all__ = ["RecoveryInfo", "RecoveryPhase", "Phases"]
