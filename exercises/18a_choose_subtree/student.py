"""Exercise 18a: which child of an R*-tree node takes a new box.

Read README.md in this directory first. Test your work with

    .venv/bin/python -m pytest exercises/18a_choose_subtree --exercise-impl=student
"""

from __future__ import annotations

from minidb.pagestore.rtree.box import Box


def choose_subtree(boxes: list[Box], new: Box, children_are_leaves: bool) -> int:
    """The index of the entry of a node, among the boxes ``boxes`` of its entries, whose child takes ``new``.

    ``children_are_leaves``: whether the node's children are leaves (the node is one level above them).
    ``boxes`` holds at least one box; do not change it. See README.md for the rule the choice follows.
    """
    raise NotImplementedError("choose_subtree: your code here")
