"""Exercise 18a: which child of an R*-tree node takes a new box (see README.md).

The measures the rule compares are computed here from the boxes themselves
(``grown``, ``overlap_growth``, ``area_growth``), the way README.md defines
them, so that a test can check an answer's properties on any node.
"""

from __future__ import annotations

import random

from minidb.pagestore import Box

# The README's worked example: A lies above, B in the middle, C low on the left; the new box sits below B.
A, B, C = Box(6, 9, 9, 12), Box(4, 3, 7, 7), Box(1, 2, 6, 3)
NEW = Box(6, 1, 7, 2)


def grown(box: Box, new: Box) -> Box:
    return Box(min(box.xlo, new.xlo), min(box.ylo, new.ylo), max(box.xhi, new.xhi), max(box.yhi, new.yhi))


def area_growth(boxes, i, new) -> int:
    return grown(boxes[i], new).area - boxes[i].area


def overlap_growth(boxes, i, new) -> int:
    return sum(grown(boxes[i], new).overlap(b) - boxes[i].overlap(b) for j, b in enumerate(boxes) if j != i)


def test_the_readme_worked_example(impl):
    assert impl.choose_subtree([A, B, C], NEW, True) == 2  # C: its overlap does not grow, B's grows by 2
    assert impl.choose_subtree([A, B, C], NEW, False) == 1  # B: its area grows by 6, C's by 7
    boxes = [A, B, C]  # the measures README.md quotes, so that they stay true
    assert [area_growth(boxes, i, NEW) for i in range(3)] == [24, 6, 7]
    assert [overlap_growth(boxes, i, NEW) for i in range(3)] == [4, 2, 0]


def test_a_box_inside_a_child_goes_to_that_child_at_every_level(impl):
    boxes = [Box(0, 0, 10, 10), Box(20, 20, 30, 30), Box(40, 0, 41, 1)]
    for leaves in (True, False):
        assert impl.choose_subtree(boxes, Box(22, 25, 23, 26), leaves) == 1
        assert impl.choose_subtree(boxes, Box(40, 0, 40, 0), leaves) == 2  # a point on a corner


def test_one_child_takes_everything(impl):
    for leaves in (True, False):
        assert impl.choose_subtree([Box(0, 0, 1, 1)], Box(50, 50, 60, 60), leaves) == 0


def test_above_the_leaves_overlap_does_not_count(impl):
    """Two levels above the leaves, the child whose area grows least wins, even if it comes to overlap its
    sibling: [6,0 8,6] grows by 18 to reach the new box and then overlaps [10,2 20,8] by 4; the sibling
    grows by 20 and overlaps nothing. Just above the leaves, the sibling wins."""
    boxes = [Box(6, 0, 8, 6), Box(10, 2, 20, 8)]
    new = Box(10, 0, 11, 1)
    assert impl.choose_subtree(boxes, new, False) == 0
    assert impl.choose_subtree(boxes, new, True) == 1
    assert [area_growth(boxes, i, new) for i in (0, 1)] == [18, 20]
    assert [overlap_growth(boxes, i, new) for i in (0, 1)] == [4, 0]


def test_over_leaves_what_counts_is_how_much_the_overlap_grows_not_how_much_there_is(impl):
    """[0,0 10,10] and [5,5 15,15] overlap already (25); a new box inside the first adds nothing to that,
    so it goes there, although [30,0 32,2] stretched to it would overlap less in total (18)."""
    boxes = [Box(0, 0, 10, 10), Box(5, 5, 15, 15), Box(30, 0, 32, 2)]
    assert impl.choose_subtree(boxes, Box(1, 1, 2, 2), True) == 0


def test_over_leaves_equal_overlap_growth_goes_to_the_least_area_growth(impl):
    """Neither child comes to overlap the other: the near big one grows by 8, the far small one by 31."""
    boxes = [Box(0, 0, 4, 4), Box(20, 0, 21, 1)]
    assert impl.choose_subtree(boxes, Box(5, 1, 6, 2), True) == 0


