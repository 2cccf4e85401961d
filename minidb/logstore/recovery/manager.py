"""Recovery (JE's ``RecoveryManager``): the tree and the committed records, from the log.

Opening an environment runs recovery, whether the last run closed cleanly or
crashed; a clean close just leaves little to do. :meth:`RecoveryManager.recover`
names its passes:

1. **Find the end of the log**: the shared log cuts a torn tail when it opens.
2. **Find the last CkptEnd** (walking backward from the end) and from it the
   checkpoint's CkptStart, firstActiveLSN and the mapping tree's root.
   Without one (a new environment, or a crash during the first checkpoint)
   everything starts at the beginning of the log.
3. **Read the log** forward from min(firstActiveLSN, CkptStart) to the end,
   check it and sort it by kind (:mod:`.reading`). A checkpoint a hook says
   recovery may not use (``EnvironmentHooks.checkpoint_not_usable``) is
   passed over for the one before it, whose part of the log is read too, and
   so on; with none left, recovery reads the log from its start. (Replication
   says so of a checkpoint inside a syncup's rollback period: its tree may
   hold versions the rollback took back. The log store knows only that some
   checkpoints may not be used, not why.)
4. **The mapping tree**: replay its non-provisional INs from CkptStart, then
   redo its MapLNs; this gives every database and its root (:mod:`.trees`).
5. **The other trees**: replay non-provisional INs and BINs from CkptStart.
6. **Redo LNs** from firstActiveLSN, one at a time in log order, and
7. **undo the losers**, newest first (:mod:`.redo`).
8. **Utilization**: each file's FileSummaryLNs (redone in 6) merged (the
   union of their obsolete offsets, the newest's counts) plus the entries
   read after the newest, each counted as an appended entry is counted; the
   versions the redone LNs replaced are counted obsolete as they go by, and
   those named by the non-provisional INs the recovered tree uses.
9. **Finish with a checkpoint**, so the next recovery starts here. No other
   checkpoint runs while recovery does (not even by log growth: the
   utilization counts are not whole before pass 8).

Recovery hooks (``EnvironmentHooks.recovery_listeners``) see every entry from
CkptStart to the end of the log, in order (the VLSN index rebuilds its
recent mappings this way); ``recovery_read_done`` runs after pass 3, before
anything is written. Every pass is a phase of :class:`RecoveryInfo`, which
notebooks show step by step.

Example (the JE documentation's recovery period)::

    100 LN-A txn 1      firstActiveLSN = 100
    200 CkptStart
    300 BIN-B (YES)     provisional: not replayed
    350 IN-C (NO)       replayed: IN-C's slot in its parent -> 350
    400 CkptEnd
    450 Commit txn 1    -> txn 1 committed: LN-A at 100 is redone
    crash

What it leaves out: JE's recovery also redoes the removal and truncation of
whole databases; a minidb database is never removed, so no pass looks for
them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from minidb import impl
from minidb.log import LSN, NULL_LSN, LogEntry, LogManager
from minidb.logstore.cleaner.utilization import file_key
from minidb.logstore.logdef import CKPT_END, recovery_start
from minidb.logstore.mapping_tree import MAPPING_DB_ID, UTILIZATION_DB_ID, UTILIZATION_DB_NAME
from minidb.logstore.recovery import reading
from minidb.logstore.recovery.info import Phases, RecoveryInfo
from minidb.logstore.recovery.reading import LogRead, entries_from, node_head
from minidb.logstore.recovery.redo import find_losers, redo_ln, redo_lns, undo_losers
from minidb.logstore.recovery.trees import INReplay
from minidb.logstore.tree.cursor import Cursor
from minidb.logstore.tree.ln import record_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.io import Disk
    from minidb.logstore.recovery.parts import Parts


class RecoveryManager:
    """One recovery of one environment (see the module documentation)."""

    def __init__(self, parts: Parts, phase_listener: Callable[[str], None] | None = None):
        self.parts = parts
        self.info = RecoveryInfo()
        self.phases = Phases(parts.core.trace, self.info, phase_listener)
        self.read = LogRead()
        self.ins = INReplay(parts, self.info, lambda *line: None)

    @staticmethod
    def opening() -> AbstractContextManager[None]:
        """The block in which the environment opens its log (:meth:`open_log`) and recovers. Nothing
        surrounds it here; the accelerated twin pauses Python's cyclic collector for it (see
        :mod:`minidb.collector`)."""
        return nullcontext()

    @staticmethod
    def open_log(disk: "Disk", **options) -> LogManager:
        """The environment's log, opened: it finds its end, cutting a torn tail (pass 1)."""
        return LogManager(disk, **options)

    def recover(self) -> RecoveryInfo:
        ckpt_end = self.find_last_checkpoint()
        ckpt_end = self.read_the_log(ckpt_end)
        root_lsn = NULL_LSN if ckpt_end is None else ckpt_end.values["root_lsn"]
        self.recover_mapping_tree(root_lsn)
        self.replay_ins()
        self._redo_and_undo_lns()
        self.recover_utilization()
        self.finish_with_a_checkpoint()
        self.parts.core.trace.emit("%s", self.info.summary())
        return self.info

    # -- passes 1 and 2 -------------------------------------------------------------------
    def find_last_checkpoint(self) -> LogEntry | None:
        """The end of the log, then its last CkptEnd (None: there is none), whose values recovery takes."""
        parts, info, phases = self.parts, self.info, self.phases
        log = parts.core.log
        parts.utilization.begin_recovery()
        info.end_of_log = log.end_lsn
        info.tail_cut = str(log.tail_cut) if log.tail_cut else None
        phase = phases.begin("find the end of the log")
        phases.say(phase, "the log ends at %s%s", info.end_of_log,
                   f"; opening cut a torn tail: {info.tail_cut}" if info.tail_cut else "")
        phases.done(phase)

        phase = phases.begin("find the last checkpoint")
        ckpt_end = self.last_ckpt_end()
        if ckpt_end is not None:
            values = ckpt_end.values
            self.use_checkpoint(ckpt_end)
            parts.core.note_node_id(values["last_node_id"])
            parts.db_tree.note_db_id(values["last_db_id"])
            parts.txn_manager.note_txn_id(values["last_txn_id"])
            parts.checkpointer.continue_after(values["checkpoint_id"], info.last_ckpt_start, info.last_ckpt_end)
            phases.say(phase, "CkptEnd %d at %s: CkptStart %s, firstActiveLSN %s, mapping tree root %s",
                       info.checkpoint_id, ckpt_end.lsn, info.last_ckpt_start, info.first_active_lsn,
                       values["root_lsn"])
        else:
            phases.say(phase, "no CkptEnd in the log: recovery starts at its beginning")
        phases.done(phase)
        return ckpt_end

    def use_checkpoint(self, ckpt_end: LogEntry | None) -> None:
        """Recovery starts from ``ckpt_end``'s checkpoint (None: from the start of the log)."""
        info = self.info
        if ckpt_end is None:
            info.last_ckpt_end = info.last_ckpt_start = info.first_active_lsn = info.scan_start = NULL_LSN
            info.checkpoint_id = 0
            return
        values = ckpt_end.values
        info.last_ckpt_end = ckpt_end.lsn
        info.last_ckpt_start = values["ckpt_start_lsn"]
        info.first_active_lsn = values["first_active_lsn"]
        info.checkpoint_id = values["checkpoint_id"]
        info.scan_start = recovery_start(values)

    def last_ckpt_end(self) -> LogEntry | None:
        """The last CkptEnd of the log, by its ``prev`` chain from the end (only headers are read on the
        way back: the forward read of pass 3 checks every entry walked past)."""
        return self.parts.core.log.reader.last_of_type(CKPT_END.code)

    # -- pass 3 ---------------------------------------------------------------------------
    def read_the_log(self, ckpt_end: LogEntry | None) -> LogEntry | None:
        """Pass 3; the CkptEnd of the checkpoint recovery starts from (None: the start of the log)."""
        parts, info, phases = self.parts, self.info, self.phases
        phase = phases.begin("read the log")
        entries = self.scan()
        ckpt_end, entries = self.pass_over_unusable_checkpoints(phase, ckpt_end, entries)
        root_lsn = NULL_LSN if ckpt_end is None else ckpt_end.values["root_lsn"]
        self.check_and_sort(entries)
        phases.say(phase, "%s", reading.refuse_the_other_kind(parts, self.read, root_lsn))
        info.entries_read = len(entries)
        if ckpt_end is None and entries:
            info.last_ckpt_start = info.first_active_lsn = info.scan_start = entries[0].lsn
        phases.say(phase, "read %d entries from %s to %s", info.entries_read, info.scan_start, info.end_of_log)
        for listener in parts.core.hooks.recovery_listeners:
            for entry in entries_from(entries, info.last_ckpt_start):
                listener(entry)
        for done in parts.core.hooks.recovery_read_done:
            done()
        phases.done(phase)
        return ckpt_end

    def pass_over_unusable_checkpoints(self, phase, ckpt_end: LogEntry | None,
                                       entries: list[LogEntry]) -> tuple[LogEntry | None, list[LogEntry]]:
        """While a hook says the checkpoint may not be used, step back to the CkptEnd before its CkptStart
        and read the log from that one's start up to where the entries read began."""
        hooks = self.parts.core.hooks.checkpoint_not_usable
        log = self.parts.core.log
        while ckpt_end is not None and hooks:
            ckpt_start = ckpt_end.values["ckpt_start_lsn"]
            why = next((reason for hook in hooks if (reason := hook(log, ckpt_start, entries)) is not None), None)
            if why is None:
                break
            read_from = self.info.scan_start
            earlier = next((e for e in log.scan_backward(ckpt_start) if e.header.type_code == CKPT_END.code), None)
            self.use_checkpoint(earlier)
            self.info.checkpoints_not_used.append(ckpt_end.lsn)
            self.phases.say(phase, "checkpoint %d (CkptStart %s, CkptEnd %s) not used: %s; recovery starts %s",
                            ckpt_end.values["checkpoint_id"], ckpt_start, ckpt_end.lsn, why,
                            f"from CkptEnd {earlier.lsn}" if earlier is not None else "at the start of the log")
            start = self.info.scan_start
            entries = list(log.scan(None if start.is_null else start, read_from)) + entries
            ckpt_end = earlier
        return ckpt_end, entries

    def scan(self) -> list[LogEntry]:
        """Every entry from where recovery starts to the end of the log, each checked as it is read."""
        start = self.info.scan_start
        return list(self.parts.core.log.scan(None if start.is_null else start))

    def check_and_sort(self, entries: list[LogEntry]) -> None:
        """Refuse what cannot be this environment's log, sort the entries by kind and learn the ids."""
        reading.refuse_foreign_entries(self.parts, entries)
        reading.refuse_erased_entries(entries, self.info.scan_start)
        self.read = reading.sort_by_kind(entries)
        reading.learn_ids(self.parts, self.read)

    # -- passes 4 and 5 ---------------------------------------------------------------------
    def recover_mapping_tree(self, root_lsn: LSN) -> None:
        parts, info, phases = self.parts, self.info, self.phases
        mapping = parts.db_tree.mapping
        phase = phases.begin("mapping tree INs")
        self.ins.say = lambda *line: phases.say(phase, *line)
        mapping.root, mapping.root_lsn = None, root_lsn
        if root_lsn.is_null:
            mapping.tree.create_empty()
            phases.say(phase, "no mapping tree root: a new, empty mapping tree")
        before = info.ins_replayed
        for entry in entries_from(self.read.nodes, info.last_ckpt_start):
            if node_head(entry)[0] == MAPPING_DB_ID:
                self.ins.replay(entry)
        phases.say(phase, "replayed %d INs of the mapping tree", info.ins_replayed - before)
        self.ins.keep_counted()
        phases.done(phase)

        phase = phases.begin("MapLNs")
        for entry in entries_from(self.read.map_lns, info.last_ckpt_start):
            if entry.header.invisible:
                continue  # a database's creation that a syncup rolled back: the database never was
            if redo_ln(parts, info, mapping, entry.values["name"].encode("utf-8"), entry, record_of(entry)):
                info.map_lns_redone += 1
            parts.utilization.count_obsolete(entry.values["prev_lsn"])
        parts.db_tree.load_from_mapping_tree()
        if parts.db_tree.replicated is None and not parts.core.read_only:
            lsn = parts.db_tree.record_kind(parts.core.config.replicated)
            phases.say(phase, "recorded the environment's kind (replicated: %s) in the mapping tree's own MapLN at %s",
                       str(parts.core.config.replicated).lower(), lsn)
        for db in list(parts.db_tree.by_id.values()):
            if db.id != MAPPING_DB_ID and db.root_lsn.is_null:
                db.tree.create_empty()
        if parts.db_tree.get(UTILIZATION_DB_NAME) is None:
            parts.db_tree.create(UTILIZATION_DB_NAME, internal=True, db_id=UTILIZATION_DB_ID)
        phases.say(phase, "redid %d MapLNs; databases: %s", info.map_lns_redone,
                   ", ".join(f"{n} (root {parts.db_tree.get(n).root_lsn})" for n in parts.db_tree.names(internal=True)))
        phases.done(phase)

    def replay_ins(self) -> None:
        info, phases = self.info, self.phases
        phase = phases.begin("INs")
        self.ins.say = lambda *line: phases.say(phase, *line)
        before = (info.ins_replayed, info.ins_provisional, info.ins_not_newer, info.ins_not_placed)
        for entry in entries_from(self.read.nodes, info.last_ckpt_start):
            if node_head(entry)[0] != MAPPING_DB_ID:
                self.ins.replay(entry)
        after = (info.ins_replayed, info.ins_provisional, info.ins_not_newer, info.ins_not_placed)
        replayed, provisional, not_newer, not_placed = (a - b for a, b in zip(after, before, strict=True))
        phases.say(phase, "replayed %d; skipped %d provisional, %d not newer than the tree, %d not placeable",
                   replayed, provisional, not_newer, not_placed)
        self.ins.keep_counted()
        phases.done(phase)

    # -- passes 6 and 7 ---------------------------------------------------------------------
    def _redo_and_undo_lns(self) -> None:
        parts, info, phases = self.parts, self.info, self.phases
        phase = phases.begin("transactions")
        txn_lns = self.find_losers()
        phases.say(phase, "committed: %s; losers (aborted or active at the crash): %s",
                   sorted(info.committed & set(txn_lns)) or "none", sorted(info.losers) or "none")
        phases.done(phase)

        phase = phases.begin("redo LNs")
        self.redo_lns()
        phases.say(phase, "redid %d LNs (%d not newer than the tree)", info.lns_redone, info.lns_not_newer)
        phases.done(phase)

        phase = phases.begin("undo losers")
        undo_losers(parts, info, txn_lns)
        phases.say(phase, "undid %d LNs of %d losers", info.lns_undone, len(info.losers))
        phases.done(phase)

    def find_losers(self) -> dict[int, list[LogEntry]]:
        return find_losers(self.parts, self.info, self.read.lns, self.read.commits)

    def redo_lns(self) -> None:
        redo_lns(self.parts, self.info, self.read.lns)

    # -- passes 8 and 9 ---------------------------------------------------------------------
    def recover_utilization(self) -> None:
        parts, phases = self.parts, self.phases
        phase = phases.begin("utilization")
        dropped = drop_summaries_of_deleted_files(parts.db_tree.utilization.tree, parts.core.log.head,
                                                  parts.core.log.deleted)
        if dropped:
            phases.say(phase, "dropped %d records of deleted files", dropped)
        summaries = []
        cursor = Cursor(parts.core, parts.records, parts.locks, parts.db_tree.utilization, None)
        item = cursor.seek(b"")
        while item is not None:
            summaries.append((item[1], cursor.lsn()))
            item = cursor.next()
        counted = self.ins.count_obsolete()
        phases.say(phase, "counted the obsolete versions named by %d of %d non-provisional INs (those the tree uses)",
                   counted, self.ins.named)
        self.count_entries_read(summaries)
        phases.say(phase, "%d files: %s", len(parts.utilization.files),
                   "; ".join(str(s) for s in parts.utilization.report()))
        phases.done(phase)

    def count_entries_read(self, summaries: list[tuple[dict, LSN]]) -> None:
        """Each file's summary, plus the entries read after it, each counted as an appended entry is."""
        self.parts.utilization.finish_recovery(summaries, [(e.lsn, e.size, e.type_name) for e in self.read.entries])

    def finish_with_a_checkpoint(self) -> None:
        parts, phases = self.parts, self.phases
        phase = phases.begin("checkpoint")
        if parts.core.read_only:
            phases.say(phase, "read-only: no checkpoint (recovery wrote nothing)")
        else:
            result = parts.checkpointer.run("recovery")
            phases.say(phase, "recovery's checkpoint: CkptStart %s, CkptEnd %s", result.ckpt_start_lsn,
                       result.ckpt_end_lsn)
        phases.done(phase)


