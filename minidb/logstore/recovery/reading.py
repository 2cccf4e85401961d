"""Recovery's read of the log: the entries since the checkpoint, refused if they cannot be this environment's.

Recovery reads the log once, forward, from min(firstActiveLSN, CkptStart)
of the last CkptEnd to its end, and sorts what it read by kind
(:class:`LogRead`): the nodes (INs and BINs), the MapLNs, the LNs redo may
replay (records, deletions, FileSummaryLNs) and the Commits, each list in LSN
order, so that every later pass walks only its own kind and finds where it
starts by a binary search (:func:`entries_from`).

Before anything is replayed, the read is checked; each refusal changes nothing:

- an entry of another engine (a page store's, a generated log) means this is
  not a log store environment (a :class:`~minidb.errors.UserError`);
- an erased entry is corruption naming its file and offset: the data eraser
  never erases inside the recovery interval, so it is never skipped (it could
  be a Commit, or the version a slot is replayed to);
- a replicated environment opened as a plain one, or the reverse, is an
  :class:`~minidb.logstore.errors.EnvironmentKindError` (the kind is the
  mapping tree's own MapLN, :mod:`minidb.logstore.mapping_tree`).

The read also continues the id counters after the largest node, database
and transaction ids the log holds (:func:`learn_ids`), and notes the sizes of
node entries, for counting them obsolete later.
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb.errors import LogCorruptionError, UserError
from minidb.log.files import file_name
from minidb.log.types import OWNER_CODES
from minidb.logstore.errors import EnvironmentKindError
from minidb.logstore.logdef import (
    BIN_ENTRY,
    COMMIT,
    DEL_LN,
    DEL_LN_TX,
    FILE_SUMMARY_LN,
    IN_ENTRY,
    LN,
    LN_TX,
    MAP_LN,
    OLD_FILE_SUMMARY_LN,
)
from minidb.logstore.mapping_tree import MAPPING_DB_ID, logged_kind

if TYPE_CHECKING:
    from minidb.log import LSN, LogEntry
    from minidb.logstore.recovery.parts import Parts


NODE_CODES = frozenset({IN_ENTRY.code, BIN_ENTRY.code})
TXN_LN_CODES = frozenset({LN_TX.code, DEL_LN_TX.code})
REDO_CODES = frozenset({LN.code, DEL_LN.code, FILE_SUMMARY_LN.code, OLD_FILE_SUMMARY_LN.code}) | TXN_LN_CODES  # what redo may replay
SIZED_CODES = NODE_CODES | REDO_CODES | {MAP_LN.code}  # node entries: recovery notes their sizes

# An IN or BIN item starts with db_id (U32) and node_id (U64), little-endian (minidb.logstore.logdef):
# enough to learn node ids and to tell the mapping tree's nodes from the others without decoding
# the slots of every BIN read.
NODE_HEAD = struct.Struct("<IQ")

# Entry owners whose entries never appear in a log store's log (the log's own and replication's do).
FOREIGN_OWNERS = ("pagestore", "generator")
FOREIGN_CODES = {code: owner for owner in FOREIGN_OWNERS for code in range(256) if code in OWNER_CODES[owner]}


def node_head(entry: LogEntry) -> tuple[int, int]:
    """``(db_id, node_id)`` of an IN or BIN entry, from the first 12 bytes of its item.

    A short item is decoded in full instead, which names what is wrong."""
    if len(entry.item) < NODE_HEAD.size:
        values = entry.values
        return values["db_id"], values["node_id"]
    return NODE_HEAD.unpack_from(entry.item)


def entries_from(entries: list[LogEntry], start: LSN) -> list[LogEntry]:
    """The entries at or after ``start`` (they are in LSN order: a binary search finds the first)."""
    return entries[bisect.bisect_left(entries, start, key=lambda entry: entry.lsn):]


@dataclass
class LogRead:
    """The entries recovery read, in LSN order, and the same entries sorted by kind (each list in LSN order)."""

    entries: list[LogEntry] = field(default_factory=list)
    nodes: list[LogEntry] = field(default_factory=list)  # INs and BINs
    map_lns: list[LogEntry] = field(default_factory=list)
    lns: list[LogEntry] = field(default_factory=list)  # what redo may replay: LNs, deletions, FileSummaryLNs
    commits: list[LogEntry] = field(default_factory=list)


def sort_by_kind(entries: list[LogEntry]) -> LogRead:
    """The entries read, and each kind apart, for the passes that follow."""
    read = LogRead(entries)
    for entry in entries:
        code = entry.header.type_code
        if code in NODE_CODES:
            read.nodes.append(entry)
        elif code in REDO_CODES:
            read.lns.append(entry)
        elif code == MAP_LN.code:
            read.map_lns.append(entry)
        elif code == COMMIT.code:
            read.commits.append(entry)
    return read


def learn_ids(parts: Parts, read: LogRead) -> None:
    """Node, database and transaction ids continue after the largest the log holds; node sizes are noted.

    A node's id is read from the head of its item (:func:`node_head`): the slots of a BIN are decoded
    only if it is replayed."""
    for entry in read.nodes:
        parts.core.note_node_id(node_head(entry)[1])
    for entry in read.map_lns:
        parts.db_tree.note_db_id(entry.values["db_id"])
    manager = parts.txn_manager
    for entry in read.entries:
        txn_id = entry.txn_id
        if txn_id is not None:
            manager.note_txn_id(txn_id)
        if entry.header.type_code in SIZED_CODES:
            parts.utilization.note_sizes([(entry.lsn, entry.size)])


def refuse_foreign_entries(parts: Parts, entries: list[LogEntry]) -> None:
    """Another engine's log (a page store's, a generated one) is not an environment: change nothing."""
    for entry in entries:
        owner = FOREIGN_CODES.get(entry.header.type_code)
        if owner is not None:
            raise UserError(f"{parts.core.where()} is not a log store environment: its log holds a "
                            f"{owner} entry ({entry.type_name} at {entry.lsn})")


def refuse_erased_entries(entries: list[LogEntry], scan_start: LSN) -> None:
    """The eraser never erases inside the recovery interval (the entries read, from firstActiveLSN or
    CkptStart to the end, the file being written included): an erased entry here is corruption, never
    skipped (it could be a commit, or the version a BIN slot is replayed to)."""
    for entry in entries:
        if entry.header.erased:
            lsn = entry.lsn
            raise LogCorruptionError(file_name(lsn.file), lsn.offset,
                                     f"erased entry at {lsn} inside the recovery interval (from {scan_start}"
                                     "), where the data eraser never erases")


KIND = {True: "a replicated environment", False: "a plain (not replicated) environment"}


def refuse_the_other_kind(parts: Parts, read: LogRead, root_lsn: LSN) -> str:
    """A replicated environment opened as a plain one, or the reverse: refuse, having written nothing.

    Returns the line recovery says about the environment's kind."""
    replicated, evidence = recorded_kind(parts, read, root_lsn)
    if replicated is None:
        logged = any(e.header.type_code not in OWNER_CODES["log"] for e in read.entries)
        what = "an environment whose log does not tell its kind" if logged else "a new environment"
        return f"{what}: it opens as {KIND[parts.core.config.replicated]}"
    if replicated != parts.core.config.replicated:
        use, not_use = (("ReplicatedEnvironment.open", "Environment.open") if replicated
                        else ("Environment.open", "ReplicatedEnvironment.open"))
        raise EnvironmentKindError(f"{parts.core.where()} is {KIND[replicated]} ({evidence}): open it with {use}, "
                                   f"not {not_use}; nothing was written")
    return f"{KIND[replicated]}: {evidence}"


