"""Exercise 11a, reference: minidb's own answer (not a second implementation).

``entry_verdict`` is :func:`minidb.logstore.cleaner.cleaner.entry_verdict`,
which the cleaner calls for every entry of a file it cleans, in one place:
``Cleaner._clean_entry`` (``minidb/logstore/cleaner/cleaner.py``), after
asking the tree for the entry's current LSN.
"""

from __future__ import annotations

from minidb.log import LSN
from minidb.logstore.cleaner.cleaner import (
    DEAD,
    IN_KIND,
    LIVE,
    LN_KIND,
    OBSOLETE,
    OTHER_KIND,
    entry_verdict as _entry_verdict,
)

__all__ = ["DEAD", "IN_KIND", "LIVE", "LN_KIND", "OBSOLETE", "OTHER_KIND", "entry_verdict"]


def entry_verdict(kind: str, lsn: LSN, current_lsn: LSN | None, *, counted_obsolete: bool = False,
                  db_exists: bool = True, known_deleted: bool = False) -> str:
    return _entry_verdict(kind, lsn, current_lsn, counted_obsolete=counted_obsolete, db_exists=db_exists,
                          known_deleted=known_deleted)
