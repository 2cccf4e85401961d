"""Exercise 02a, reference: minidb's own answer (not a second implementation).

``place_record`` is :func:`minidb.pagestore.pages.slotted.place_record`,
which ``SlottedPage._place`` in ``minidb/pagestore/pages/slotted.py`` calls
for every insert into a slotted page (forward, redo and undo: the one place
the engine decides where a record goes).
"""

from __future__ import annotations

from minidb.pagestore.pages.slotted import place_record as _place_record


def place_record(slots, space, length, user, slot=None):
    return tuple(_place_record(slots, space, length, user, slot))
