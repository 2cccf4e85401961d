"""Project aries_restart: the page store's ARIES restart, whole (see README.md).

The storage manager restarts through the hot spot ``RESTART`` every time it
opens a volume; with ``--impl student --project aries_restart`` it constructs
the ``Restart`` of this file instead, everywhere: ``StorageManager.open``, the
crash tests (which restart at every crash point, crash again during restart
and restart once more), the tour, the recovery pictures of notebook 08 and
the quizzes. Every method below is one the engine calls; its docstring is the
contract the engine relies on.

Given, to build on (``minidb.pagestore.restart``, beside minidb's own passes):

- ``.results``: the records your passes return, which the engine, the pictures
  and the tests read (``XctEntry``, ``DirtyPage``, ``AnalysisResult``,
  ``RedoResult``, ``UndoResult``, ``RestartReport``, ``PASSES``), with
  ``check_not_erased`` (an erased entry in a page store's log is corruption)
  and ``analysis_result`` (the result of analysis, its summary traced);
- ``.master``: ``master_lsn(disk)`` (the last complete checkpoint's
  ``chkpt_begin``, NULL_LSN if none) and ``CHECK_VOLUME_AND_LOG`` (the volume
  and the whole log are there: call it as ``CHECK_VOLUME_AND_LOG.call(disk)``);
- ``.repair``: ``fix_or_repair`` (fix a page, rebuilding it from its image if
  it is torn) and ``read_other_pages`` (read what may be torn and redo did not
  fix);
- ``.finish``: ``finish_pass`` (prepared transactions back in doubt, space
  freeing finished, repairs, marked stores removed) and
  ``minidb.pagestore.files.storeprops.drop_tmp_files``;
- ``minidb.pagestore.transactions.rollback``: ``chain_step`` (what rollback
  does with an entry, by its flags) and ``undo_step`` (undo one entry of a
  transaction, logging its CLR, as a transaction's own rollback does);
- ``minidb.pagestore.wal.logrec.REDO`` (each entry type's redo handler, by
  name), ``minidb.pagestore.wal.logdef.PAGESTORE_TYPES`` (``.owner``: the
  page store's entries), ``XctState`` and ``PROGRESS``
  (``minidb.pagestore.transactions.xct``), ``PageId``, ``Trace``; the log
  (``log.scan(lsn)`` forward from an LSN, ``log.read(lsn)``, ``log.end_lsn``),
  the buffer pool (``fix``, ``unfix``, ``lower_rec_lsn``, ``force_all``), the
  transaction manager (``adopt``, ``end_after_restart``, ``set_youngest``).

Yours: every method of ``Restart``. Not minidb's own passes
(``analysis.py``, ``redo.py``, ``undo.py``, ``restart.py`` of
``minidb/pagestore/restart/``): the grader refuses a ``student.py`` that
imports them, and the student edition leaves them out.
"""

from __future__ import annotations

from typing import Any

from minidb.io import Disk
from minidb.pagestore.restart.finish import FinishResult
from minidb.pagestore.restart.results import PASSES, AnalysisResult, RedoResult, RestartReport, UndoResult
from minidb.stats import Trace

__all__ = ["Restart", "PASSES", "Trace"]


