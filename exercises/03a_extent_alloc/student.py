"""Exercise 03a: extent allocation: the pages an allocation tries, and the search for free extents.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/03a_extent_alloc --exercise-impl=student
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def pages_to_try(mode: str, pmap: int, ext_sz: int) -> list[int]:
    """The indexes (0 .. ext_sz - 1) of the pages of one extent that an allocation in ``mode``
    (``"append"`` or ``"compact"``) may take, in the order it tries them. Bit ``i`` of ``pmap`` set
    means page ``i`` of the extent is allocated. See README.md.
    """
    raise NotImplementedError("pages_to_try: your code here")


def find_free_extents(owners: Sequence[int], start: int, count: int,
                      may_take: Callable[[int], bool]) -> tuple[list[int], int]:
    """Up to ``count`` free extents, lowest first, and the new lowest-free hint.

    ``owners[e]`` is the store that owns extent ``e`` (0: free); no extent
    below ``start`` is free. ``may_take(e)`` locks free extent ``e`` for the
    caller, or returns False if another transaction has it. See README.md.
    """
    raise NotImplementedError("find_free_extents: your code here")
