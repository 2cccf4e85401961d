"""Exercise 08a: the order of ARIES' undo pass over the losers' chains.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/08a_aries_undo --exercise-impl=student
"""

from __future__ import annotations


def undo_order(losers: dict[int, int], log: dict[int, tuple[int, str, int, int | None]]) -> list[tuple[int, int, str]]:
    """The entries the undo pass processes, in order, with what it does to each.

    ``losers`` maps each loser's tid to its undo-next LSN (0: nothing to undo).
    ``log`` maps an LSN to ``(tid, kind, prev, undo_nxt)``: ``kind`` is
    ``"undoable"``, ``"clr"`` or ``"redo-only"``; ``prev`` is the entry's
    ``txn_prev_lsn`` (0 for none); ``undo_nxt`` is a CLR's next LSN (0 for
    NULL), None for the other kinds.

    Return ``[(tid, lsn, action), ...]`` where ``action`` is ``"undone"``,
    ``"jumped"`` (a CLR) or ``"skipped"``. Always process the largest pending
    LSN first. See README.md for the exact rules.
    """
    raise NotImplementedError("undo_order: your code here")