class Restart:
    """The passes of one restart, to run one by one or all at once."""

    def __init__(self, disk: Any, volume: Any, xcts: Any, checkpointer: Any = None, trace: bool = True,
                 files: Any = None, mounts: Any = None):
        """A restart of the page store on ``disk``, whose volume 1 (``volume``: its ``log``, its pool ``bp``,
        ``mounted()`` for every mounted volume) and transaction manager (``xcts``) are open; nothing is read
        or logged yet but the master LSN.

        ``checkpointer`` takes restart's checkpoint (``take()``, None: none is taken); ``files`` is the file
        manager (TMP files are dropped through it; None: they stay); ``mounts`` is the mount table (None:
        one volume): ``remount(devices)`` mounts the device table's volumes and returns lines to trace,
        ``file_managers()`` lists their file managers.

        Attributes the engine, the pictures and the tests read: ``disk``, ``volume``, ``log``
        (``volume.log``), ``xcts``, ``master`` (``master_lsn(disk)``, read now), ``traces`` (a ``Trace``
        per name of ``PASSES``, each ``Trace(enabled=trace)``; a line of pass ``p`` starts with ``"p: "``),
        ``analysis_result``, ``redo_result``, ``undo_result``, ``finish_result`` (None until the pass has
        run) and ``checkpoint`` (restart's checkpoint result, None until finish took it).
        """
        raise NotImplementedError("Restart.__init__")

    @staticmethod
    def opening(disk: Disk) -> Any:
        """A context manager the storage manager opens the volume, the log and restart inside (write it as
        a ``@staticmethod`` over a ``@contextlib.contextmanager`` generator). Before anything is opened it
        checks that the volume and the whole log are there (``CHECK_VOLUME_AND_LOG.call(disk)``: opening the
        log may cut a torn tail, so the check comes first; its errors pass unchanged), then yields the
        options to open the log with (a dict; ``{}``: analysis reads the log as it is)."""
        raise NotImplementedError("Restart.opening")

    @property
    def next_pass(self) -> str | None:
        """The name (of ``PASSES``) of the first pass that has not run, None once all four have."""
        raise NotImplementedError("Restart.next_pass")

    def analysis(self) -> AnalysisResult:
        """Pass 1: read the log forward from the master LSN (from its first entry if NULL) to its end and
        rebuild the transaction table, the dirty page table (recovery LSNs), the redo LSN and the device
        table; tell the transaction manager the youngest transaction id seen (``xcts.set_youngest``).
        Logs nothing, changes no page. An erased entry is corruption (``check_not_erased``). Sets and returns
        ``analysis_result`` (``AnalysisResult``: ``master``, ``start`` (where the scan began), ``end``
        (``log.end_lsn``), the tables, ``youngest``, ``entries_read``, ``ended`` (transactions whose
        ``xct_end`` was read), ``devices``; its ``losers``, ``prepared`` and ``freeing`` follow from the
        states)."""
        raise NotImplementedError("Restart.analysis")

    def mount_devices(self) -> None:
        """Mount the volumes of analysis' device table (``mounts.remount``, when there is a mount table),
        tracing each line it returns in the redo trace; analysis must have run."""
        raise NotImplementedError("Restart.mount_devices")

    def redo(self) -> RedoResult:
        """Pass 2, after analysis (mounting its devices first): repeat history from the redo LSN, so that
        every page is as it was at the crash, losers' changes and CLRs included; a page is fixed through
        ``fix_or_repair`` (torn pages rebuilt), and the pages no entry made redo fix are read after the scan
        (``read_other_pages``). Logs nothing. A page redo changes is unfixed dirty and its recovery LSN
        lowered to the first entry redone on it (``bp.lower_rec_lsn``). Sets and returns ``redo_result``
        (``RedoResult``: ``start``, ``entries_read``, ``redone``, ``skipped_not_dirty``,
        ``skipped_page_newer``, ``pages_repaired``, and ``decisions``: (LSN, "redone" | "skipped") for every
        redoable page-store entry read, in log order)."""
        raise NotImplementedError("Restart.redo")

    def undo(self) -> UndoResult:
        """Pass 3, after redo: roll every loser (ACTIVE or ABORTING) back, all together, logging a CLR for
        every entry undone; never undo an entry twice, also when an earlier restart crashed during its
        undo; log each loser's ``xct_end`` (``committed=False``) once it is rolled back
        (``xcts.end_after_restart``). A loser becomes a transaction of the manager with
        ``xcts.adopt(tid, XctState.ABORTING, last_lsn, undo_nxt, first_lsn)``, marked ``rolling_back`` while
        undo runs. When the manager keeps log space (``xcts.log_space``), reserve first, for each loser
        and each prepared transaction, the space to roll it back
        (``log_space.reserve_chain(tid, undo_nxt, log.read)``). Sets and returns ``undo_result``
        (``UndoResult``: ``losers`` (sorted ids), ``steps`` ((tid, ``UndoStep``) in the order processed),
        ``ended`` (tid -> its ``xct_end`` LSN))."""
        raise NotImplementedError("Restart.undo")

    def finish(self) -> FinishResult:
        """After undo: drop the TMP files of every file manager (before prepared transactions take their
        locks again), then ``finish_pass``, adding the dropped files to its ``removed_stores``; reset every
        mounted volume's caches (``reset_caches``); write every dirty page (``bp.force_all``: redo changed
        pages without logging images); take restart's checkpoint if there is a checkpointer. Trace each
        step in the finish trace. Sets and returns ``finish_result``."""
        raise NotImplementedError("Restart.finish")

    def step(self) -> Any:
        """Run the next pass and return its result (None when all four have run)."""
        raise NotImplementedError("Restart.step")

    def run(self) -> RestartReport:
        """Run the passes that have not run, in order; return :meth:`report`."""
        raise NotImplementedError("Restart.run")

    def report(self) -> RestartReport:
        """Once finish has run: the ``RestartReport`` of the master LSN, the four results, the checkpoint
        and each pass's trace lines (``{name: list(trace.lines)}``)."""
        raise NotImplementedError("Restart.report")
