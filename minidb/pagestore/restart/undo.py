"""Restart, pass 3: undo. Roll back every loser together, in strictly reverse LSN order.

After redo the pages are as they were at the crash, losers' changes
included. Undo rolls the losers (ACTIVE or ABORTING in analysis' table)
back, not one after the other but *all together*: it keeps, for each loser,
the LSN of the next entry to process (its undo-next), and always takes the
**largest** of them (:class:`UndoList`). So entries are undone in reverse
chronological order across transactions, as Shore requires: some actions
(a page split in a B-tree) are protected only by latches, and must be
undone before anything logged earlier.

Each step is :func:`minidb.pagestore.transactions.rollback.undo_step`: an undoable entry
is undone and a CLR logged for its transaction (whose ``undo_nxt`` points
past it); a CLR makes the walk jump to its ``undo_nxt``; anything else is
passed over. A transaction whose walk reaches NULL is rolled back: its
``xct_end committed=false`` is logged.

Because every undo logs a CLR, undo is idempotent: a crash during undo
leaves CLRs that the next restart's analysis reads (undo-next = the CLR's
``undo_nxt``), and undo resumes where it stopped, never undoing an undo.

Worked example: losers T2 (undo-next 0x1/0x600) and T5 (0x1/0x640). Step 1
takes T5's 0x1/0x640 (the largest), undoes it, logs a CLR, and T5's
undo-next becomes its ``txn_prev_lsn``, 0x1/0x5a0; step 2 takes T2's
0x1/0x600; step 3 T5's 0x1/0x5a0, and so on down to NULL for both.

The walk's order goes through ``UNDO_WALK``, an exercise hook
(:mod:`minidb.impl`): under ``MINIDB_IMPL=student``
exercise 08a's ``undo_order`` orders the entries (given every entry the
losers' chains reach), and each is undone, jumped or skipped in that order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from minidb import impl
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.restart.results import AnalysisResult, UndoResult
from minidb.pagestore.transactions.rollback import chain_step, undo_step
from minidb.pagestore.transactions.xct import XctState
from minidb.pagestore.wal.logdef import CLR_REC_INSERT, PAGE_FORMAT, REC_INSERT
from minidb.stats import Trace


class UndoList:
    """The losers' next LSNs to process; :meth:`pop` always gives the largest (a max-heap)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int]] = []

    def push(self, lsn: LSN, tid: int) -> None:
        if not lsn.is_null:
            heapq.heappush(self._heap, (-lsn.packed, tid))

    def pop(self) -> tuple[LSN, int]:
        packed, tid = heapq.heappop(self._heap)
        return LSN.unpack(-packed), tid

    def __len__(self) -> int:
        return len(self._heap)

    def pending(self) -> list[tuple[LSN, int]]:
        """(LSN, tid) still to process, largest first."""
        return [(LSN.unpack(-p), t) for p, t in sorted(self._heap)]


def walk_losers(starts: dict[int, LSN], step: Callable[[int, LSN], LSN]) -> list[tuple[int, LSN]]:
    """Process the losers' chains together, largest LSN first; ``step(tid, lsn)`` returns the next LSN.

    Returns (tid, LSN) in the order processed. This loop is the undo pass;
    :func:`undo_order` runs it without undoing anything.
    """
    pending = UndoList()
    for tid, lsn in sorted(starts.items()):
        pending.push(lsn, tid)
    order = []
    while pending:
        lsn, tid = pending.pop()
        order.append((tid, lsn))
        pending.push(step(tid, lsn), tid)
    return order


def undo_order(starts: dict[int, LSN], read: Callable[[LSN], tuple[EntryType, dict[str, Any]]]
               ) -> list[tuple[int, LSN, str]]:
    """The entries the undo pass would process, in order: (tid, LSN, undone | jumped | skipped).

    ``read(lsn)`` gives an entry's type and values; nothing is undone or logged.
    """
    actions: list[str] = []

    def step(tid: int, lsn: LSN) -> LSN:
        entry_type, values = read(lsn)
        action, following = chain_step(entry_type, values)
        actions.append(action)
        return following

    return [(tid, lsn, action) for (tid, lsn), action in zip(walk_losers(starts, step), actions, strict=False)]


# Exercise 08a's entry kinds, and an entry type of the page store for each (with the flags that decide).
EXERCISE_KINDS = {"undoable": REC_INSERT, "clr": CLR_REC_INSERT, "redo-only": PAGE_FORMAT}
_ACTIONS = {"undone": "undoable", "jumped": "clr", "skipped": "redo-only"}


