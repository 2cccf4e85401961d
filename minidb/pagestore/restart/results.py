"""What restart's passes find and do: the records each pass returns, and the report of a whole restart.

These are the tables and counts that the storage manager keeps
(``sm.restart_report``), the notebooks draw (:mod:`minidb.viz.recovery_demo`),
the quizzes print and the crash tests check. They hold no decision: the passes
that fill them are :mod:`~minidb.pagestore.restart.analysis`,
:mod:`~minidb.pagestore.restart.redo` and :mod:`~minidb.pagestore.restart.undo`
(and, in the ``aries_restart`` course project, a student's ``Restart``), so
every restart returns the same records whoever wrote its passes.

===================  ========================================================
:class:`XctEntry`     a row of the transaction table (state, last LSN, undo-next)
:class:`DirtyPage`    a row of the dirty page table (page, recovery LSN)
:class:`AnalysisResult`  pass 1: both tables, the redo LSN, the device table, the losers
:class:`RedoResult`   pass 2: the entries read, redone and skipped (and why), the pages repaired
:class:`UndoResult`   pass 3: the losers, each entry processed, each loser's ``xct_end``
:class:`RestartReport`  the four passes and restart's checkpoint, with the passes' traces
===================  ========================================================

The two helpers every analysis pass uses are here too: :func:`check_not_erased`
(the page store has no eraser, so an erased entry in its log is corruption,
named by file and offset) and :func:`analysis_result` (the result, its summary
traced line by line).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from minidb.errors import LogCorruptionError
from minidb.log.files import file_name
from minidb.log.header import ERASED_TYPE
from minidb.log.lsn import LSN, NULL_LSN
from minidb.pagestore.ids import PageId
from minidb.pagestore.transactions.rollback import UndoStep
from minidb.pagestore.transactions.xct import XctState
from minidb.stats import Trace

if TYPE_CHECKING:  # finishing is given its analysis result: the import points the other way
    from minidb.pagestore.restart.finish import FinishResult

__all__ = ["XctEntry", "DirtyPage", "AnalysisResult", "AnalysisTables", "PageRepair", "RedoResult", "UndoResult",
           "RestartReport", "PASSES", "check_not_erased", "analysis_result"]


@dataclass
class XctEntry:
    """A row of the transaction table rebuilt by analysis."""

    tid: int
    state: XctState = XctState.ACTIVE
    last_lsn: LSN = NULL_LSN
    undo_nxt: LSN = NULL_LSN
    first_lsn: LSN = NULL_LSN
    undo_nxt_seen: bool = False  # the scan set undo_nxt itself (else the checkpoint's is used)

    def __str__(self) -> str:
        return f"T{self.tid} {self.state.name} last={self.last_lsn} undo_nxt={self.undo_nxt}"


@dataclass(frozen=True)
class DirtyPage:
    pid: PageId
    rec_lsn: LSN

    def __str__(self) -> str:
        return f"{self.pid} rec_lsn={self.rec_lsn}"


@dataclass
class AnalysisResult:
    master: LSN
    start: LSN
    end: LSN
    xct_table: dict[int, XctEntry]
    dirty_pages: dict[tuple[int, int], DirtyPage]
    redo_lsn: LSN
    youngest: int
    entries_read: int
    ended: set[int] = field(default_factory=set)
    devices: list[int] = field(default_factory=lambda: [1])  # the volumes mounted at the end of the log

    @property
    def losers(self) -> list[XctEntry]:
        return [x for _, x in sorted(self.xct_table.items()) if x.state in (XctState.ACTIVE, XctState.ABORTING)]

    @property
    def prepared(self) -> list[XctEntry]:
        return [x for _, x in sorted(self.xct_table.items()) if x.state == XctState.PREPARED]

    @property
    def freeing(self) -> list[XctEntry]:
        return [x for _, x in sorted(self.xct_table.items()) if x.state == XctState.FREEING_SPACE]

    def summary(self) -> str:
        xcts = "; ".join(str(x) for _, x in sorted(self.xct_table.items())) or "none"
        pages = "; ".join(str(d) for _, d in sorted(self.dirty_pages.items())) or "none"
        return (f"analysis: from {self.start} to {self.end}, {self.entries_read} entries read\n"
                f"  transaction table: {xcts}\n"
                f"  dirty page table: {pages}\n"
                f"  redo LSN: {self.redo_lsn}")


@dataclass
class AnalysisTables:
    """What :func:`rebuild_tables` rebuilds from the entries it is given."""

    xct_table: dict[int, XctEntry]
    dirty_pages: dict[tuple[int, int], DirtyPage]
    redo_lsn: LSN
    youngest: int = 0
    ended: set[int] = field(default_factory=set)
    devices: list[int] = field(default_factory=lambda: [1])


def check_not_erased(type_code: int, lsn: LSN) -> None:
    """The page store has no eraser: an erased entry in its log is damage, never its own."""
    if type_code == ERASED_TYPE:
        raise LogCorruptionError(file_name(lsn.file), lsn.offset,
                                 f"erased entry at {lsn} in a page store's log (the page store erases nothing)")


def analysis_result(log: Any, master: LSN, tables: AnalysisTables, first: LSN | None, count: int,
                    trace: Trace) -> AnalysisResult:
    """What analysis found, having read ``count`` entries from ``first`` (None: the log is empty) on."""
    start = master if not master.is_null else first if first is not None else NULL_LSN
    result = AnalysisResult(master, start, log.end_lsn, tables.xct_table, tables.dirty_pages, tables.redo_lsn,
                            tables.youngest, count, tables.ended, tables.devices)
    for line in result.summary().splitlines():
        trace.emit("%s", line)
    return result


@dataclass(frozen=True)
class PageRepair:
    """A torn page rebuilt: from the image at ``image_lsn``, found scanning from ``scanned_from``."""

    pid: PageId
    scanned_from: LSN
    image_lsn: LSN
    entries: int  # redone after the image

    def __str__(self) -> str:
        return (f"{self.pid} repaired from its image at {self.image_lsn} and {self.entries} later entries "
                f"(log read from {self.scanned_from})")


@dataclass
class RedoResult:
    start: LSN
    entries_read: int = 0
    redone: int = 0
    skipped_not_dirty: int = 0
    skipped_page_newer: int = 0
    pages_repaired: list[PageRepair] = field(default_factory=list)
    decisions: list[tuple[LSN, str]] = field(default_factory=list)  # (entry, "redone" | "skipped")

    @property
    def torn_pages_rebuilt(self) -> int:
        return len(self.pages_repaired)

    def summary(self) -> str:
        return (f"redo: from {self.start}, {self.entries_read} entries read, {self.redone} redone, "
                f"{self.skipped_not_dirty} skipped (page not dirty or older than its recovery LSN), "
                f"{self.skipped_page_newer} skipped (page LSN newer), "
                f"{self.torn_pages_rebuilt} torn pages repaired from their images")


@dataclass
class UndoResult:
    losers: list[int]
    steps: list[tuple[int, UndoStep]] = field(default_factory=list)  # (tid, step), in the order done
    ended: dict[int, LSN] = field(default_factory=dict)  # tid -> its xct_end

    @property
    def undone(self) -> int:
        return sum(1 for _, s in self.steps if s.action == "undone")

    def summary(self) -> str:
        losers = ", ".join(f"T{t}" for t in self.losers) or "none"
        return f"undo: losers {losers}, {len(self.steps)} entries read, {self.undone} undone"


PASSES = ("analysis", "redo", "undo", "finish")


@dataclass
class RestartReport:
    master: LSN
    analysis: AnalysisResult
    redo: RedoResult
    undo: UndoResult
    finish: FinishResult
    checkpoint: Any = None
    traces: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [self.analysis.summary(), self.redo.summary(), self.undo.summary(), self.finish.summary()]
        if self.checkpoint is not None:
            lines.append(self.checkpoint.summary())
        return "\n".join(lines)

    def trace_text(self) -> str:
        return "".join(line + "\n" for name in PASSES for line in self.traces.get(name, []))
