"""The restart of the page store, pass by pass: :class:`Restart`, which the storage manager runs at every open.

ARIES restart is three passes over the log and a finish (see the package,
:mod:`minidb.pagestore.restart`, for what each does)::

    def run(self):                  # the whole restart, in the order the passes need
        self.analysis()             # the tables, from the master checkpoint on
        self.redo()                 # history repeated from the redo LSN
        self.undo()                 # the losers rolled back, a CLR for each undo
        self.finish()               # repairs, TMP files dropped, every dirty page written, a checkpoint
        return self.report()

A :class:`Restart` runs the passes one at a time (a notebook steps through
them, :attr:`Restart.next_pass` names the next) or all at once
(:meth:`Restart.run`); each pass returns its record
(:mod:`minidb.pagestore.restart.results`) and emits its trace
(``restart.traces[name]``). A pass asks for the one before it: redo needs
analysis' tables, undo needs redo's pages.

The storage manager builds its restart through the hot spot :data:`RESTART`
(:mod:`minidb.impl`): minidb's own class, its accelerated twin
(:mod:`minidb.fast.pagestore.restart.restart`), or the ``Restart`` a student
writes for the course project ``aries_restart`` (``exercises/projects/``).
Whichever runs, the engine calls only what this class offers: the
constructor, :meth:`Restart.opening` around the opening of the volume and its
log, the four passes, :meth:`Restart.step`, :meth:`Restart.run` and
:meth:`Restart.report`.

Invariants: analysis and redo log nothing; undo logs a CLR for every entry
it undoes and an ``xct_end`` for every loser; finishing is idempotent; so a
crash anywhere during restart, followed by another restart, gives the same
result. The master LSN is read once, when the restart is built, before
anything is logged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minidb import impl
from minidb.io import Disk
from minidb.pagestore.files.storeprops import drop_tmp_files
from minidb.pagestore.restart.analysis import ANALYSIS_PASS
from minidb.pagestore.restart.finish import FinishResult, finish_pass
from minidb.pagestore.restart.master import CHECK_VOLUME_AND_LOG, master_lsn
from minidb.pagestore.restart.redo import REDO_PASS
from minidb.pagestore.restart.results import PASSES, AnalysisResult, RedoResult, RestartReport, UndoResult
from minidb.pagestore.restart.undo import undo_pass
from minidb.stats import Trace

__all__ = ["Restart", "RESTART"]


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
        tail). Yields the options to open the log with for restart: the log's end as that check found it,
        so that opening does not read the last file again to find it (analysis reads the log as it is)."""
        end = CHECK_VOLUME_AND_LOG.call(disk)
        yield {} if end is None else {"opening_end": end}

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


#: restart as the storage manager runs it (and opens the log for it); the component of project aries_restart
RESTART = impl.hot_spot(Restart, project="aries_restart")
