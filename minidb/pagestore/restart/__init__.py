"""ARIES restart of the page store: analysis, redo, undo, then finishing and a checkpoint.

Every time the storage manager opens a volume it restarts, whether the last
run ended cleanly or crashed (a clean shutdown leaves a checkpoint with an
empty transaction table, so restart then has little to do)::

    master LSN ──► analysis ──► transaction table, dirty page table, redo LSN
    redo LSN ────► redo ──────► pages as at the crash (history repeated)
    losers ──────► undo ──────► losers rolled back with CLRs, xct_end logged
                   finish ────► cut extent lists repaired, FREEING_SPACE
                                transactions finished, marked stores removed,
                                TMP files destroyed (logged like a drop),
                                every dirty page written (as Shore does)
                   checkpoint ► the next restart starts here

=================  =========================================================
``analysis.py``    pass 1: rebuild the tables from the master checkpoint on
``redo.py``        pass 2: repeat history (page LSN test); repair torn pages from images
``undo.py``        pass 3: all losers together, largest undo-next first
``finish.py``      repairs, committed transactions left freeing space
``chkpt.py``       fuzzy checkpoints: what restart starts from
``master.py``      the master LSN, where restart finds the last checkpoint
=================  =========================================================

Each pass emits a trace of what it read, decided and changed; a
:class:`Restart` runs the passes one at a time (the notebook steps through
them) or all at once (:meth:`Restart.run`).

Redo and the page repairs change pages without logging images, so finish
writes every dirty page before the checkpoint: no checkpoint ever lists a
page whose recovery LSN is not its image's (:mod:`minidb.pagestore.wal.pageimage`),
and until restart's checkpoint the log is kept from the old redo LSN.

Restart is *idempotent*: analysis and redo log nothing, undo logs a CLR for
each undo, the finishing steps are idempotent, so a crash anywhere during
restart followed by another restart gives the same result.

**Several volumes** (:mod:`minidb.pagestore.mounts`): analysis finds the
volumes mounted at the end of the log (the device table); before redo,
restart asks ``mounts`` (the storage manager's mount table) to mount them,
so that redo, undo and finishing find every page on its volume; finishing
repairs, removes marked stores, drops TMP files and resets the caches on
each mounted volume.

The storage manager opens the volume and its log inside
:meth:`Restart.opening`, which first checks that the volume and the whole log
are there (:func:`~minidb.pagestore.restart.master.check_volume_and_log`:
opening the log may cut a torn tail, so the check comes before).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from minidb import impl
from minidb.io import Disk
from minidb.log.lsn import LSN
from minidb.pagestore.files.storeprops import drop_tmp_files
from minidb.pagestore.restart.analysis import (
    ANALYSIS_PASS,
    AnalysisResult,
    AnalysisTables,
    DirtyPage,
    XctEntry,
    analysis_pass,
    rebuild_tables,
)
from minidb.pagestore.restart.finish import FinishResult, finish_pass
from minidb.pagestore.restart.master import CHECK_VOLUME_AND_LOG, master_lsn
from minidb.pagestore.restart.redo import REDO_PASS, PageRepair, RedoResult, rebuild_page, redo_decision, redo_pass
from minidb.pagestore.restart.undo import UndoList, UndoResult, undo_order, undo_pass, walk_losers
from minidb.stats import Trace

__all__ = ["Restart", "RestartReport", "AnalysisResult", "RedoResult", "UndoResult", "FinishResult", "XctEntry",
           "DirtyPage", "PageRepair", "UndoList", "analysis_pass", "redo_pass", "undo_pass", "finish_pass",
           "rebuild_page", "undo_order", "walk_losers", "AnalysisTables", "rebuild_tables", "redo_decision",
           "RESTART"]

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


class Restart:
    """The passes of one restart, to run one by one or all at once."""

    def __init__(self, disk: Any, volume: Any, xcts: Any, checkpointer: Any = None, trace: bool = True,
                 files: Any = None, mounts: Any = None):
        self.disk = disk
        self.files = files  # the file manager, to destroy TMP files (none: they stay)
        self.mounts = mounts  # mounts the device table's volumes, knows their file managers (None: one volume)
        self.volume = volume
        self.log = volume.log
        self.xcts = xcts
        self.checkpointer = checkpointer
        self.traces = {name: Trace(enabled=trace) for name in PASSES}
        self.master = master_lsn(disk)
        self.analysis_result: AnalysisResult | None = None
        self.redo_result: RedoResult | None = None
        self.undo_result: UndoResult | None = None
        self.finish_result: FinishResult | None = None
        self.checkpoint: Any = None

    @property
    def next_pass(self) -> str | None:
        for name, result in zip(PASSES, (self.analysis_result, self.redo_result, self.undo_result,
                                         self.finish_result), strict=True):
            if result is None:
                return name
        return None

    @staticmethod
    @contextmanager
    def opening(disk: Disk) -> Iterator[dict[str, Any]]:
        """Around the storage manager's opening of the volume and its log, and the restart that follows:
        first the volume and the whole log must be there (before the log is opened, which may cut its torn
        tail). Yields the options to open the log with for restart (none: analysis reads it as it is)."""
        CHECK_VOLUME_AND_LOG.call(disk)
        yield {}

    def analysis(self) -> AnalysisResult:
        self.analysis_result = ANALYSIS_PASS.call(self.log, self.master, self.traces["analysis"])
        self.xcts.set_youngest(self.analysis_result.youngest)
        return self.analysis_result

    def mount_devices(self) -> None:
        """Mount the volumes of the device table analysis rebuilt (before redo needs their pages)."""
        assert self.analysis_result is not None, "analysis comes first"
        if self.mounts is not None:
            for line in self.mounts.remount(self.analysis_result.devices):
                self.traces["redo"].emit("redo: %s", line)

    def redo(self) -> RedoResult:
        self.mount_devices()
        self.redo_result = REDO_PASS.call(self.log, self.volume, self.analysis_result, self.traces["redo"])
        return self.redo_result

    def undo(self) -> UndoResult:
        assert self.redo_result is not None, "redo comes before undo"
        space = getattr(self.xcts, "log_space", None)
        if space is not None:  # the losers' rollbacks, and the prepared transactions' possible aborts, get
            # their log space back (minidb.pagestore.wal.logspace)
            for row in [*self.analysis_result.losers, *self.analysis_result.prepared]:  # type: ignore[union-attr]
                space.reserve_chain(row.tid, row.undo_nxt, self.log.read)
        self.undo_result = undo_pass(self.volume, self.xcts, self.analysis_result, self.traces["undo"])
        return self.undo_result

    def finish(self) -> FinishResult:
        assert self.undo_result is not None, "undo comes before finishing"
        # TMP files go first, before prepared transactions take their locks again (a prepared transaction
        # may hold locks on a TMP file it read or changed, and the drop would wait for it forever).
        managers = self.mounts.file_managers() if self.mounts is not None else [self.files]
        dropped = [line for files in managers if files is not None for line in drop_tmp_files(files, self.xcts)]
        for line in dropped:
            self.traces["finish"].emit("finish: %s", line)
        self.finish_result = finish_pass(self.volume, self.xcts, self.analysis_result, self.traces["finish"])
        self.finish_result.removed_stores.extend(dropped)
        for volume in self.volume.mounted():
            volume.reset_caches()
        written = self.volume.bp.force_all()
        self.traces["finish"].emit("finish: wrote the dirty pages in %d writes", len(written))
        if self.checkpointer is not None:
            self.checkpoint = self.checkpointer.take()
            self.traces["finish"].emit("finish: %s", self.checkpoint.summary())
        return self.finish_result

    def step(self) -> Any:
        """Run the next pass; return its result (None when all have run)."""
        name = self.next_pass
        return None if name is None else getattr(self, name)()

    def run(self) -> RestartReport:
        while self.next_pass is not None:
            self.step()
        return self.report()

    def report(self) -> RestartReport:
        assert self.finish_result is not None, "restart has not finished"
        return RestartReport(self.master, self.analysis_result, self.redo_result, self.undo_result,  # type: ignore[arg-type]
                             self.finish_result, self.checkpoint,
                             {name: list(trace.lines) for name, trace in self.traces.items()})


#: restart as the storage manager runs it (and opens the log for it)
RESTART = impl.hot_spot(Restart)
