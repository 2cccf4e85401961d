"""Exercise 08b: ARIES analysis, the tables restart rebuilds before redo and undo.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/08b_aries_analysis --exercise-impl=student
"""

from __future__ import annotations


def analysis(checkpoint_xcts: dict[int, tuple[str, int, int]], checkpoint_dirty: dict[int, int],
             log: list[tuple[int, int, str, int | None, int | None]],
             ) -> tuple[dict[int, tuple[str, int, int]], dict[int, int], int]:
    """The transaction table, the dirty page table and the redo LSN at the end of the log.

    ``checkpoint_xcts`` maps a tid to ``(state, last_lsn, undo_nxt)`` as the
    checkpoint recorded it; ``checkpoint_dirty`` maps a page number to its
    recovery LSN. ``log`` lists the entries after the checkpoint in LSN
    order, each ``(lsn, tid, kind, page, undo_nxt)`` (see README.md for the
    kinds). LSNs are integers, 0 is NULL.

    Return ``(xcts, dirty, redo_lsn)`` in the same shapes as the
    checkpoint's tables; ``redo_lsn`` is 0 when there is nothing to redo.
    """
    raise NotImplementedError("analysis: your code here")
