"""Exercise 11a: the cleaner's live-or-obsolete decision for one logged entry.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/11a_live_or_obsolete --exercise-impl=student
"""

from __future__ import annotations

from minidb.log import LSN

LN_KIND, IN_KIND, OTHER_KIND = "LN", "IN", "other"
LIVE, OBSOLETE, DEAD = "live", "obsolete", "dead"


def entry_verdict(kind: str, lsn: LSN, current_lsn: LSN | None, *, counted_obsolete: bool = False,
                  db_exists: bool = True, known_deleted: bool = False) -> str:
    """``LIVE``, ``OBSOLETE`` or ``DEAD`` for the entry of ``kind`` logged at ``lsn``.

    ``current_lsn``: what the tree points at today (an LN's BIN slot, an IN's
    current version; None: nothing). ``counted_obsolete``: the utilization
    tracker counts the entry obsolete. ``db_exists``: its database still
    exists. ``known_deleted``: the record's slot is a known deletion.
    """
    raise NotImplementedError("exercise 11a: implement entry_verdict (see exercises/11a_live_or_obsolete/README.md)")
