"""Exercise 10a: provisional logging and the checkpoint's max flush level.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/10a_provisional --exercise-impl=student
"""

from __future__ import annotations

from minidb.log import LSN, Provisional


def is_provisional(entry_lsn: LSN, flag: Provisional, last_ckpt_end_lsn: LSN) -> bool:
    """Does recovery treat the IN logged at ``entry_lsn`` with ``flag`` as provisional?

    ``last_ckpt_end_lsn`` is the CkptEnd that recovery starts from, or
    ``NULL_LSN`` when the log holds none. Provisional entries are not replayed.

    - ``Provisional.NO``: never provisional;
    - ``Provisional.YES``: always provisional;
    - ``Provisional.BEFORE_CKPT_END``: provisional only when that CkptEnd
      comes after the entry (the checkpoint that logged it completed).

    An ``entry_lsn`` that is ``NULL_LSN`` (no position in the log) is a
    ``ValueError``.
    """
    raise NotImplementedError("exercise 10a: implement is_provisional (see exercises/10a_provisional/README.md)")


def highest_flush_levels(dirty: list[tuple[int, int, bool, bool]], root_levels: dict[int, int],
                         flush_all: bool = False) -> dict[int, int]:
    """The highest flush level of each database, from the dirty INs of a checkpoint's dirty map.

    ``dirty`` holds one ``(db_id, level, is_bin, is_root)`` per dirty IN;
    ``root_levels`` maps each database id to the level of its tree's root.
    Each dirty IN asks for a level:

    - a BIN that is not the root: the level above it (its parent must be
      logged, so the BIN itself can be logged provisionally);
    - any other IN (an upper IN, or a root): its own level;
    - with ``flush_all`` (minimize_recovery_time): its database's root level.

    A database's highest flush level is the largest level its dirty INs ask
    for. Databases without dirty INs are not in the result.
    """
    raise NotImplementedError("exercise 10a: implement highest_flush_levels (see exercises/10a_provisional/README.md)")