def exercise_form(losers: dict[int, int], log: dict[int, tuple[int, str, int, int | None]]
                  ) -> list[tuple[int, int, str]]:
    """:func:`undo_order` in exercise 08a's form: LSNs are integers (packed, 0 for NULL: see
    :func:`_number`), an entry is ``(tid, kind, prev, undo_nxt)`` (``exercises/08a_aries_undo/reference.py``)."""
    def lsn(n: int | None) -> LSN:
        return NULL_LSN if not n else LSN.unpack(n)

    def read(at: LSN) -> tuple[EntryType, dict[str, Any]]:
        tid, kind, prev, undo_nxt = log[_number(at)]
        return EXERCISE_KINDS[kind], {"txn_id": tid, "txn_prev_lsn": lsn(prev), "undo_nxt": lsn(undo_nxt)}

    return [(tid, _number(at), action) for tid, at, action in undo_order({t: lsn(s) for t, s in losers.items()}, read)]


def _number(lsn: LSN) -> int:
    """An LSN as exercise 08a's integer: packed, 0 for NULL (no log file is number 0)."""
    return 0 if lsn.is_null else lsn.packed


def _walk(starts: dict[int, LSN], step: Callable[[int, LSN], LSN], read: Callable[[LSN], Any]) -> list[tuple[int, LSN]]:
    return walk_losers(starts, step)


def _from_exercise(hook: impl.Hook, student: Callable) -> Callable:
    """A student's ``undo_order`` (exercise 08a's form) as the undo pass's walk: LSNs as integers
    (:func:`_number`), the log as a dict of every entry the losers' chains reach (``read(lsn)`` gives a
    :class:`~minidb.log.LogEntry`); ``step`` is run on each entry in the student's order."""
    def walk(starts: dict[int, LSN], step: Callable[[int, LSN], LSN], read: Callable[[LSN], Any]) -> list[tuple[int, LSN]]:
        log: dict[int, tuple[int, str, int, int | None]] = {}
        todo = [lsn for lsn in starts.values() if not lsn.is_null]
        while todo:
            lsn = todo.pop()
            if _number(lsn) in log:
                continue
            entry = read(lsn)
            action, following = chain_step(entry.entry_type, entry.values)
            kind = _ACTIONS[action]
            undo_nxt = _number(following) if kind == "clr" else None
            log[_number(lsn)] = (entry.values["txn_id"], kind, _number(entry.values["txn_prev_lsn"]), undo_nxt)
            todo += [n for n in (entry.values["txn_prev_lsn"], following) if not n.is_null]
        answer = student({tid: _number(lsn) for tid, lsn in starts.items()}, log)
        try:
            order = [(tid, packed) for tid, packed, _action in answer]
        except (TypeError, ValueError):
            raise hook.wrong(f"returned {answer!r}, not a list of (tid, lsn, action)") from None
        for tid, packed in order:
            if tid not in starts or packed not in log:
                raise hook.wrong(f"returned ({tid!r}, {packed!r}, ...), not an entry of a loser's chain")
        for tid, packed in order:
            step(tid, LSN.unpack(packed))
        return [(tid, LSN.unpack(packed)) for tid, packed in order]
    return walk


UNDO_WALK = impl.register("08a_aries_undo", "undo_order", _walk, _from_exercise)


def undo_pass(volume: Any, xcts: Any, result: AnalysisResult, trace: Trace | None = None) -> UndoResult:
    """Pass 3 (see the module documentation)."""
    trace = trace if trace is not None else Trace(enabled=False)
    losers = {row.tid: xcts.adopt(row.tid, XctState.ABORTING, row.last_lsn, row.undo_nxt, row.first_lsn)
              for row in result.losers}
    done = UndoResult(sorted(losers))
    for tid, xct in sorted(losers.items()):
        xct.rolling_back = True
        trace.emit("undo: loser T%d, undo-next %s", tid, xct.undo_nxt)

    def step(tid: int, lsn: LSN) -> LSN:
        undone = undo_step(volume, volume.log.read(lsn), losers[tid])
        done.steps.append((tid, undone))
        trace.emit("undo: T%d %s", tid, undone)
        return undone.next_lsn

    # walk_losers, or exercise 08a's undo_order (minidb.impl)
    UNDO_WALK.call({tid: xct.undo_nxt for tid, xct in losers.items()}, step, volume.log.read)
    for tid, xct in sorted(losers.items()):
        xct.rolling_back = False
        done.ended[tid] = xcts.end_after_restart(xct, committed=False)
        trace.emit("undo: T%d rolled back, xct_end at %s", tid, done.ended[tid])
    trace.emit("%s", done.summary())
    return done
