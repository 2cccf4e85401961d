"""Rolling back: walk a transaction's chain backwards, undo each entry, log compensations.

Rollback starts at the transaction's *undo-next* LSN and reads one entry at
a time (:func:`undo_step`):

- a **compensation entry** (flag C: a CLR) is never undone: rollback jumps to
  its ``undo_nxt``, past everything it compensates;
- an **undoable entry** (flag U) is undone by the handler registered for its
  type name (:func:`minidb.pagestore.wal.logrec.undo`), then rollback continues
  at the entry's ``txn_prev_lsn``:

  * a *physical* undo (a record on a page) logs the entry's CLR twin, which
    changes the page back and carries ``undo_nxt`` = the undone entry's
    ``txn_prev_lsn``;
  * a *logical* undo (flag L: the volume's maps) performs the inverse
    operation through the volume, which logs entries of its own, then logs
    a ``compensate`` entry with that ``undo_nxt``: Shore's protocol for a
    compensated multi-step action (grab an *anchor*, update and log as
    usual, write a compensation entry). A crash before the ``compensate``
    leaves the inverse's entries to be undone in turn, then the entry again,
    which the volume's undo handlers tolerate;
- any other entry (redo-only, a state marker) is skipped.

Once rollback is past an entry, the log space reserved for undoing it (and
anything logged after it) is released (:mod:`minidb.pagestore.wal.logspace`).

A CLR's ``undo_nxt`` is what makes rollback idempotent: however often a
crash interrupts it, each undo done is logged with a pointer past it, so the
next attempt resumes where the last one stopped, never undoing an undo.

Rolling back to a *savepoint* stops at the first entry at or before the
savepoint's LSN; the transaction goes on (Shore's ``rollback_work``).

Worked example (the log of transaction 3)::

    0x1/0x100  rec_insert   r(1.3.12.0)          undo-next 0x1/0x100
    0x1/0x140  rec_splice   r(1.3.12.0)          undo-next 0x1/0x140
    abort:
    0x1/0x190  clr_rec_splice   undo_nxt=0x1/0x100
    0x1/0x1d8  clr_rec_insert   undo_nxt=NULL    (rollback done)
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from minidb.log.entry import LogEntry
from minidb.log.lsn import LSN, NULL_LSN
from minidb.log.types import EntryType
from minidb.pagestore.transactions.xct import log_xct_entry
from minidb.pagestore.wal.logdef import PAGESTORE_TYPES
from minidb.pagestore.wal.logrec import undo


@dataclass(frozen=True)
class UndoStep:
    """What rollback did with one entry of the chain."""

    lsn: LSN
    type_name: str
    action: str  # "undone", "jumped" (a CLR), "skipped" (not undoable)
    next_lsn: LSN
    logged: tuple[LSN, ...] = ()  # the entries the undo logged (CLRs, inverse operations)

    def __str__(self) -> str:
        logged = f", logged {', '.join(str(x) for x in self.logged)}" if self.logged else ""
        return f"{self.lsn} {self.type_name}: {self.action}{logged}; next {self.next_lsn}"


def chain_step(entry_type: EntryType, values: dict[str, Any]) -> tuple[str, LSN]:
    """What rollback does with an entry, by its type's flags alone, and where the chain goes on.

    ``("jumped", undo_nxt)`` for a compensation entry (flag C), ``("undone",
    txn_prev_lsn)`` for an undoable one (flag U), ``("skipped",
    txn_prev_lsn)`` for any other.
    """
    if entry_type.compensation:
        return "jumped", values["undo_nxt"]
    return ("undone" if entry_type.undoable else "skipped"), values["txn_prev_lsn"]


def undo_step(volume: Any, entry: LogEntry, xct: Any) -> UndoStep:
    """Undo (or jump over, or skip) one entry of ``xct``'s chain; return where the chain goes on."""
    entry_type = entry.entry_type
    if entry_type is None:
        raise ValueError(f"{entry.lsn}: {entry.type_name} is not an entry type of the page store")
    action, prev = chain_step(entry_type, entry.values)
    if action != "undone":
        if action == "skipped":
            _release_from(xct, entry.lsn)
        return UndoStep(entry.lsn, entry_type.name, action, prev)
    count = xct.log_count
    space = _log_space(xct)
    with space.undoing() if space is not None else nullcontext():  # its page images: logspace.py
        clr = undo(volume, entry, xct)  # a physical undo logs its CLR twin itself
        if entry_type.logical:
            log_xct_entry(volume.log, xct, PAGESTORE_TYPES[clr.type_name], clr.values)
    _release_from(xct, entry.lsn)
    return UndoStep(entry.lsn, entry_type.name, "undone", prev, tuple(xct.logged_since(count)))


def _release_from(xct: Any, lsn: LSN) -> None:
    """Rollback is past ``lsn``: the log space reserved for undoing it and what followed is free again
    (:mod:`minidb.pagestore.wal.logspace`)."""
    space = _log_space(xct)
    if space is not None:
        space.undone(xct.txn_id, lsn)


def _log_space(xct: Any) -> Any:
    return getattr(getattr(xct, "manager", None), "log_space", None)


def rollback(volume: Any, xct: Any, to: LSN = NULL_LSN, trace: Any = None) -> list[UndoStep]:
    """Undo ``xct``'s entries after ``to`` (all of them for NULL), newest first; return the steps."""
    steps = []
    was = xct.rolling_back
    xct.rolling_back = True
    try:
        lsn = xct.undo_nxt
        while not lsn.is_null and (to.is_null or lsn > to):
            step = undo_step(volume, volume.log.read(lsn), xct)
            steps.append(step)
            if trace is not None:
                trace.emit("T%d %s", xct.txn_id, step)
            lsn = step.next_lsn
    finally:
        xct.rolling_back = was
    return steps
