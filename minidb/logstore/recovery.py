"""Recovery (JE's ``RecoveryManager``): the tree and the committed records, from the log.

Opening an environment runs recovery, whether the last run closed cleanly or
crashed; a clean close just leaves little to do. Its passes:

1. **Find the end of the log** (the shared log cuts a torn tail when it opens).
   Opening reads and checks the last file entry by entry to find its end;
   the environment opens its log keeping those checked entries
   (``keep_opening_scan``) and recovery takes them first thing
   (``LogManager.take_opening_scan``), before anything is written: the two
   reads below use them for the last file instead of reading and checking
   its bytes a second time (every checksum is computed once). The log refuses
   to write while they are still held, and the readers use them only while
   the log ends where opening found it.
2. **Find the last CkptEnd** (walking backward over the entry headers only:
   the next pass checks every entry walked past) and from it the checkpoint's
   CkptStart, firstActiveLSN and the mapping tree's root. Without one (a new
   environment, or a crash during the first checkpoint) everything starts at
   the beginning of the log.
3. **Read the log** once from min(firstActiveLSN, CkptStart) to the end, and
   sort the entries by kind (nodes, MapLNs, LNs, Commits; each list in LSN
   order, selected over the entries' type codes by ``itertools.compress``):
   every later pass walks only its own kind. Node ids are
   learned from the first bytes of IN and BIN items; a BIN's slots are
   decoded only if the BIN is replayed. The entries read are also kept per
   file as lists of LSNs, type codes and sizes (:class:`ScannedRun`; a size is
   the distance to the next entry), from which node sizes are noted and
   utilization is counted in bulk (pass 8). The data eraser never erases
   inside this interval, so an erased entry read here is corruption naming
   its file and offset, never skipped.
4. **The mapping tree**: replay its non-provisional INs from CkptStart, then
   its MapLNs; this gives every database and its root.
5. **The other trees**: replay non-provisional INs and BINs from CkptStart.
   An IN is provisional by :func:`~minidb.logstore.provisional.is_provisional`
   (BEFORE_CKPT_END only when the CkptEnd follows it). A root replaces the
   database's root if it is newer; any other IN replaces its parent's slot
   only if the logged LSN is newer than the slot's, and only if the logged
   key range is the slot's (a version logged after a split its parent does
   not know about cannot be placed: LN replay covers it).
6. **Redo LNs** from firstActiveLSN (the JE documentation: "Recovery will process LNs
   between the FirstActiveLSN and the end of the log"): those of committed
   transactions and those written without a transaction (and
   FileSummaryLNs). A slot takes the logged LSN if it is newer; a missing key
   is inserted (unless the LN is a deletion). Non-transactional LNs between
   firstActiveLSN and CkptStart are already in the checkpoint's BINs, but a
   deletion among them must be replayed after an older committed write of
   the same key that recovery redoes: the checkpoint's BIN may have
   compressed the deleted slot away, and the older write would come back.
   JE applies the LNs one at a time in log order, a search from the root for
   each (:meth:`RecoveryManager._redo_in_log_order`, kept as the reference).
   minidb gives the same slots **by key** (:meth:`RecoveryManager._redo_in_key_order`):
   it collects each key's LNs in log order, then takes the keys in order, one
   search per BIN for all the keys that fall in it; a key's LNs change its
   slot at most once, to the last that would have gone in (the new keys of a
   BIN go in together, ``BIN.insert_slots``; keys above all its slots, each
   written once, are appended column by column, ``BIN.append_slots``). An LN's
   database, key, data and replaced version come from its type's picker (the
   fields redo reads, checked as a decode checks them). A BIN this fills
   past its size is split in halves until it fits, each piece logged once.
   A crash during recovery is a crash like any other: the next recovery
   starts from the same CkptEnd, and the BINs this one logged (splits,
   provisional; evictions) hold only versions that redo puts back anyway.
7. **Undo losers**: the LNs of transactions that did not commit (aborted, or
   still active at the crash), newest first: a slot holding exactly that LSN
   goes back to the LN's abort LSN. Entries with the INVISIBLE flag (rolled
   back by a replication syncup) are skipped by redo, and an invisible Commit
   does not count: a rolled-back transaction is a loser. The losers' records stay locked from the
   redo pass until their undo, so that no BIN logged meanwhile (a split, an
   eviction) compresses a loser's deleted slot away.
8. **Utilization**: each file's last FileSummaryLN plus the entries after it
   (counted file by file with dictionary updates and sums,
   ``finish_recovery_in_runs``; one entry at a time, ``finish_recovery``, is
   the reference: ``RecoveryManager.count_in_runs = False``);
   the obsolete versions named by the replayed LNs are counted again, and
   those named by non-provisional INs when the recovered tree uses that IN's
   version (or a newer one).
9. **Finish with a checkpoint**, so the next recovery starts here. No other
   checkpoint runs while recovery does (not even by log growth: the
   utilization counts are not whole before pass 8).

Opening and recovery run with Python's cyclic garbage collector paused
(:func:`minidb.collector.collector_paused`): the entries read are tens of thousands of small
objects that live until recovery ends, and the collector would walk them all
again each time its allocation counters fill up.

Recovery hooks (``EnvironmentHooks.recovery_listeners``) see every entry from
CkptStart to the end of the log, in order (the VLSN index rebuilds its
recent mappings this way). Every pass is a phase of :class:`RecoveryInfo`,
which notebooks show step by step.

Example (the JE documentation's recovery period)::

    100 LN-A txn 1      firstActiveLSN = 100
    200 CkptStart
    300 BIN-B (YES)     provisional: not replayed
    350 IN-C (NO)       replayed: IN-C's slot in its parent -> 350
    400 CkptEnd
    450 Commit txn 1    -> txn 1 committed: LN-A at 100 is redone
    crash
"""

