"""Exercise 11b: the data eraser's throttle (work estimate, components, pace, a cycle's schedule).

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/11b_erase_throttle --exercise-impl=student
"""

from __future__ import annotations

from minidb.logstore.eraser.throttle import Planned

__all__ = ["Planned", "file_components", "pace", "schedule", "work_estimate"]


def work_estimate(lengths: list[int]) -> int:
    """A cycle's whole work, in units, for files of ``lengths`` bytes."""
    raise NotImplementedError("exercise 11b: implement work_estimate (see exercises/11b_erase_throttle/README.md)")


def file_components(length: int) -> list[tuple[int, float]]:
    """The work of one file of ``length`` bytes: (component, units) for components 1 to 6, in order."""
    raise NotImplementedError("exercise 11b: implement file_components (see exercises/11b_erase_throttle/README.md)")


def pace(base_ms: float, ms_per_unit: float, done: float, now_ms: float) -> tuple[float, float]:
    """After ``done`` units in all, at ``now_ms``: (ms to wait, the schedule's start, moved if late)."""
    raise NotImplementedError("exercise 11b: implement pace (see exercises/11b_erase_throttle/README.md)")


def schedule(start_ms: int, end_ms: int, lengths: list[int],
             delays: dict[tuple[int, int], float] | None = None) -> list[Planned]:
    """Every component of a cycle from ``start_ms`` to ``end_ms`` over files of ``lengths`` bytes.

    Each ``Planned(file, component, units, end_ms, late)``: ``file`` is the
    file's place in ``lengths`` (from 0), ``end_ms`` when the component ends
    (after the throttle's wait), ``late`` whether that is after the cycle's
    end, in which case it is the last one.
    """
    raise NotImplementedError("exercise 11b: implement schedule (see exercises/11b_erase_throttle/README.md)")
