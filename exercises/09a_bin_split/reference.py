"""Exercise 09a, reference: minidb's own answer (not a second implementation).

``split_point`` is :func:`minidb.logstore.tree.tree.split_point`, which
``Tree.split_if_needed`` calls for every split of a BIN or an upper IN.
"""

from __future__ import annotations

from minidb.logstore.tree.tree import split_point as _split_point


def split_point(keys: list[bytes], parent_node_ids: list[int], node_id: int) -> tuple[int, bytes, int]:
    return _split_point(keys, parent_node_ids, node_id)