RECOVERY_MANAGER = impl.hot_spot(RecoveryManager)

__all__ = ["RecoveryManager", "RECOVERY_MANAGER"]


def drop_summaries_of_deleted_files(tree, head: int, deleted: frozenset[int] = frozenset()) -> int:
    """Remove from ``_utilization`` the records of files below the log's head and of the middle files
    recorded ``deleted``, without reading them.

    The cleaner removes a deleted file's records when it deletes the file, but
    the checkpoint recovery starts from may have logged their BIN before that,
    so the recovered tree can still hold them. They are dead, and one may point
    into the deleted file itself (a file's own summaries lie in it), so they
    are dropped by key (a record's key starts with its file number) before
    anything reads the profile. The BIN, dirty, is logged by recovery's checkpoint."""
    dropped = _drop_keys(tree, b"", file_key(head))
    for number in sorted(n for n in deleted if n >= head):
        dropped += _drop_keys(tree, file_key(number), file_key(number + 1))
    return dropped


def _drop_keys(tree, low: bytes, limit: bytes) -> int:
    """Remove the records whose keys lie in [low, limit), BIN by BIN."""
    dropped = 0
    bin_node = tree.search(low)
    while True:
        index = bin_node.find(low)[0]
        while index < bin_node.n_entries and bin_node.keys[index] < limit:
            bin_node.remove_slot(index)
            bin_node.dirty = True
            dropped += 1
        if index < bin_node.n_entries or bin_node.high_key is None or bin_node.high_key >= limit:
            return dropped
        bin_node = tree.search(bin_node.high_key)