from __future__ import annotations

import bisect
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, itemgetter, sub
from typing import TYPE_CHECKING

from minidb.errors import LogCorruptionError, UserError
from minidb.log import LSN, NULL_LSN, LogEntry
from minidb.log.files import file_name
from minidb.log.header import ERASED_TYPE, INVISIBLE
from minidb.log.types import OWNER_CODES, known_types, type_by_code
from minidb.logstore.logdef import (BIN_ENTRY, CKPT_END, COMMIT, DEL_LN, DEL_LN_TX, FILE_SUMMARY_LN, IN_ENTRY, LN, LN_TX,
                                   MAP_LN, recovery_start)
from minidb.logstore.errors import EnvironmentKindError
from minidb.logstore.mapping_tree import MAPPING_DB_ID, UTILIZATION_DB_ID, UTILIZATION_DB_NAME, logged_kind
from minidb.logstore.provisional import is_provisional
from minidb.logstore.tree.cursor import Cursor
from minidb.logstore.tree.ln import AbortInfo, is_deletion, record_of
from minidb.logstore.utilization import ScannedRun, file_key

if TYPE_CHECKING:
    from minidb.logstore.database import DatabaseImpl
    from minidb.logstore.env import Environment


RECOVERY_LOCKER = 0  # transaction ids start at 1

_lsn_of = attrgetter("lsn")
_code_of = attrgetter("header.type_code")  # of an entry
_file_of, _offset_of = itemgetter(0), itemgetter(1)  # of an LSN

# Type codes (minidb.logstore.logdef) by which one pass sorts the entries read into the lists the
# later passes walk: each pass then looks only at its own kind of entry.
_NODE_CODES = frozenset({IN_ENTRY.code, BIN_ENTRY.code})
_TXN_LN_CODES = frozenset({LN_TX.code, DEL_LN_TX.code})
_REDO_CODES = frozenset({LN.code, DEL_LN.code, FILE_SUMMARY_LN.code}) | _TXN_LN_CODES  # what redo may replay
_SIZED_CODES = _NODE_CODES | _REDO_CODES | {MAP_LN.code}  # node entries: recovery notes their sizes
_MAP_LN_CODES, _COMMIT_CODES = frozenset({MAP_LN.code}), frozenset({COMMIT.code})

# An IN or BIN item starts with db_id (U32) and node_id (U64), little-endian (minidb.logstore.logdef):
# enough to learn node ids and to tell the mapping tree's nodes from the others without decoding
# the slots of every BIN read.
_NODE_HEAD = struct.Struct("<IQ")
_DELETION_CODES = frozenset({DEL_LN.code, DEL_LN_TX.code})
_DATA_CODES = frozenset({LN.code, LN_TX.code})  # a slot caches their data
_TXN_ID = struct.Struct("<q")


def _transactional_codes() -> frozenset[int]:
    """The type codes of the transactional entry types (those whose item starts with a txn id)."""
    return frozenset(t.code for t in known_types() if t.transactional)


# What redo replays: (database, key, entry, record, the entry's LSN), as RecoveryManager._redo_candidates
# gives it (the LSN again at hand: redo by key takes the LSNs of many keys without going back to their entries).
Redo = tuple["DatabaseImpl", bytes, LogEntry, object, LSN]
_record_of, _redo_lsn_of = itemgetter(3), itemgetter(4)  # of a Redo

# The fields redo reads of a record's LN (its picker's order); a deletion has no data.
_REDO_PICKS = {code: ("db_id", "key", "prev_lsn", "data") for code in _DATA_CODES}
_REDO_PICKS.update({code: ("db_id", "key", "prev_lsn") for code in _DELETION_CODES})


def _redo_pickers() -> dict[int, Callable[[bytes], tuple]]:
    """Type code -> the picker of the fields redo reads (built once per type, kept by its codec)."""
    return {code: type_by_code(code).codec.picker(picks) for code, picks in _REDO_PICKS.items()}


def node_head(entry: LogEntry) -> tuple[int, int]:
    """``(db_id, node_id)`` of an IN or BIN entry, from the first 12 bytes of its item.

    A short item is decoded in full instead, which names what is wrong."""
    if len(entry.item) < _NODE_HEAD.size:
        values = entry.values
        return values["db_id"], values["node_id"]
    return _NODE_HEAD.unpack_from(entry.item)


@dataclass
class RecoveryPhase:
    name: str
    lines: list[str] = field(default_factory=list)


