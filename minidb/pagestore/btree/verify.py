"""Checking a B+tree's structure: what must hold after every operation, rollback and restart.

:func:`check_tree` walks the whole tree from its root (holding one SH latch
at a time: run it when no one changes the tree) and reports, for each page,
what breaks the invariants of :mod:`minidb.pagestore.btree.btree`:

- every page is a ``BTREE`` page of the tree's store, visited once;
- its entries are strictly sorted by sort key, and all lie within the
  bounds its parent's separators give it (``[s_i, s_i+1)``);
- each child is one level below its parent, so every leaf (level 1) is at
  the same depth;
- the leaves, in key order, are linked both ways: each leaf's ``next`` is
  the following leaf and ``prev`` the one before (0 at the ends);
- the page's free-space count agrees with its slots.

It returns the problems as text (empty: the tree is sound) and the entries
in key order, so a caller can compare them with a model.
"""

from __future__ import annotations

from typing import Any

from minidb.pagestore.btree.keyed import LEAF_LEVEL, KeyedPage
from minidb.pagestore.buffer.latch import SH
from minidb.pagestore.ids import PageId
from minidb.pagestore.pages.page import PageTag


def check_tree(bp: Any, root: PageId, unique: bool) -> tuple[list[str], list[tuple[bytes, bytes]]]:
    """(problems, the leaf entries in key order) of the B+tree rooted at ``root``."""
    problems: list[str] = []
    entries: list[tuple[bytes, bytes]] = []
    leaves: list[tuple[int, int, int]] = []  # (page, prev, next) in key order
    seen: set[int] = set()

    def visit(number: int, level: int | None, low: bytes | None, high: bytes | None) -> None:
        pid = PageId(root.vol, root.store, number)
        if number in seen:
            problems.append(f"{pid}: reached twice")
            return
        seen.add(number)
        page = bp.fix(pid, SH)
        try:
            if page.tag != PageTag.BTREE or page.pid != pid or page.nslots == 0:
                problems.append(f"{pid}: holds a {page.tag.name} page {page.pid}, not a keyed page of {root}")
                return
            kp = KeyedPage(page)
            if level is not None and kp.level != level:
                problems.append(f"{pid}: level {kp.level}, its parent says {level}")
            try:
                page.check_space()
            except AssertionError as e:
                problems.append(str(e))
            sks = kp.sks(unique)
            if any(a >= b for a, b in zip(sks, sks[1:], strict=False)):
                problems.append(f"{pid}: entries out of order")
            if sks and ((low is not None and sks[0] < low) or (high is not None and sks[-1] >= high)):
                problems.append(f"{pid}: entries outside the range its parent gives it")
            if kp.is_leaf:
                leaves.append((number, page.prev, page.next))
                entries.extend(kp.leaf(i) for i in range(kp.count))
                return
            children, level_below = kp.children(), kp.level - 1
        finally:
            bp.unfix(page)
        if level_below < LEAF_LEVEL:
            problems.append(f"{pid}: an interior page at level {level_below + 1}")
            return
        bounds = [low] + sks + [high]
        for i, child in enumerate(children):
            visit(child, level_below, bounds[i], bounds[i + 1])

    visit(root.page, None, None, None)
    for i, (number, prev, nxt) in enumerate(leaves):
        want_prev = leaves[i - 1][0] if i else 0
        want_next = leaves[i + 1][0] if i + 1 < len(leaves) else 0
        if (prev, nxt) != (want_prev, want_next):
            problems.append(f"{PageId(root.vol, root.store, number)}: leaf links prev {prev} next {nxt}, "
                            f"but the leaves around it are {want_prev} and {want_next}")
    return problems, entries
