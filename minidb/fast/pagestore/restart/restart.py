"""Restart that reads the log since the checkpoint once, with the cyclic collector paused.

The reference :class:`~minidb.pagestore.restart.restart.Restart` runs each pass on
its own: the storage manager checks that the log is whole (finding its end),
the log's opening finds the end again, analysis reads the log from the
master checkpoint, redo reads it again from the redo LSN, and Python's
cyclic garbage collector runs whenever its allocation counters fill up. This
twin hands what one step read to the next:

- :meth:`Restart.opening` checks the volume and log with the quick check
  (:mod:`minidb.fast.pagestore.restart.master`), asks the log to keep its
  last file's checked entries (``keep_opening_scan``), and pauses the
  collector until restart has ended (:func:`minidb.collector.collector_paused`);
- :meth:`Restart.analysis` takes those checked entries first thing
  (``LogManager.take_opening_scan``, before anything writes to the log) and
  runs the fast analysis, which reads that file from them and keeps the
  entries it decoded (:mod:`minidb.fast.pagestore.restart.analysis`);
- :meth:`Restart.redo` runs the fast redo on the kept entries
  (:mod:`minidb.fast.pagestore.restart.redo`), then lets them go.

It calls the fast passes itself, whichever other twins are chosen: they take
the kept entries and the checked file, which the reference passes do not.

Why it is safe: the checked entries are the file's entries as a scan reads
them (the log refuses a write while they are kept, so they cannot go
stale), the kept entries are those a scan from the redo LSN gives, and the
passes make the reference's decisions on them. The collector's pause only
delays the search for reference cycles, of which restart's objects (tens of
thousands of headers, values and kept entries, alive until redo ends) make
none; reference counting frees everything as usual, and the collector is
left as it was found. With the collector back on between analysis and redo
it walked every kept entry again: about a tenth of restart's time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minidb.collector import collector_paused
from minidb.fast.pagestore.restart import analysis as fast_analysis, master as fast_master, redo as fast_redo
from minidb.io import Disk
from minidb.log.end import CheckedFile
from minidb.pagestore.restart import restart as reference
from minidb.pagestore.restart.results import AnalysisResult, RedoResult


class Restart(reference.Restart):
    """The reference's passes, the log since the checkpoint read once (see the module documentation)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._kept: list = []  # the entries analysis read, for redo (dropped once redo has run)
        self._checked: CheckedFile | None = None  # the log's last file as opening checked it (dropped then)

    @staticmethod
    @contextmanager
    def opening(disk: Disk) -> Iterator[dict[str, Any]]:
        with collector_paused():
            fast_master.check_volume_and_log(disk)
            yield {"keep_opening_scan": True}

    def analysis(self) -> AnalysisResult:
        self._kept = []
        self._checked = self.log.take_opening_scan()  # None unless the log kept it for this restart
        with collector_paused():
            self.analysis_result = fast_analysis.analysis_pass(self.log, self.master, self.traces["analysis"],
                                                               keep=self._kept, checked=self._checked)
        self.xcts.set_youngest(self.analysis_result.youngest)
        return self.analysis_result

    def redo(self) -> RedoResult:
        self.mount_devices()
        with collector_paused():
            self.redo_result = fast_redo.redo_pass(self.log, self.volume, self.analysis_result,
                                                   self.traces["redo"], self._kept, self._checked)
        self._kept, self._checked = [], None
        return self.redo_result
