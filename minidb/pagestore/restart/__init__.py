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
``restart.py``     :class:`Restart`: the passes, one at a time or all at once
``analysis.py``    pass 1: rebuild the tables from the master checkpoint on
``redo.py``        pass 2: repeat history (page LSN test)
``undo.py``        pass 3: all losers together, largest undo-next first
``results.py``     what the passes return: the tables, the counts, the report
``repair.py``      torn pages rebuilt from their images (redo's fixes)
``finish.py``      repairs, committed transactions left freeing space
``chkpt.py``       fuzzy checkpoints: what restart starts from
``master.py``      the master LSN, where restart finds the last checkpoint
=================  =========================================================

Each pass emits a trace of what it read, decided and changed; a
:class:`Restart` runs the passes one at a time (the notebook steps through
them) or all at once (:meth:`Restart.run`).

The passes themselves (``analysis.py``, ``redo.py``, ``undo.py`` and
``restart.py``) are what the course project ``aries_restart`` asks a student
to write; its student edition leaves them out, so this package imports them
only when one of their names is asked for (``from minidb.pagestore.restart
import rebuild_tables``), and everything else here works without them.

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

import importlib
from typing import Any

from minidb.pagestore.restart.finish import FinishResult, finish_pass
from minidb.pagestore.restart.restart import RESTART, Restart
from minidb.pagestore.restart.results import (
    PASSES,
    AnalysisResult,
    AnalysisTables,
    DirtyPage,
    PageRepair,
    RedoResult,
    RestartReport,
    UndoResult,
    XctEntry,
)

#: the passes' own names, by module: imported on first use (see the module documentation)
PASS_NAMES = {"analysis": ("analysis_pass", "rebuild_tables"),
              "redo": ("redo_pass", "redo_decision", "rebuild_page"),
              "undo": ("undo_pass", "undo_order", "walk_losers", "UndoList")}
_PASS_MODULE = {name: module for module, names in PASS_NAMES.items() for name in names}

__all__ = ["Restart", "RestartReport", "AnalysisResult", "RedoResult", "UndoResult", "FinishResult", "XctEntry",
           "DirtyPage", "PageRepair", "finish_pass", "AnalysisTables", "RESTART", "PASSES", *_PASS_MODULE]


def __getattr__(name: str) -> Any:
    """A pass's own name, from its module (imported now)."""
    if name not in _PASS_MODULE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_PASS_MODULE[name]}"), name)
