"""Exercise 02a: where a record goes on a slotted page, with Shore's space reservation.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/02a_slotted_insert --exercise-impl=student
"""

from __future__ import annotations

SLOT_SIZE = 4  # bytes of one slot entry (offset, length) in the slot table


def place_record(slots: list[tuple[int, int]], space, length: int, user,
                 slot: int | None = None) -> tuple[int, bool, bool, bool]:
    """Where a record of ``length`` bytes goes on a slotted page, for ``user``.

    ``slots``: the slot table, ``(offset, length)`` per slot: in use if the
    offset is not 0, reserved if only the length is not 0, free if both are 0.
    ``space``: the page's ``nfree``, ``nrsvd``, ``xct_rsvd``, ``rsvd_tid`` and
    ``contiguous`` (attributes). ``user``: ``tid``, ``oldest_active`` and
    ``rolling_back`` (attributes). ``slot``: the slot redo or undo must use, or
    None to let the page choose.

    Return ``(slot, void, fits, coalesce)``; see README.md. Change nothing.
    """
    raise NotImplementedError("place_record: your code here")
