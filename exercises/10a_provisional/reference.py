"""Exercise 10a, reference: minidb's own answers (not a second implementation).

``is_provisional`` is :func:`minidb.logstore.checkpoint.provisional.is_provisional`,
which recovery calls for every IN it reads after CkptStart
(:mod:`minidb.logstore.recovery`). The flush level a dirty IN asks for is
:func:`minidb.logstore.checkpoint.provisional.flush_level_of`, which the dirty map applies
to every IN it adds while a checkpoint builds it (step 4); the highest per
database is what ``DirtyINMap.highest_flush_levels`` holds.
"""

from __future__ import annotations

from minidb.log import LSN, Provisional
from minidb.logstore.checkpoint.provisional import flush_level_of, is_provisional as _is_provisional


def is_provisional(entry_lsn: LSN, flag: Provisional, last_ckpt_end_lsn: LSN) -> bool:
    return _is_provisional(entry_lsn, flag, last_ckpt_end_lsn)


def highest_flush_levels(dirty: list[tuple[int, int, bool, bool]], root_levels: dict[int, int],
                         flush_all: bool = False) -> dict[int, int]:
    levels: dict[int, int] = {}
    for db_id, level, is_bin, is_root in dirty:
        asked = flush_level_of(level, is_bin, is_root, root_levels[db_id], flush_all)
        levels[db_id] = max(levels.get(db_id, 0), asked)
    return levels
