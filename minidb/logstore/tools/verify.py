"""Checks of an environment: tree structure, utilization, the records it holds.

- :func:`verify_tree`: every tree is a B+tree: levels go down by one, slot
  keys are strictly increasing, every child's key range is its parent slot's
  range and its keys lie within it (so a search finds every record), node
  ids match their slots. A problem names the tree, the node, its LSN and its
  keys, e.g. ``accounts BIN 6 at 0x1/0x4b1: slot 1 key b'k1' is not above
  slot 0 key b'k2'; keys [b'k2', b'k1', b'k3']``.
- :func:`verify_log_trees`: the same checks, read only, on the trees of the
  last checkpoint (``minidb verify DIR`` on a log store).
- :func:`record_reference_problems` (run by both): every record a BIN
  slot refers to (not a known deletion) is an LN of the kind its database
  holds, not erased (``accounts BIN 6 slot 0 refers to the erased entry at
  0x1/0x3c0: its data is gone``) and not an entry of another type (``...
  refers to a Commit entry at 0x1/0x2e0, not a DEL_LN or ...``).
- :func:`live_but_obsolete`: no entry the trees use is counted obsolete by
  the utilization tracker. This is the invariant the JE documentation's third
  BEFORE_CKPT_END case breaks: a cleaner trusting the counts would delete a
  file that still holds a live node.
- :func:`utilization_totals_problems`: the tracker's entry and byte totals
  per file equal what a scan of the log finds (a caller checking many
  crash images of one history keeps the scans by the files' bytes, so each
  check scans only the files that changed).
- :func:`records`: the records of every user database (no transaction).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from minidb.io import Disk
from minidb.log import LSN, LogManager, Provisional
from minidb.log.types import type_by_code, type_by_name
from minidb.logstore.cleaner.utilization import file_key
from minidb.logstore.eraser.state import erasing_of
from minidb.logstore.errors import EnvironmentFailureError, LogFileNotFound, TreeError
from minidb.logstore.logdef import CKPT_END, ERASABLE_TYPES, IN_TYPES, recovery_start
from minidb.logstore.mapping_tree import MAPPING_DB_ID, UTILIZATION_DB_ID, ln_types_of
from minidb.logstore.tools.inspect import NodeView, TreeView, live_lsns, logged_tree_view, tree_names, tree_view
from minidb.logstore.tree.in_node import key_order_problem
from minidb.logstore.tree.ln import fetch_ln

if TYPE_CHECKING:
    from minidb.logstore.env import Environment


def _check_node(node: NodeView, low: bytes, high: bytes | None, where: str, problems: list[str]) -> None:
    label = f"{where} {node.label} at {node.lsn}"
    if node.id_key != low:
        problems.append(f"{label}: low bound {node.id_key!r}, but its parent slot starts at {low!r}")
    if node.high_key != high:
        problems.append(f"{label}: high bound {node.high_key!r}, but its parent slot ends at {high!r}")
    keys = list(node.keys)
    problem = key_order_problem(keys, low, high)  # the parent's bounds: each child lies within them
    if problem is not None:
        problems.append(f"{label}: {problem}; keys {keys!r}")
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
    for name in tree_names(env):
        view = _checked_view(partial(tree_view, env, name), name, problems)
        if view is not None:
            problems += record_reference_problems(env.log, view)
    return problems


def record_reference_problems(log: LogManager, view: TreeView) -> list[str]:
    """Slots of ``view``'s BINs that refer to an erased entry, an entry in a deleted file, or an entry that is
    not their kind of LN."""
    problems = []
    # Records of a deleted file in _utilization are dead: recovery drops them by key, unread (a file's own
    # summaries lie in it), so the check passes over them as well.
    dead_below = file_key(log.head) if view.db_id == UTILIZATION_DB_ID else b""
    for node in view.nodes():
        if not node.is_bin:  # an IN's slots refer to nodes, not records
            continue
        for index, (key, lsn, deleted) in enumerate(zip(node.keys, node.slot_lsns, node.known_deleted, strict=True)):
            if not deleted and not key < dead_below:
                try:
                    fetch_ln(log, lsn, ln_types_of(view.db_id), f"{view.db_name} {node.label} slot {index}")
                except (EnvironmentFailureError, LogFileNotFound, TreeError) as e:
                    problems.append(str(e))
    return problems


def _checked_view(view_of: Callable[[], TreeView], name: str, problems: list[str]) -> TreeView | None:
    """The tree ``view_of`` reads, its problems added to ``problems`` (None: it cannot be read)."""
    try:
        view = view_of()
    except TreeError as e:  # a node read from the log is not a node of this tree (e.g. its keys are out of order)
        problems.append(f"{name}: {e}")
        return None
    if view.root.level < 2:
        problems.append(f"{name}: the root is at level {view.root.level}")
    _check_node(view.root, b"", None, name, problems)
    return view


def erased_entry_rule(disk: Disk) -> Callable[[LSN, int, bool], str | None]:
    """Where the data eraser may have put an erased entry, for :func:`minidb.log.verify.verify_log`.

    Its original type must be one the eraser erases (a record's LN, an IN or BIN), and it must lie
    outside the recovery interval: never in the last file (the file being written) and never at or after
    the last CkptEnd's min(firstActiveLSN, CkptStart). The last CkptEnd is looked up once, at the first
    erased entry (a log without one has no place for an erased entry at all)."""
    erasable = {type_by_name(name).code for name in ERASABLE_TYPES}
    start: list[LSN | None] = []

    def problem(lsn: LSN, original: int, in_last_file: bool) -> str | None:
        if original not in erasable:
            was = type_by_code(original)
            return (f"erased entry at {lsn} was a {was.name if was else f'0x{original:02x}'} entry: the data eraser "
                    "erases only records' LNs and INs")
        if in_last_file:
            return f"erased entry at {lsn} in the last log file, the file being written: the data eraser never erases there"
        if not start:
            start.append(_recovery_start(disk))
        if start[0] is None or not lsn < start[0]:
            since = "the log has no CkptEnd" if start[0] is None else f"from {start[0]}"
            return f"erased entry at {lsn} inside the recovery interval ({since}): the data eraser never erases there"
        return None
    return problem


def _recovery_start(disk: Disk) -> LSN | None:
    """Where recovery starts reading, by the last CkptEnd: min(firstActiveLSN, CkptStart); None without one."""
    log = LogManager(disk, readonly=True, erasing=erasing_of(disk))
    try:
        ckpt_end = log.reader.last_of_type(CKPT_END.code)
    finally:
        log.close()
    return None if ckpt_end is None else recovery_start(ckpt_end.values)


def verify_log_trees(disk: Disk) -> list[str] | None:
    """The tree checks of :func:`verify_tree` on the trees of the last checkpoint, read only.

    This is what ``minidb verify DIR`` runs on a log store's directory: it
    opens no environment (which would recover and write a checkpoint); it
    reads the mapping tree whose root the last CkptEnd names, and every
    database root that tree records, from the log, with the INs that
    checkpoint logged non-provisionally put in place as recovery would (a
    checkpoint whose highest flush level is below a root logs no new root;
    its step 9 may then delete files that only the old root's slots name).
    None when the log holds no CkptEnd (not a log store's log, or one never
    checkpointed).
    """
    log = LogManager(disk, readonly=True, erasing=erasing_of(disk))
    try:
        ckpt_end = next((e for e in log.scan_backward() if e.type_name == "CkptEnd"), None)
        if ckpt_end is None:
            return None
        problems: list[str] = []
        replayed = {e.values["node_id"]: e.lsn for e in log.scan(ckpt_end.values["ckpt_start_lsn"], ckpt_end.lsn)
                    if e.type_name in IN_TYPES and e.provisional is Provisional.NO}
        mapping = _checked_view(partial(logged_tree_view, log, MAPPING_DB_ID, "_mapping", ckpt_end.values["root_lsn"],
                                        replayed), "_mapping", problems)
        if mapping is None:
            return problems
        mapping_problems = record_reference_problems(log, mapping)
        problems += mapping_problems
        for node in mapping.nodes() if not mapping_problems else ():
            for lsn in node.slot_lsns if node.is_bin else ():
                db = log.read(lsn).values  # a MapLN (checked above)
                if db["db_id"] != MAPPING_DB_ID and not db["root_lsn"].is_null:
                    view_of = partial(logged_tree_view, log, db["db_id"], db["name"], db["root_lsn"], replayed)
                    view = _checked_view(view_of, db["name"], problems)
                    problems += record_reference_problems(log, view) if view is not None else []
        return problems
    finally:
        log.close()


def live_but_obsolete(env: "Environment") -> list[str]:
    """Entries the trees use that the utilization tracker counts obsolete."""
    problems = []
    for lsn, what in sorted(live_lsns(env).items()):
        if env.utilization.is_obsolete(lsn):
            problems.append(f"{what} at {lsn} is in use but counted obsolete")
    return problems


def utilization_totals_problems(env: "Environment", scanned: dict[tuple[int, bytes], tuple[int, int]] | None = None
                                ) -> list[str]:
    """Per file, the tracker's entry count and bytes against a scan of the log.

    ``scanned``: what earlier checks found, (count, bytes) by file number and the file's bytes, kept by
    a caller that checks many environments sharing most of their files (a crash sweep's images): each
    file is then scanned on its own, once for each content it has, so a check costs the files that
    changed, not the whole log."""
    counts: dict[int, list[int] | tuple[int, int]] = {}
    if scanned is None:
        for entry in env.log.scan():
            pair = counts.setdefault(entry.lsn.file, [0, 0])
            pair[0] += 1
            pair[1] += entry.size
    else:
        for number in env.log.end().files:
            key = (number, env.log.reader.file_bytes(number))
            if key not in scanned:
                sizes = [entry.size for entry in env.log.scan(LSN(number, 0), LSN(number + 1, 0))]
                scanned[key] = (len(sizes), sum(sizes))
            if scanned[key][0]:
                counts[number] = scanned[key]
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


__all__ = ["verify_tree", "verify_log_trees", "record_reference_problems", "live_but_obsolete", "utilization_totals_problems", "records", "LSN"]
