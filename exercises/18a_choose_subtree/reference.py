"""Exercise 18a, reference: minidb's own answer (not a second implementation).

``choose_subtree`` is :func:`minidb.pagestore.rtree.rstar.choose_subtree`,
which ``RTree._choose_path`` (``minidb/pagestore/rtree/rtree.py``) calls at
every level of an insertion's descent.
"""

from __future__ import annotations

from minidb.pagestore.rtree.box import Box
from minidb.pagestore.rtree.rstar import choose_subtree as _choose_subtree


def choose_subtree(boxes: list[Box], new: Box, children_are_leaves: bool) -> int:
    return _choose_subtree(boxes, new, children_are_leaves)