def test_ties_go_to_the_smaller_area_then_to_the_first(impl):
    boxes = [Box(0, 0, 10, 10), Box(0, 0, 5, 5), Box(0, 0, 5, 5)]  # all hold the new box: nothing grows
    for leaves in (True, False):
        assert impl.choose_subtree(boxes, Box(1, 1, 2, 2), leaves) == 1
    twins = [Box(0, 0, 2, 2), Box(4, 0, 6, 2)]  # a segment halfway: both grow by 2, neither meets the other
    for leaves in (True, False):
        assert impl.choose_subtree(twins, Box(3, 0, 3, 2), leaves) == 0


def test_the_boxes_are_left_as_they_were(impl):
    boxes = [A, B, C]
    impl.choose_subtree(boxes, NEW, True)
    assert boxes == [A, B, C]


def test_many_random_nodes_get_the_child_the_rule_names(impl):
    """On random nodes (small maps, so that ties are frequent): the answer is an entry's index, and no other
    entry is better by the rule of README.md, nor as good with a smaller index."""
    rng = random.Random(18)
    for _ in range(300):
        boxes = [random_box(rng, 12) for _ in range(rng.randrange(1, 9))]
        new, leaves = random_box(rng, 12), rng.random() < 0.5
        i = impl.choose_subtree(list(boxes), new, leaves)
        assert isinstance(i, int) and 0 <= i < len(boxes), (boxes, new, leaves, i)

        scores = [(overlap_growth(boxes, k, new) if leaves else area_growth(boxes, k, new),
                   area_growth(boxes, k, new), boxes[k].area, k) for k in range(len(boxes))]
        assert scores[i] == min(scores), (boxes, new, leaves, i)


def random_box(rng: random.Random, size: int) -> Box:
    x, y = rng.randrange(size), rng.randrange(size)
    return Box(x, y, x + rng.choice([0, 1, 2, 4]), y + rng.choice([0, 1, 3]))


# Typical wrong solutions; each must fail at least one test above (exercises/test_stubs_fail.py).
def _choose(boxes, new, leaves, *, first="rstar", tie="area", last=False):
    def overlap_after(k):
        return sum(grown(boxes[k], new).overlap(b) for j, b in enumerate(boxes) if j != k)

    def margin_growth(k):
        return grown(boxes[k], new).margin - boxes[k].margin

    measures = {"rstar": lambda k: overlap_growth(boxes, k, new) if leaves else area_growth(boxes, k, new),
                "area": lambda k: area_growth(boxes, k, new),
                "overlap": lambda k: overlap_growth(boxes, k, new),
                "margin": lambda k: margin_growth(k) if leaves else area_growth(boxes, k, new),
                "overlap_after": lambda k: overlap_after(k) if leaves else area_growth(boxes, k, new)}

    def key(k):
        ties = (area_growth(boxes, k, new), boxes[k].area) if tie == "area" else (boxes[k].area,)
        return (measures[first](k), *ties, -k if last else k)
    return min(range(len(boxes)), key=key)


MUTANTS = {
    "area_growth_at_the_leaf_level_too": {"choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, first="area")},
    "overlap_growth_at_every_level": {"choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, first="overlap")},
    "margin_growth_instead_of_overlap": {"choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, first="margin")},
    "the_overlap_after_not_its_growth": {
        "choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, first="overlap_after")},
    "ties_skip_the_area_growth": {"choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, tie="area_only")},
    "ties_go_to_the_last": {"choose_subtree": lambda b, n, leaves: _choose(b, n, leaves, last=True)},
}


# The boxes the tree hands over are its own (a named tuple with area, union and overlap): the stub imports them.
STUDENT_MAY_IMPORT = {"minidb.pagestore.rtree.box": ["Box"]}


def random_cases(rng):
    """For ``minidb grade``: random nodes of 1 to 8 entries on small maps (ties are frequent, a box is now and
    then repeated), one level above the leaves or higher, and a new box."""
    for _ in range(300):
        boxes = [random_box(rng, 12) for _ in range(rng.randrange(1, 9))]
        if len(boxes) > 1 and rng.random() < 0.2:
            boxes.append(rng.choice(boxes))
        yield "choose_subtree", (boxes, random_box(rng, 12), rng.random() < 0.5), {}
