"""Exercise 03a, reference: minidb's own answer (not a second implementation).

``pages_to_try`` is :func:`minidb.pagestore.volume.volpages.pages_to_try`,
which ``PageAllocation._free_for`` calls for every extent a page allocation
looks in (append, compact, a new extent); ``find_free_extents`` is
:func:`minidb.pagestore.volume.volextents.find_free_extents`, which
``ExtentAllocation._find_free_extents`` calls whenever a store needs new
extents (the one place the volume searches for free extents).
"""

from __future__ import annotations

from minidb.pagestore.volume.volextents import find_free_extents as _find_free_extents
from minidb.pagestore.volume.volpages import pages_to_try as _pages_to_try


def pages_to_try(mode: str, pmap: int, ext_sz: int) -> list[int]:
    return _pages_to_try(mode, pmap, ext_sz)


def find_free_extents(owners, start, count, may_take):
    return _find_free_extents(owners, start, count, may_take)
