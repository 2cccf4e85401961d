"""Provisional logging: which logged INs recovery replays (JE's ``Provisional``).

Recovery rebuilds the tree from the last checkpoint by replaying the INs
logged after its CkptStart, except *provisional* ones: a provisional IN is
reachable only through a parent logged after it, so replaying it on its own
would be wasted work at best, and at worst would bring back a node that
depends on a file the checkpoint let the cleaner delete. Three values:

``NO``               always replayed (when it follows the CkptStart);
``YES``              never replayed;
``BEFORE_CKPT_END``  provisional only if a CkptEnd follows it, i.e. only if
                     the checkpoint that logged it completed (and so logged
                     its parent non-provisionally, which recovery replays).

:func:`is_provisional` is JE's ``Provisional.isProvisional``; the JE documentation's
worked cases, with ``last_ckpt_end_lsn`` the CkptEnd recovery starts from::

    050 BIN-A   060 IN-B   100 CkptStart   200 BIN-A (BEFORE_CKPT_END)
    crash, no CkptEnd after 200:    is_provisional(200, BEFORE_CKPT_END, NULL or < 200) -> False
    CkptEnd at 500 after it:        is_provisional(200, BEFORE_CKPT_END, 500) -> True

:func:`flush_level_of` is the level a dirty IN asks the checkpoint to flush up
to (JE's ``updateFlushLevels``), which the dirty map applies to every IN it
takes: a database's *max flush level* is the highest any of its dirty INs
asks for. The checkpointer logs that level ``NO`` and every level below it
provisionally (:func:`~minidb.logstore.checkpoint.checkpointer.checkpoint_provisional`).
Recovery and exercise 10a use these two functions; they are not part of the
checkpointer.
"""

from __future__ import annotations

from minidb.log import LSN, Provisional

BIN_LEVEL = 1


def is_provisional(entry_lsn: LSN, flag: Provisional, last_ckpt_end_lsn: LSN) -> bool:
    """Does recovery treat the entry at ``entry_lsn`` as provisional (not replay it)?

    ``last_ckpt_end_lsn`` is the CkptEnd recovery starts from (NULL_LSN when
    the log holds none).
    """
    if entry_lsn.is_null:
        raise ValueError("an entry without an LSN cannot be judged")
    if flag is Provisional.NO:
        return False
    if flag is Provisional.YES:
        return True
    if flag is Provisional.BEFORE_CKPT_END:
        return not last_ckpt_end_lsn.is_null and entry_lsn < last_ckpt_end_lsn
    raise ValueError(f"not a provisional flag: {flag!r}")


def flush_level_of(level: int, is_bin: bool, is_root: bool, root_level: int, flush_all: bool) -> int:
    """The flush level a dirty IN asks for (JE's ``updateFlushLevels``).

    A BIN that is not the root asks for the level above it, so that the BIN
    can be logged provisionally and recovery never processes BINs; any other
    IN (an upper IN, a root) asks for its own level; with ``flush_all``
    (minimize_recovery_time) every IN asks for its tree's root level.
    """
    if flush_all:
        return root_level
    if is_bin and not is_root:
        return level + 1
    return level


__all__ = ["Provisional", "is_provisional", "flush_level_of", "BIN_LEVEL"]
