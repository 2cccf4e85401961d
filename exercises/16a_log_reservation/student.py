"""Exercise 16a: what a log entry reserves for its rollback.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/16a_log_reservation --exercise-impl=student
"""

from __future__ import annotations


def reserve_for_rollback(size: int, fudge: float, first_entry: bool, first_on_page: bool, end_reserve: int,
                         page_image: int, free: int | None) -> tuple[int, int, bool]:
    """``(with_the_entry, for_the_end, admitted)`` for a forward entry of ``size`` bytes whose type has the
    fudge factor ``fudge``; ``first_entry``: the transaction's first entry; ``first_on_page``: its first
    undoable change to that page; ``free``: the bytes free beside every reservation and the checkpoint
    reserve (None: an unbounded log)."""
    raise NotImplementedError(
        "exercise 16a: implement reserve_for_rollback (see exercises/16a_log_reservation/README.md)")
