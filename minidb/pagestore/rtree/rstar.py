"""The R*-tree's three decisions, as pure functions of boxes (Beckmann, Kriegel, Schneider, Seeger 1990).

An R-tree (Guttman) keeps a box per entry and, in each interior entry, the
box of its child, the union of the child's entries' boxes. Where an entry
goes, how a full node splits and what to do with a node that overflows
decide how much the boxes of a level overlap, and so how many paths a
search must follow. The R*-tree's answers, each here as a function that
sees only boxes (the tree, :mod:`minidb.pagestore.rtree.rtree`, applies
them to pages):

- :func:`choose_subtree`: in a node whose children are leaves, the child
  whose box's *overlap* with its siblings' boxes grows least by taking the
  new box; higher up, the child whose *area* grows least; ties by the
  smaller area, then the first.
- :func:`pick_reinsert`: the first time in one insertion that a node of a
  level overflows (not the root), *forced reinsertion*: the ``p`` entries
  (30% of the fanout) whose centres are farthest from the centre of the
  node's box leave it and are inserted again from the top, nearest first
  ("close reinsert"). Entries that made a node's box large find better
  homes, and a split is often avoided.
- :func:`split`: otherwise the node splits. For each axis, the entries are
  sorted by lower and by upper edge; each sort gives ``M - 2m + 2``
  distributions (the first ``m - 1 + k`` entries against the rest). The
  axis is the one whose distributions have the least *total margin*; on it,
  the distribution with the least *overlap* between the two groups' boxes,
  ties by the least total area, then the first.

``M`` is the fanout (a node's most entries) and ``m`` the least fill of a
node other than the root, 40% of ``M`` (at least 2), as the paper advises.

The tree asks :func:`choose_subtree` through the hook ``CHOOSE_SUBTREE``,
at the one place it decides (each level of an insertion's descent), so a
student's version (exercise 18a) can run inside the engine; the hook checks
only the answer's form, an entry's index, and the tests judge the choice.

Worked example (``m`` = 2): five boxes, three low and two high,
``[0,0 1,1]``, ``[0,10 1,11]``, ``[2,1 3,2]``, ``[2,9 3,12]``, ``[5,0 6,1]``.
On x the four distributions have a total margin of 116, on y 70: the axis
is y. Both y sorts give the same best distribution: the three low boxes
against the two high ones (no overlap, total area 21 where the other
distribution of that sort has 39).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from minidb import impl
from minidb.pagestore.rtree.box import Box, mbr


def min_fill(fanout: int) -> int:
    """``m``: 40% of the fanout, at least 2."""
    return max(2, (2 * fanout) // 5)


def reinsert_count(fanout: int) -> int:
    """``p``: 30% of the fanout, at least 1."""
    return max(1, (3 * fanout + 5) // 10)


def choose_subtree(boxes: Sequence[Box], new: Box, children_are_leaves: bool) -> int:
    """The index of the child (of a node whose entries' boxes are ``boxes``) that takes ``new``."""
    def area_growth(i: int) -> int:
        return boxes[i].union(new).area - boxes[i].area

    if not children_are_leaves:
        return min(range(len(boxes)), key=lambda i: (area_growth(i), boxes[i].area, i))

    def overlap_growth(i: int) -> int:
        grown = boxes[i].union(new)
        return sum(grown.overlap(b) - boxes[i].overlap(b) for j, b in enumerate(boxes) if j != i)

    return min(range(len(boxes)), key=lambda i: (overlap_growth(i), area_growth(i), boxes[i].area, i))


def _choose_from_exercise(hook: impl.Hook, student: Callable[..., Any]) -> Callable[..., int]:
    """A student's ``choose_subtree`` (exercise 18a has the engine's signature), its answer checked for form:
    the index of one of the node's entries (whether it is the best one, the R*-tree's tests judge)."""
    def choose(boxes: Sequence[Box], new: Box, children_are_leaves: bool) -> int:
        answer = student(list(boxes), new, children_are_leaves)
        if not isinstance(answer, int) or isinstance(answer, bool) or not 0 <= answer < len(boxes):
            raise hook.wrong(f"returned {answer!r}, not the index of one of the node's {len(boxes)} entries "
                             f"(0 to {len(boxes) - 1})")
        return answer
    return choose


#: where every descent of an insertion (:meth:`RTree._choose_path`) asks :func:`choose_subtree` (exercise 18a's hook)
CHOOSE_SUBTREE = impl.register("18a_choose_subtree", "choose_subtree", choose_subtree, _choose_from_exercise)


def pick_reinsert(boxes: Sequence[Box], p: int) -> list[int]:
    """The indexes of the ``p`` entries farthest from the centre of the node's box, nearest first (the
    order they are inserted again); ties by index."""
    cx, cy = mbr(boxes).center2()

    def distance(i: int) -> int:
        x, y = boxes[i].center2()
        return (x - cx) ** 2 + (y - cy) ** 2

    farthest = sorted(range(len(boxes)), key=lambda i: (-distance(i), i))[:p]
    return sorted(farthest, key=lambda i: (distance(i), i))


def split(boxes: Sequence[Box], m: int) -> tuple[list[int], list[int]]:
    """The R* split of an overflowing node's ``M + 1`` entries into two groups of at least ``m``: their
    indexes, each group in the order of the chosen sort."""
    n = len(boxes)
    if n < 2 * m:
        raise ValueError(f"{n} entries cannot make two groups of at least {m}")
    best_axis: tuple[int, list[list[int]]] | None = None
    for axis in (0, 1):
        lo = (lambda b: (b.xlo, b.xhi)) if axis == 0 else (lambda b: (b.ylo, b.yhi))
        hi = (lambda b: (b.xhi, b.xlo)) if axis == 0 else (lambda b: (b.yhi, b.ylo))
        sorts = [sorted(range(n), key=lambda i: (lo(boxes[i]), i)),
                 sorted(range(n), key=lambda i: (hi(boxes[i]), i))]
        margin = sum(a.margin + b.margin for order in sorts for a, b in _distributions(boxes, order, m))
        if best_axis is None or margin < best_axis[0]:
            best_axis = (margin, sorts)
    assert best_axis is not None
    best: tuple[tuple[int, int], list[int], list[int]] | None = None
    for order in best_axis[1]:
        for k, (a, b) in enumerate(_distributions(boxes, order, m), m):
            score = (a.overlap(b), a.area + b.area)
            if best is None or score < best[0]:
                best = (score, order[:k], order[k:])
    assert best is not None
    return best[1], best[2]


def _distributions(boxes: Sequence[Box], order: list[int], m: int) -> list[tuple[Box, Box]]:
    """The boxes of both groups of each distribution of ``order`` (the first k entries against the rest,
    k from m to n - m), from the running unions from the left and from the right."""
    n = len(order)
    left, right = [boxes[order[0]]], [boxes[order[-1]]]
    for i in range(1, n):
        left.append(left[-1].union(boxes[order[i]]))
        right.append(right[-1].union(boxes[order[n - 1 - i]]))
    return [(left[k - 1], right[n - k - 1]) for k in range(m, n - m + 1)]
