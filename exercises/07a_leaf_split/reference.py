"""Exercise 07a, reference: minidb's own answer (not a second implementation).

``leaf_split`` is :func:`minidb.pagestore.btree.btree.leaf_split`, which
``Tree._split`` in ``minidb/pagestore/btree/btree.py`` calls whenever a leaf
must split (the one place the engine chooses a leaf's split point).
"""

from __future__ import annotations

from minidb.pagestore.btree.btree import leaf_split as _leaf_split


def leaf_split(sort_keys: list[bytes], sizes: list[int], new_key: bytes, new_size: int,
               room: int) -> tuple[int, bytes]:
    return _leaf_split(sort_keys, sizes, new_key, new_size, room)