@dataclass
class RecoveryInfo:
    """What recovery found and did."""

    end_of_log: LSN = NULL_LSN  # where the log ended when opened, before recovery wrote anything
    tail_cut: str | None = None
    last_ckpt_end: LSN = NULL_LSN
    last_ckpt_start: LSN = NULL_LSN
    first_active_lsn: LSN = NULL_LSN
    checkpoint_id: int = 0
    scan_start: LSN = NULL_LSN
    entries_read: int = 0
    ins_replayed: int = 0
    ins_provisional: int = 0
    ins_not_newer: int = 0
    ins_not_placed: int = 0
    map_lns_redone: int = 0
    lns_redone: int = 0
    lns_not_newer: int = 0
    lns_undone: int = 0
    committed: set[int] = field(default_factory=set)
    losers: set[int] = field(default_factory=set)
    phases: list[RecoveryPhase] = field(default_factory=list)

    def summary(self) -> str:
        where = (f"last CkptEnd {self.last_ckpt_end} (CkptStart {self.last_ckpt_start}, "
                 f"firstActiveLSN {self.first_active_lsn})" if not self.last_ckpt_end.is_null
                 else "no checkpoint: from the start of the log")
        return (f"recovery: log ends at {self.end_of_log}; {where}; read {self.entries_read} entries; "
                f"INs replayed {self.ins_replayed}, provisional {self.ins_provisional}, "
                f"not newer {self.ins_not_newer}, not placed {self.ins_not_placed}; "
                f"LNs redone {self.lns_redone}, undone {self.lns_undone}; "
                f"committed txns {sorted(self.committed)}, losers {sorted(self.losers)}")


# Entry owners whose entries never appear in a log store's log (the log's own and replication's do).
FOREIGN_OWNERS = ("pagestore", "generator")
_FOREIGN_CODES = {code: owner for owner in FOREIGN_OWNERS for code in range(256) if code in OWNER_CODES[owner]}