def recorded_kind(parts: Parts, read: LogRead, root_lsn: LSN) -> tuple[bool | None, str]:
    """Replicated or not, as the log tells it, and how it tells it (None: it does not)."""
    marker = None
    for entry in read.map_lns:  # newer than the checkpoint's mapping tree
        if entry.values["db_id"] == MAPPING_DB_ID:
            marker = entry
    if marker is None and not root_lsn.is_null:
        marker = logged_kind(parts.core.log, root_lsn)
    if marker is not None:
        return marker.values["replicated"], f"the mapping tree's own MapLN at {marker.lsn} says so"
    # An environment from before the kind was recorded: what did it log?
    for entry in parts.core.log.scan():
        if entry.vlsn is not None:
            return True, f"its log holds VLSNs: {entry.type_name} at {entry.lsn} has VLSN {entry.vlsn}"
        if entry.type_name == "MapLN" and not entry.values["internal"]:
            db, replicated = entry.values["name"], entry.values["replicated"]
            return replicated, f"its database {db!r} is {'' if replicated else 'not '}replicated (MapLN at {entry.lsn})"
    return None, ""


__all__ = ["LogRead", "sort_by_kind", "learn_ids", "node_head", "entries_from", "refuse_foreign_entries",
           "refuse_erased_entries", "refuse_the_other_kind", "recorded_kind"]
