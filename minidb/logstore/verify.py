"""Checks of an environment: tree structure, utilization, the records it holds.

- :func:`verify_tree`: every tree is a B+tree: levels go down by one, slots
  are sorted, every child's key range is its parent slot's range, every
  record key lies in its BIN's range, node ids match their slots.
- :func:`live_but_obsolete`: no entry the trees use is counted obsolete by
  the utilization tracker. This is the invariant the seed's third
  BEFORE_CKPT_END case breaks: a cleaner trusting the counts would delete a
  file that still holds a live node.
- :func:`utilization_totals_problems`: the tracker's entry and byte totals
  per file equal what a scan of the log finds.
- :func:`records`: the records of every user database (no transaction).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log import LSN
from minidb.logstore.inspect import NodeView, all_tree_views, live_lsns

if TYPE_CHECKING:
    from minidb.logstore.env import Environment


def _check_node(node: NodeView, low: bytes, high: bytes | None, where: str, problems: list[str]) -> None:
    label = f"{where} {node.label}"
    if node.id_key != low:
        problems.append(f"{label}: low bound {node.id_key!r}, but its parent slot starts at {low!r}")
    if node.high_key != high:
        problems.append(f"{label}: high bound {node.high_key!r}, but its parent slot ends at {high!r}")
    keys = list(node.keys)
    if keys != sorted(keys) or len(set(keys)) != len(keys):
        problems.append(f"{label}: slots are not sorted and distinct: {keys!r}")
    for key in keys:
        if key < low or (high is not None and key >= high):
            problems.append(f"{label}: key {key!r} outside its range [{low!r}, {high!r})")
    if node.is_bin:
        return
    if keys and keys[0] != low:
        problems.append(f"{label}: first slot key {keys[0]!r} is not its low bound {low!r}")
    for i, child in enumerate(node.children):
        if child.level != node.level - 1:
            problems.append(f"{label}: child {child.label} has level {child.level}")
        if child.node_id != node.child_ids[i]:
            problems.append(f"{label}: slot {i} names node {node.child_ids[i]}, holds {child.label}")
        child_high = keys[i + 1] if i + 1 < len(keys) else high
        _check_node(child, keys[i], child_high, where, problems)


def verify_tree(env: "Environment") -> list[str]:
    """Structural problems of every tree (an empty list when all is well)."""
    problems: list[str] = []
    for view in all_tree_views(env):
        if view.root.level < 2:
            problems.append(f"{view.db_name}: the root is at level {view.root.level}")
        _check_node(view.root, b"", None, view.db_name, problems)
    return problems


def live_but_obsolete(env: "Environment") -> list[str]:
    """Entries the trees use that the utilization tracker counts obsolete."""
    problems = []
    for lsn, what in sorted(live_lsns(env).items()):
        if env.utilization.is_obsolete(lsn):
            problems.append(f"{what} at {lsn} is in use but counted obsolete")
    return problems


def utilization_totals_problems(env: "Environment") -> list[str]:
    """Per file, the tracker's entry count and bytes against a scan of the log."""
    counts: dict[int, list[int]] = {}
    for entry in env.log.scan():
        pair = counts.setdefault(entry.lsn.file, [0, 0])
        pair[0] += 1
        pair[1] += entry.size
    problems = []
    for number, (count, size) in sorted(counts.items()):
        summary = env.utilization.files.get(number)
        if summary is None:
            problems.append(f"file {number}: {count} entries in the log, none tracked")
        elif (summary.total_count, summary.total_size) != (count, size):
            problems.append(f"file {number}: tracked {summary.total_count} entries / {summary.total_size} bytes, "
                            f"the log holds {count} / {size}")
        elif summary.obsolete_size > summary.total_size:
            problems.append(f"file {number}: more obsolete bytes than bytes")
    return problems


def records(env: "Environment") -> dict[str, dict[bytes, bytes]]:
    """Every user database's records, in key order."""
    return {name: dict(env.database(name, create=False).items()) for name in env.database_names()}


__all__ = ["verify_tree", "live_but_obsolete", "utilization_totals_problems", "records", "LSN"]
