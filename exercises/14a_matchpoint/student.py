"""Exercise 14a: the matchpoint search of a syncup.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/14a_matchpoint --exercise-impl=student
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

#: The entry types a syncup may end at.
SYNC_TYPES = frozenset({"Commit", "Abort", "Matchpoint", "TermStart"})


def find_matchpoint(candidates: Iterable[tuple[int, str, int, int]],
                    feeder: Callable[[int], tuple[str, int, int] | None]) -> tuple[int | None, int]:
    """The matchpoint's VLSN (None: no common sync point, a network restore) and how many sync points
    were compared with the feeder.

    ``candidates``: the rejoining node's replicated entries ``(vlsn, type_name, checksum, lsn)``, newest
    first; ``feeder(vlsn)``: the feeder's entry ``(type_name, checksum, lsn)`` at ``vlsn``, or None.
    """
    raise NotImplementedError("exercise 14a: implement find_matchpoint (see exercises/14a_matchpoint/README.md)")
