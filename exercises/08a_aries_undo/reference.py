"""Exercise 08a, reference: minidb's own answer (not a second implementation).

``undo_order`` is :func:`minidb.pagestore.restart.undo.undo_order`, which
runs the undo pass's loop (``walk_losers``: always the largest LSN, through
:class:`UndoList`) with the decision of
:func:`minidb.pagestore.transactions.rollback.chain_step` (by the entry type's flags C
and U), without undoing anything. This adapter turns the exercise's
integers into LSNs of log file 1 and its kinds into real page-store entry
types with those flags.
"""

from __future__ import annotations

from minidb.log import LSN, NULL_LSN
from minidb.pagestore.wal.logdef import CLR_REC_INSERT, PAGE_FORMAT, REC_INSERT
from minidb.pagestore.restart.undo import undo_order as _undo_order

KINDS = {"undoable": REC_INSERT, "clr": CLR_REC_INSERT, "redo-only": PAGE_FORMAT}


def _lsn(n: int | None) -> LSN:
    return NULL_LSN if not n else LSN(1, n)


def undo_order(losers: dict[int, int], log: dict[int, tuple[int, str, int, int | None]]) -> list[tuple[int, int, str]]:
    def read(lsn: LSN):
        tid, kind, prev, undo_nxt = log[lsn.offset]
        return KINDS[kind], {"txn_id": tid, "txn_prev_lsn": _lsn(prev), "undo_nxt": _lsn(undo_nxt)}

    order = _undo_order({tid: _lsn(start) for tid, start in losers.items()}, read)
    return [(tid, lsn.offset, action) for tid, lsn, action in order]
