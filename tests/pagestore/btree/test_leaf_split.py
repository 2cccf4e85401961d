"""Where a full leaf splits: ``leaf_split`` (exercise 07a) and the engine's use of it."""

import pytest

from minidb.pagestore import PageId, check_tree
from minidb.pagestore.btree.btree import leaf_split
from minidb.pagestore.btree.keyed import KeyedPage
from minidb.pagestore.buffer.latch import SH

from tests.pagestore.sm_helpers import new_sm


def test_leaf_split_the_most_even_split_with_the_new_entry_on_its_side():
    keys = [bytes([k]) for k in range(1, 9)]
    assert leaf_split(keys, [50] * 8, b"\x09", 50, 442) == (4, b"\x05")  # 200 | 250 and 250 | 200: the first
    assert leaf_split(keys, [20] * 8, b"\x09", 98, 442) == (6, b"\x07")  # the big new entry weighs on the right
    with pytest.raises(ValueError, match="no split of 2 entries"):
        leaf_split(keys[:2], [300, 300], b"\x09", 200, 442)


def test_a_large_entry_arriving_at_a_full_leaf_of_small_ones_splits_it_evenly_by_bytes():
    """24 entries of 18 bytes fill a leaf; an entry of 104 bytes arrives at its right end. Counting it, the
    most even split keeps 15 entries on the left (270 | 162 + 104 bytes); halving the old entries would
    have kept 12 (216 | 216 + 104)."""
    sm = new_sm()
    with sm.transaction() as t:
        ix = sm.create_index(t, "i4")
        for k in range(1, 25):
            sm.index_insert(t, ix, k, b"e" * 8)
        sm.index_insert(t, ix, 1000, b"b" * 94)
    info = sm.indexes.index(ix)
    problems, found = check_tree(sm.bp, info.root, True)
    assert problems == [] and len(found) == 25
    root = sm.bp.fix(info.root, SH)
    try:
        children = KeyedPage(root).children()
    finally:
        sm.bp.unfix(root)
    counts = []
    for number in children:
        page = sm.bp.fix(PageId(info.root.vol, info.root.store, number), SH)
        counts.append(KeyedPage(page).count)
        sm.bp.unfix(page)
    assert counts == [15, 10]
