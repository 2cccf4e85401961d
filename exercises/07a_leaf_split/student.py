"""Exercise 07a: choose where a full B+tree leaf splits, and the separator its parent gets.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/07a_leaf_split --exercise-impl=student
"""

from __future__ import annotations


def leaf_split(sort_keys: list[bytes], sizes: list[int], new_key: bytes, new_size: int,
               room: int) -> tuple[int, bytes]:
    """Choose the split of a full leaf that must take one more entry.

    ``sort_keys[i]`` and ``sizes[i]`` describe the leaf's entry ``i`` (entries in
    sort-key order; a size is the bytes the entry takes on a page, its slot
    included). The new entry has sort key ``new_key`` (not among ``sort_keys``)
    and takes ``new_size`` bytes. A page holds at most ``room`` bytes of entries.

    Return ``(m, separator)``: entries ``m`` and after move to the new right
    page, the others stay; ``separator`` is the sort key the parent gets for
    the new page. See README.md for the rules the choice follows.
    """
    raise NotImplementedError("leaf_split: your code here")
