"""Boxes and the R*-tree's three decisions, as pure functions (the worked examples of box.py and rstar.py).

The choice of a subtree is asked through the engine's hook (``CHOOSE_SUBTREE.call``), as the tree asks it:
with ``MINIDB_IMPL=student:18a`` these tests judge a student's ``choose_subtree`` (exercise 18a).
"""

import random

import pytest

from minidb.pagestore import BadRequestError
from minidb.pagestore.rtree.box import Box, as_box, mbr
from minidb.pagestore.rtree.rstar import CHOOSE_SUBTREE, min_fill, pick_reinsert, reinsert_count, split


def test_box_measures_and_bytes_as_the_module_example_says():
    a, b = Box(0, 0, 4, 2), Box(3, 1, 5, 5)
    assert (a.area, a.margin) == (8, 6)
    assert a.union(b) == Box(0, 0, 5, 5) and a.union(b).area == 25
    assert a.overlap(b) == 1 and b.overlap(a) == 1
    assert a.pack().hex() == "00000000" "00000000" "04000000" "02000000"
    assert Box.unpack(Box(-5, -7, 2 ** 31 - 1, 0).pack()) == Box(-5, -7, 2 ** 31 - 1, 0)


def test_closed_boxes_that_touch_overlap_but_have_no_overlap_area():
    a, b = Box(0, 0, 2, 2), Box(2, 2, 3, 3)
    assert a.overlaps(b) and b.overlaps(a) and a.overlap(b) == 0
    assert not a.overlaps(Box(3, 0, 4, 2))
    assert a.covers(Box(0, 0, 2, 1)) and a.covers(a) and not Box(0, 0, 2, 1).covers(a)


@pytest.mark.parametrize("bad", [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1), "abcd", (0, 0, 2 ** 31, 0), (0.5, 0, 1, 1),
                                 (True, 0, 1, 1)])
def test_a_bad_box_is_a_user_error(bad):
    with pytest.raises(BadRequestError):
        as_box(bad)


def test_fill_and_reinsert_counts():
    assert [(m, min_fill(m), reinsert_count(m)) for m in (4, 6, 10, 12, 50)] == \
        [(4, 2, 1), (6, 2, 2), (10, 4, 3), (12, 4, 4), (50, 20, 15)]


def test_choose_subtree_above_the_leaves_takes_the_least_area_growth():
    boxes = [Box(0, 0, 10, 10), Box(20, 0, 22, 2)]
    assert CHOOSE_SUBTREE.call(boxes, Box(12, 0, 13, 1), children_are_leaves=False) == 1  # grows 12*2-4=20 < 3*10+..
    assert CHOOSE_SUBTREE.call(boxes, Box(5, 5, 6, 6), children_are_leaves=False) == 0  # no growth at all


def test_choose_subtree_over_leaves_takes_the_least_overlap_growth_even_at_more_area():
    # To take [6,1 7,2], B grows by 6 in area but then overlaps C by 2; C grows by 7 and overlaps nothing.
    a, b, c = Box(6, 9, 9, 12), Box(4, 3, 7, 7), Box(1, 2, 6, 3)
    new = Box(6, 1, 7, 2)
    assert CHOOSE_SUBTREE.call([a, b, c], new, children_are_leaves=False) == 1
    assert CHOOSE_SUBTREE.call([a, b, c], new, children_are_leaves=True) == 2


def test_choose_subtree_over_leaves_counts_the_growth_of_overlap_not_the_overlap_already_there():
    # [0,0 10,10] and [5,5 15,15] overlap by 25 already; [1,1 2,2] inside the first adds nothing to that,
    # while [30,0 32,2] stretched to it would come to overlap the first by 18 (less in all, but new).
    boxes = [Box(0, 0, 10, 10), Box(5, 5, 15, 15), Box(30, 0, 32, 2)]
    assert CHOOSE_SUBTREE.call(boxes, Box(1, 1, 2, 2), children_are_leaves=True) == 0


def test_choose_subtree_over_leaves_breaks_a_tie_of_overlap_by_area_growth_before_area():
    # Neither comes to overlap the other; the big near box grows by 8, the small far one (area 1) by 31.
    boxes = [Box(0, 0, 4, 4), Box(20, 0, 21, 1)]
    assert CHOOSE_SUBTREE.call(boxes, Box(5, 1, 6, 2), children_are_leaves=True) == 0


def test_choose_subtree_ties_go_to_the_smaller_area_then_the_first():
    boxes = [Box(0, 0, 10, 10), Box(0, 0, 5, 5), Box(0, 0, 5, 5)]
    assert CHOOSE_SUBTREE.call(boxes, Box(1, 1, 2, 2), children_are_leaves=False) == 1
    assert CHOOSE_SUBTREE.call(boxes, Box(1, 1, 2, 2), children_are_leaves=True) == 1


def test_split_worked_example_picks_the_y_axis_and_the_distribution_without_overlap():
    boxes = [Box(0, 0, 1, 1), Box(0, 10, 1, 11), Box(2, 1, 3, 2), Box(2, 9, 3, 12), Box(5, 0, 6, 1)]
    one, two = split(boxes, 2)
    assert (sorted(one), sorted(two)) == ([0, 2, 4], [1, 3])


@pytest.mark.parametrize("seed", range(20))
def test_split_groups_partition_the_entries_and_respect_the_least_fill(seed):
    rng = random.Random(seed)
    fanout = rng.choice([4, 5, 8, 12])
    boxes = [Box(x, y, x + rng.randrange(6), y + rng.randrange(6))
             for x, y in ((rng.randrange(50), rng.randrange(50)) for _ in range(fanout + 1))]
    one, two = split(boxes, min_fill(fanout))
    assert sorted(one + two) == list(range(fanout + 1))
    assert min(len(one), len(two)) >= min_fill(fanout)


def test_pick_reinsert_takes_the_farthest_and_returns_them_nearest_first():
    boxes = [Box(0, 0, 0, 0), Box(10, 10, 10, 10), Box(5, 5, 5, 5), Box(4, 5, 4, 5), Box(9, 9, 9, 9)]
    # the centre of the node's box is (5, 5): distances 50, 50, 0, 1, 32
    assert pick_reinsert(boxes, 3) == [4, 0, 1]
    assert pick_reinsert(boxes, 1) == [0]


def test_mbr():
    assert mbr([Box(0, 0, 1, 1), Box(-3, 4, -2, 9)]) == Box(-3, 0, 1, 9)
