"""Exercise 09a: where a full BIN of the log store's tree splits, and what its parent IN gets.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/09a_bin_split --exercise-impl=student
"""

from __future__ import annotations


def split_point(keys: list[bytes], parent_node_ids: list[int], node_id: int) -> tuple[int, bytes, int]:
    """How the overflowing BIN ``node_id`` with slot keys ``keys`` splits.

    ``parent_node_ids`` are the node ids its parent IN's slots name, in slot
    order. Return ``(mid, separator, parent_index)``: slots ``mid``,
    ``mid + 1``, ... move to the new right sibling; ``separator`` is the key
    of the parent's new slot for the sibling, inserted at ``parent_index``.
    """
    raise NotImplementedError("split_point: your code here")