class RecoveryManager:
    def __init__(self, env: "Environment", phase_listener: Callable[[str, "Environment"], None] | None = None):
        self.env = env
        self.info = RecoveryInfo()
        self.phase_listener = phase_listener
        self.entries: list[LogEntry] = []
        # The same entries sorted by kind, each list in LSN order (see _sort_by_kind).
        self.nodes: list[LogEntry] = []  # INs and BINs
        self.map_lns: list[LogEntry] = []
        self.lns: list[LogEntry] = []  # what redo may replay: LNs, deletions, FileSummaryLNs
        self.commits: list[LogEntry] = []
        self.replayable_obsoletes: list[LogEntry] = []  # non-provisional INs naming obsolete versions
        self.counted_obsoletes: list[LogEntry] = []  # ... of which the recovered tree uses the version
        self.named_obsoletes = 0
        self.runs: list[ScannedRun] = []  # the entries read, per file (see _scanned_runs)

    # -- helpers -----------------------------------------------------------------------
    def _phase(self, name: str) -> RecoveryPhase:
        phase = RecoveryPhase(name)
        self.info.phases.append(phase)
        return phase

    def _say(self, phase: RecoveryPhase, message: str, *args: object) -> None:
        line = message % args if args else message
        phase.lines.append(line)
        self.env.trace.emit("recovery: %s: %s", phase.name, line)

    def _done(self, phase: RecoveryPhase) -> None:
        if self.phase_listener is not None:
            self.phase_listener(phase.name, self.env)

    @staticmethod
    def _from(entries: list[LogEntry], start: LSN) -> list[LogEntry]:
        """The entries at or after ``start`` (they are in LSN order: a binary search finds the first)."""
        return entries[bisect.bisect_left(entries, start, key=_lsn_of):]

    # -- the passes ---------------------------------------------------------------------
    def recover(self) -> RecoveryInfo:
        env, info = self.env, self.info
        log = env.log
        # The last file as opening the log checked it: taken before anything writes to the log (its
        # bytes must be the ones opening read), used by the two reads below, then dropped.
        checked = log.take_opening_scan()
        env.utilization.begin_recovery()
        info.end_of_log = log.end_lsn
        info.tail_cut = str(log.tail_cut) if log.tail_cut else None

        phase = self._phase("find the end of the log")
        self._say(phase, "the log ends at %s%s", info.end_of_log,
                  f"; opening cut a torn tail: {info.tail_cut}" if info.tail_cut else "")
        self._done(phase)

        phase = self._phase("find the last checkpoint")
        # Only headers are read on the way back: the forward read below checks every entry walked past.
        ckpt_end = log.reader.last_of_type(CKPT_END.code, checked)
        root_lsn = NULL_LSN
        if ckpt_end is not None:
            values = ckpt_end.values
            info.last_ckpt_end = ckpt_end.lsn
            info.last_ckpt_start = values["ckpt_start_lsn"]
            info.first_active_lsn = values["first_active_lsn"]
            info.checkpoint_id = values["checkpoint_id"]
            info.scan_start = recovery_start(values)
            root_lsn = values["root_lsn"]
            env.last_node_id = max(env.last_node_id, values["last_node_id"])
            env.db_tree.last_db_id = max(env.db_tree.last_db_id, values["last_db_id"])
            env.txn_manager.last_txn_id = max(env.txn_manager.last_txn_id, values["last_txn_id"])
            env.checkpointer.last_checkpoint_id = values["checkpoint_id"]
            env.checkpointer.last_ckpt_start = info.last_ckpt_start
            env.checkpointer.last_ckpt_end = info.last_ckpt_end
            self._say(phase, "CkptEnd %d at %s: CkptStart %s, firstActiveLSN %s, mapping tree root %s",
                      info.checkpoint_id, ckpt_end.lsn, info.last_ckpt_start, info.first_active_lsn, root_lsn)
        else:
            self._say(phase, "no CkptEnd in the log: recovery starts at its beginning")
        self._done(phase)

        phase = self._phase("read the log")
        self.entries = list(log.scan(None if info.scan_start.is_null else info.scan_start, checked=checked))
        del checked
        self.runs = self._scanned_runs()
        self._refuse_foreign_entries()
        self._refuse_erased_entries()
        self._sort_by_kind()
        self._refuse_the_other_kind(root_lsn, phase)
        info.entries_read = len(self.entries)
        if ckpt_end is None and self.entries:
            info.last_ckpt_start = info.first_active_lsn = info.scan_start = self.entries[0].lsn
        self._say(phase, "read %d entries from %s to %s", info.entries_read, info.scan_start, info.end_of_log)
        for listener in env.hooks.recovery_listeners:
            for entry in self._from(self.entries, info.last_ckpt_start):
                listener(entry)
        for done in env.hooks.recovery_read_done:
            done()
        self._done(phase)

        self._recover_mapping_tree(root_lsn)
        self._replay_ins()
        self._redo_and_undo_lns()
        self._recover_utilization()

        phase = self._phase("checkpoint")
        if env.read_only:
            self._say(phase, "read-only: no checkpoint (recovery wrote nothing)")
        else:
            result = env.checkpointer.run("recovery")
            self._say(phase, "recovery's checkpoint: CkptStart %s, CkptEnd %s", result.ckpt_start_lsn,
                      result.ckpt_end_lsn)
        self._done(phase)
        env.trace.emit("%s", info.summary())
        return info

    def _refuse_foreign_entries(self) -> None:
        """Another engine's log (a page store's, a generated one) is not an environment: change nothing."""
        if all(_FOREIGN_CODES.keys().isdisjoint(run.codes) for run in self.runs):
            return
        for entry in self.entries:
            owner = _FOREIGN_CODES.get(entry.header.type_code)
            if owner is not None:
                raise UserError(f"{self.env.where()} is not a log store environment: its log holds a "
                                f"{owner} entry ({entry.type_name} at {entry.lsn})")

    def _refuse_erased_entries(self) -> None:
        """The eraser never erases inside the recovery interval (the entries read here, from firstActiveLSN
        or CkptStart to the end, the file being written included): an erased entry here is corruption, never
        skipped (it could be a commit, or the version a BIN slot is replayed to)."""
        for run in self.runs:
            if ERASED_TYPE in run.codes:
                lsn = run.lsns[run.codes.index(ERASED_TYPE)]
                raise LogCorruptionError(file_name(lsn.file), lsn.offset,
                                         f"erased entry at {lsn} inside the recovery interval (from {self.info.scan_start}"
                                         "), where the data eraser never erases")

    def _refuse_the_other_kind(self, root_lsn: LSN, phase: RecoveryPhase) -> None:
        """A replicated environment opened as a plain one, or the reverse: refuse, having written nothing."""
        env = self.env
        replicated, evidence = self._recorded_kind(root_lsn)
        kind = {True: "a replicated environment", False: "a plain (not replicated) environment"}
        if replicated is None:
            logged = any(e.header.type_code not in OWNER_CODES["log"] for e in self.entries)
            what = "an environment whose log does not tell its kind" if logged else "a new environment"
            self._say(phase, "%s: it opens as %s", what, kind[env.config.replicated])
            return
        self._say(phase, "%s: %s", kind[replicated], evidence)
        if replicated != env.config.replicated:
            use, not_use = (("ReplicatedEnvironment.open", "Environment.open") if replicated
                            else ("Environment.open", "ReplicatedEnvironment.open"))
            raise EnvironmentKindError(f"{env.where()} is {kind[replicated]} ({evidence}): open it with {use}, "
                                       f"not {not_use}; nothing was written")

    def _recorded_kind(self, root_lsn: LSN) -> tuple[bool | None, str]:
        """Replicated or not, as the log tells it, and how it tells it (None: it does not)."""
        marker = None
        for entry in self.map_lns:  # newer than the checkpoint's mapping tree
            if entry.values["db_id"] == MAPPING_DB_ID:
                marker = entry
        if marker is None and not root_lsn.is_null:
            marker = logged_kind(self.env.log, root_lsn)
        if marker is not None:
            return marker.values["replicated"], f"the mapping tree's own MapLN at {marker.lsn} says so"
        # An environment from before the kind was recorded: what did it log?
        for entry in self.env.log.scan():
            if entry.vlsn is not None:
                return True, f"its log holds VLSNs: {entry.type_name} at {entry.lsn} has VLSN {entry.vlsn}"
            if entry.type_name == "MapLN" and not entry.values["internal"]:
                db, replicated = entry.values["name"], entry.values["replicated"]
                return replicated, f"its database {db!r} is {'' if replicated else 'not '}replicated (MapLN at {entry.lsn})"
        return None, ""

    def _sort_by_kind(self) -> None:
        """Sort the entries read by kind for the passes that follow (by their type codes), and learn ids.

        Node, database and transaction ids continue after the largest the log holds; the sizes of
        node entries are noted for counting them obsolete later. A node's id is read from the head
        of its item (:func:`node_head`): the slots of a BIN are decoded only if it is replayed.
        """
        env = self.env
        last_node_id, last_db_id, last_txn_id = env.last_node_id, env.db_tree.last_db_id, env.txn_manager.last_txn_id
        entries = self.entries
        codes = [code for run in self.runs for code in run.codes]  # of the entries, in order

        def of_kind(kind: frozenset[int]) -> Iterator[LogEntry]:
            """The entries whose type code is in ``kind``, in order (selected in C: no step per entry here)."""
            return compress(entries, map(kind.__contains__, codes))

        self.nodes += of_kind(_NODE_CODES)
        self.lns += of_kind(_REDO_CODES)
        self.map_lns += of_kind(_MAP_LN_CODES)
        self.commits += of_kind(_COMMIT_CODES)
        for entry in self.nodes:
            node_id = node_head(entry)[1]
            if node_id > last_node_id:
                last_node_id = node_id
        for entry in self.map_lns:
            last_db_id = max(last_db_id, entry.values["db_id"])
        for entry in of_kind(_transactional_codes()):
            item = entry.item  # a transactional item starts with its txn id (LogEntry.txn_id)
            txn_id = _TXN_ID.unpack_from(item)[0] if len(item) >= _TXN_ID.size else entry.txn_id
            if txn_id is not None and abs(txn_id) > last_txn_id:
                last_txn_id = abs(txn_id)  # internal: < 0
        for run in self.runs:
            env.utilization.note_sizes(compress(zip(run.lsns, run.sizes), map(_SIZED_CODES.__contains__, run.codes)))
        env.last_node_id, env.db_tree.last_db_id, env.txn_manager.last_txn_id = last_node_id, last_db_id, last_txn_id

    def _recover_mapping_tree(self, root_lsn: LSN) -> None:
        env, info = self.env, self.info
        mapping = env.db_tree.mapping
        phase = self._phase("mapping tree INs")
        mapping.root, mapping.root_lsn = None, root_lsn
        if root_lsn.is_null:
            mapping.tree.create_empty()
            self._say(phase, "no mapping tree root: a new, empty mapping tree")
        before = info.ins_replayed
        for entry in self._from(self.nodes, info.last_ckpt_start):
            if node_head(entry)[0] == MAPPING_DB_ID:
                self._replay_in(entry, phase)
        self._say(phase, "replayed %d INs of the mapping tree", info.ins_replayed - before)
        self._keep_counted_obsoletes()
        self._done(phase)

        phase = self._phase("MapLNs")
        for entry in self._from(self.map_lns, info.last_ckpt_start):
            if self._redo_ln(mapping, entry.values["name"].encode("utf-8"), entry, record_of(entry)):
                info.map_lns_redone += 1
            env.utilization.count_obsolete(entry.values["prev_lsn"])
        env.db_tree.load_from_mapping_tree()
        if env.db_tree.replicated is None and not env.read_only:
            lsn = env.db_tree.record_kind(env.config.replicated)
            self._say(phase, "recorded the environment's kind (replicated: %s) in the mapping tree's own MapLN at %s",
                      str(env.config.replicated).lower(), lsn)
        for impl in list(env.db_tree.by_id.values()):
            if impl.id != MAPPING_DB_ID and impl.root_lsn.is_null:
                impl.tree.create_empty()
        if env.db_tree.get(UTILIZATION_DB_NAME) is None:
            env.db_tree.create(UTILIZATION_DB_NAME, internal=True, db_id=UTILIZATION_DB_ID)
        self._say(phase, "redid %d MapLNs; databases: %s", info.map_lns_redone,
                  ", ".join(f"{n} (root {env.db_tree.get(n).root_lsn})" for n in env.db_tree.names(internal=True)))
        self._done(phase)

    def _replay_ins(self) -> None:
        info = self.info
        phase = self._phase("INs")
        before = (info.ins_replayed, info.ins_provisional, info.ins_not_newer, info.ins_not_placed)
        for entry in self._from(self.nodes, info.last_ckpt_start):
            if node_head(entry)[0] != MAPPING_DB_ID:
                self._replay_in(entry, phase)
        after = (info.ins_replayed, info.ins_provisional, info.ins_not_newer, info.ins_not_placed)
        replayed, provisional, not_newer, not_placed = (a - b for a, b in zip(after, before))
        self._say(phase, "replayed %d; skipped %d provisional, %d not newer than the tree, %d not placeable",
                  replayed, provisional, not_newer, not_placed)
        self._keep_counted_obsoletes()
        self._done(phase)

    def _keep_counted_obsoletes(self) -> None:
        """Right after an IN phase, before anything splits or logs a node: which replayed INs does the tree use?

        The old versions a logged IN names in its ``obsolete`` field are obsolete
        only if the recovered tree uses that logged version or a newer one from
        the log: an IN that recovery could not place (its parent never recorded
        it non-provisionally) made nothing obsolete.
        """
        for entry in self.replayable_obsoletes:
            version = self._version_in_tree(entry.values)
            if version is not None and version >= entry.lsn:
                self.counted_obsoletes.append(entry)
        self.replayable_obsoletes = []

    def _replay_in(self, entry: LogEntry, phase: RecoveryPhase) -> None:
        env, info = self.env, self.info
        if is_provisional(entry.lsn, entry.provisional, info.last_ckpt_end):
            info.ins_provisional += 1
            return  # its slots are never decoded
        values = entry.values
        if values["obsolete"]:
            self.replayable_obsoletes.append(entry)
            self.named_obsoletes += 1
        db = env.db_tree.get_by_id(values["db_id"])
        if db is None:
            info.ins_not_placed += 1
            return
        kind = entry.type_name
        if values["is_root"]:
            if db.root_lsn.is_null or entry.lsn > db.root_lsn:
                self._drop_subtree(db.root)
                db.root, db.root_lsn = None, entry.lsn
                info.ins_replayed += 1
                self._say(phase, "%s %d at %s is the new root of %s", kind, values["node_id"], entry.lsn, db.name)
                env.db_tree.modify_db_root(db)
            else:
                info.ins_not_newer += 1
            return
        parent, index, high = db.tree.find_parent(values["id_key"], values["level"], values["node_id"])
        logged_high = None if values["high_inf"] else values["high_key"]
        if parent is None or index is None or logged_high != high:
            info.ins_not_placed += 1
            return
        if entry.lsn > parent.lsns[index]:
            self._drop_subtree(parent.targets[index])
            parent.targets[index] = None
            parent.lsns[index] = entry.lsn
            parent.dirty = True
            info.ins_replayed += 1
            self._say(phase, "%s %d at %s replaces its slot in %s", kind, values["node_id"], entry.lsn,
                      parent.describe())
        else:
            info.ins_not_newer += 1

    def _version_in_tree(self, values: dict) -> LSN | None:
        """The LSN of the version of this IN that the recovered tree uses (None: the node is not in it)."""
        db = self.env.db_tree.get_by_id(values["db_id"])
        if db is None:
            return None
        root = db.tree.root_node()
        if root.node_id == values["node_id"]:
            return None if root.last_logged_lsn.is_null else root.last_logged_lsn
        parent, index, _ = db.tree.find_parent(values["id_key"], values["level"], values["node_id"])
        if parent is None or index is None:
            return None
        return parent.lsns[index]

    def _drop_subtree(self, node) -> None:
        """Forget a resident subtree that an older version of the log replaced."""
        if node is None:
            return
        stack = [node]
        while stack:
            current = stack.pop()
            stack.extend(current.resident_children())
            self.env.evictor.forget(current)

    def _redo_ln(self, db: "DatabaseImpl", key: bytes, entry: LogEntry, record) -> bool:
        """Put the LN in the tree if it is newer than the slot (JE's redo); True if it went in."""
        deleted = is_deletion(entry.type_name)
        bin_node = db.tree.search(key)
        index, exact = bin_node.find(key)
        if exact:
            if entry.lsn <= bin_node.lsns[index]:
                self.info.lns_not_newer += 1
                return False
            bin_node.update_slot(index, entry.lsn, deleted, record)
        elif deleted:
            return False
        else:
            bin_node.insert_slot(index, key, entry.lsn, False, record)
        bin_node.dirty = True
        if not exact:
            db.tree.split_if_needed(bin_node)
        return True

    def _redo_and_undo_lns(self) -> None:
        env, info = self.env, self.info
        phase = self._phase("transactions")
        txn_lns: dict[int, list[LogEntry]] = {}
        for entry in self._from(self.commits, info.first_active_lsn):
            if not entry.header.invisible:  # a rolled-back Commit never was
                info.committed.add(entry.txn_id)
        for entry in self._from(self.lns, info.first_active_lsn):
            if entry.header.type_code in _TXN_LN_CODES:
                txn_lns.setdefault(entry.txn_id, []).append(entry)
        info.losers = set(txn_lns) - info.committed
        # The losers' records stay locked until they are undone, so that no BIN compresses
        # their deleted slots away in the meantime (one owner for all: recovery itself).
        for txn_id in sorted(info.losers):
            for entry in txn_lns[txn_id]:
                db = env.db_tree.get_by_id(entry.values["db_id"])
                if db is not None:
                    env.locks.lock_write(db.id, db.name, entry.values["key"], RECOVERY_LOCKER)
        self._say(phase, "committed: %s; losers (aborted or active at the crash): %s",
                  sorted(info.committed & set(txn_lns)) or "none", sorted(info.losers) or "none")
        self._done(phase)

        phase = self._phase("redo LNs")
        if self.redo_in_key_order:
            self._redo_in_key_order()
        else:
            self._redo_in_log_order()
        self._say(phase, "redid %d LNs (%d not newer than the tree)", info.lns_redone, info.lns_not_newer)
        self._done(phase)

        phase = self._phase("undo losers")
        for entry in sorted((e for txn_id in info.losers for e in txn_lns[txn_id]), key=_lsn_of, reverse=True):
            values = entry.values
            db = env.db_tree.get_by_id(values["db_id"])
            if db is None:
                continue
            abort = AbortInfo(values["abort_lsn"], values["abort_known_deleted"])
            if env.records.restore(db, values["key"], abort, only_if=entry.lsn):
                info.lns_undone += 1
            env.utilization.count_obsolete(entry.lsn)
            if values["prev_lsn"] != values["abort_lsn"]:
                env.utilization.count_obsolete(values["prev_lsn"])
            env.evictor.evict_to_budget()
        env.locks.release_all(RECOVERY_LOCKER)
        self._say(phase, "undid %d LNs of %d losers", info.lns_undone, len(info.losers))
        self._done(phase)

    # -- redo of LNs ---------------------------------------------------------------------
    #: True: redo each key once, in key order (:meth:`_redo_in_key_order`); False: the reference, one LN
    #: at a time in log order (:meth:`_redo_in_log_order`). Both leave the same slots (keys, LSNs,
    #: known-deleted flags, cached data) and the same counts; only the shape of the tree may differ.
    redo_in_key_order = True

    def _redo_candidates(self) -> Iterator[Redo]:
        """The LNs redo replays, in log order, each as ``(database, key, entry, record, lsn)`` (JE's rules, step 6).

        Those of committed transactions, those written without one and FileSummaryLNs; not the
        invisible ones (rolled back by a replication syncup), nor those of a database that is gone.
        ``record`` is what a slot caches for the LN (:func:`record_of`: the data, None for a deletion).
        A record's LN gives its fields through its type's picker (:meth:`Codec.picker
        <minidb.log.codec.Codec.picker>`: database, key, the version it replaces and the data, checked
        as a decode checks them, without the dict of every field). The versions they make obsolete are
        counted as they go by.
        """
        env, info = self.env, self.info
        count_obsolete = env.utilization.count_obsolete
        utilization_db = env.db_tree.get_by_id(UTILIZATION_DB_ID)
        db_by_id, committed = env.db_tree.by_id, info.committed
        pickers = _redo_pickers()
        for entry in self._from(self.lns, info.first_active_lsn):
            header = entry.header
            if header.flags & INVISIBLE:
                continue  # rolled back by a replication syncup: not part of the database any more
            code = header.type_code
            if code in _TXN_LN_CODES and entry.txn_id not in committed:
                continue
            if code in _DATA_CODES:
                db_id, key, prev, record = pickers[code](entry.item)
                db = db_by_id.get(db_id)
            elif code in _DELETION_CODES:
                db_id, key, prev = pickers[code](entry.item)
                db, record = db_by_id.get(db_id), None
            else:  # a FileSummaryLN: its slot caches its values
                values = entry.values
                db, key, prev, record = utilization_db, file_key(values["file_number"]), values["prev_lsn"], record_of(entry)
            if db is None:
                continue
            yield db, key, entry, record, entry.lsn
            if prev != NULL_LSN:  # (count_obsolete ignores it)
                count_obsolete(prev)
            if code in _DELETION_CODES:
                count_obsolete(entry.lsn)

    def _redo_in_log_order(self) -> None:
        """The reference redo: each LN in log order, a search from the root for each (JE's)."""
        info, evictor = self.info, self.env.evictor
        for db, key, entry, record, _ in self._redo_candidates():
            if self._redo_ln(db, key, entry, record):
                info.lns_redone += 1
            evictor.evict_to_budget()

    def _redo_in_key_order(self) -> None:
        """Redo by key: the same result as :meth:`_redo_in_log_order`, with one descent per BIN.

        A forward pass collects each key's chain of LNs (in log order). Then, per database, the
        keys are taken in order: one search finds the BIN of the first key and the bound below
        which every following key belongs to the same BIN (:meth:`Tree.search_with_high`), and
        each key's chain changes its slot at most once (:meth:`_redo_chain`). A BIN that the keys
        overfilled is then split in halves until every piece fits, each piece logged once
        (:meth:`Tree.split_until_fits`): one BIN takes all of its keys before anything is logged.
        """
        info, evictor = self.info, self.env.evictor
        databases: dict[int, "DatabaseImpl"] = {}
        # Per database, key -> its LN (as _redo_candidates gives it), or the list of its LNs once there
        # are two (most keys have one).
        chains: dict[int, dict[bytes, Redo | list[Redo]]] = {}
        chain_of: dict[bytes, Redo | list[Redo]] = {}
        last_db = None
        for redo in self._redo_candidates():
            db, key = redo[0], redo[1]
            if db is not last_db:
                last_db, databases[db.id] = db, db
                chain_of = chains.setdefault(db.id, {})
            chain = chain_of.get(key)
            if chain is None:
                chain_of[key] = redo
            elif type(chain) is list:
                chain.append(redo)
            else:
                chain_of[key] = [chain, redo]
        for db_id, chain_of in chains.items():
            tree = databases[db_id].tree
            keys = sorted(chain_of)
            i = 0
            while i < len(keys):
                bin_node, high = tree.search_with_high(keys[i])
                j = len(keys) if high is None else bisect.bisect_left(keys, high, i)  # the keys that go to it
                self._redo_into_bin(bin_node, keys[i:j], chain_of)
                i = j
                tree.split_until_fits(bin_node)
                evictor.evict_to_budget()

    #: True: keys above every slot of their BIN, each with one LN that is not a deletion (a BIN that
    #: redo fills from empty, the usual case), are appended in bulk (:meth:`_append_new_keys`);
    #: False: every key goes through :meth:`_redo_into_bin`'s loop, the reference.
    append_new_keys = True

    def _redo_into_bin(self, bin_node, keys: list[bytes], chain_of: dict) -> None:
        """Redo the chains of ``keys`` (sorted, all routed to ``bin_node``): each slot changes at most once.

        A key with a slot takes what :meth:`_redo_chain` says in place; the slots of new keys are found
        against the BIN as it was and go in together at the end (``BIN.insert_slots``, one pass over
        its lists instead of one insertion each). The usual new key has one LN: it goes in unless it is
        a deletion, which is :meth:`_redo_chain`'s answer for it, without the call.
        """
        if self.append_new_keys and self._append_new_keys(bin_node, keys, chain_of):
            return
        info = self.info
        slot_keys, slot_lsns = bin_node.keys, bin_node.lsns
        inserts: list[tuple[int, bytes, LSN, bool, object]] = []  # as BIN.insert_slots takes them
        changed = False
        for key in keys:
            chain = chain_of[key]
            index = bisect.bisect_left(slot_keys, key)
            if index < len(slot_keys) and slot_keys[index] == key:
                last = self._redo_chain(slot_lsns[index], chain if type(chain) is list else [chain])
                if last is not None:
                    entry = last[2]
                    bin_node.update_slot(index, entry.lsn, entry.header.type_code in _DELETION_CODES, last[3])
                    changed = True
            elif type(chain) is list:
                last = self._redo_chain(None, chain)
                if last is not None:
                    entry = last[2]
                    inserts.append((index, key, entry.lsn, entry.header.type_code in _DELETION_CODES, last[3]))
            elif chain[2].header.type_code not in _DELETION_CODES:
                inserts.append((index, key, chain[2].lsn, False, chain[3]))
                info.lns_redone += 1
        if inserts:
            bin_node.insert_slots(inserts)
        if inserts or changed:
            bin_node.dirty = True

    def _append_new_keys(self, bin_node, keys: list[bytes], chain_of: dict) -> bool:
        """:meth:`_redo_into_bin` for keys that all lie above the BIN's last slot (any key, if it has
        none), each with a chain of one LN that is not a deletion: their slots are the BIN's new last
        ones, in key order, made column by column (``BIN.append_slots``), with no search and no
        per-key step in Python. False (nothing done) if the keys are not all such.
        """
        if not keys or (bin_node.keys and keys[0] <= bin_node.keys[-1]):
            return False
        chains = list(map(chain_of.__getitem__, keys))
        if list in set(map(type, chains)):
            return False  # a key with several LNs
        records = list(map(_record_of, chains))
        if None in records:
            return False  # a deletion (the only LN whose record is None)
        bin_node.append_slots(keys, list(map(_redo_lsn_of, chains)), [False] * len(keys), records)
        bin_node.dirty = True
        self.info.lns_redone += len(keys)
        return True

    def _redo_chain(self, slot_lsn: LSN | None, chain: list[Redo]) -> Redo | None:
        """Redo one key's LNs (in log order) as :meth:`_redo_ln` would one by one: the LN the slot ends with.

        ``slot_lsn`` is the slot's LSN, None if the key has no slot. Each LN goes in if it is newer than
        the slot; with no slot yet, a deletion changes nothing and a write inserts it. The last LN that
        went in is what the slot ends with; None if none did (the slot does not change).
        """
        info = self.info
        last = None
        for redo in chain:
            entry = redo[2]
            if slot_lsn is None:
                if entry.header.type_code in _DELETION_CODES:
                    continue
            elif entry.lsn <= slot_lsn:
                info.lns_not_newer += 1
                continue
            slot_lsn, last = entry.lsn, redo
            info.lns_redone += 1
        return last

    #: True: utilization counts the entries read file by file, in bulk (:meth:`_scanned_runs`,
    #: ``finish_recovery_in_runs``); False: the reference, entry by entry (``finish_recovery``).
    count_in_runs = True

    def _scanned_runs(self) -> list[ScannedRun]:
        """The entries read, per file: LSNs, type codes, and sizes as the distances between them.

        A scan reads a file's entries back to back, so an entry's size is where the next one starts
        minus where it starts; only the last of each file asks its header."""
        entries = self.entries
        lsns = list(map(_lsn_of, entries))
        codes = list(map(_code_of, entries))
        runs = []
        i = 0
        while i < len(entries):
            number = lsns[i].file
            j = bisect.bisect_right(lsns, number, lo=i, key=_file_of)
            offsets = list(map(_offset_of, lsns[i:j]))
            sizes = list(map(sub, offsets[1:], offsets[:-1]))
            sizes.append(entries[j - 1].size)
            runs.append(ScannedRun(number, lsns[i:j], sizes, codes[i:j]))
            i = j
        return runs

    def _recover_utilization(self) -> None:
        env = self.env
        phase = self._phase("utilization")
        db = env.db_tree.utilization
        summaries = []
        cursor = Cursor(env, db, None)
        item = cursor.seek(b"")
        while item is not None:
            summaries.append((item[1], cursor.lsn()))
            item = cursor.next()
        for entry in self.counted_obsoletes:
            for old in entry.values["obsolete"]:
                env.utilization.count_obsolete(old["lsn"])
        self._say(phase, "counted the obsolete versions named by %d of %d non-provisional INs (those the tree uses)",
                  len(self.counted_obsoletes), self.named_obsoletes)
        if self.count_in_runs:
            env.utilization.finish_recovery_in_runs(summaries, self.runs)
        else:
            env.utilization.finish_recovery(summaries, [(e.lsn, e.size, e.type_name) for e in self.entries])
        self._say(phase, "%d files: %s", len(env.utilization.files),
                  "; ".join(str(s) for s in env.utilization.report()))
        self._done(phase)


__all__ = ["RecoveryManager", "RecoveryInfo", "RecoveryPhase"]
