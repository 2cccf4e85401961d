"""The log cleaner (JE's ``Cleaner``): reclaim log space by emptying files of their live entries.

In the log store no entry is ever overwritten, so the log only grows until
whole files are deleted. A file may go once nothing needs it: the cleaner
reads each of its entries and asks the tree whether it is still *live*:

- an LN is live iff its record's BIN slot points at this LSN (and is not a
  known deletion); a live LN is *migrated*: logged again at the end of the
  log (non-transactionally, without a new VLSN) and its slot pointed there;
  with ``cleaner_lazy_migration`` (JE's lazy migration of LNs) a live user
  LN is only *marked*: the slot's mark (``Cleaner.marked``, (database id,
  key) -> the LSN) and a dirty BIN; whoever logs the BIN next (the
  checkpoint, the evictor, a split) first logs the marked LNs
  (:meth:`Cleaner.migrate_marked`). A file with a mark still pending is not
  deleted; a mark whose slot moved on (an update, a deletion) is dropped,
  unless a transaction holds the record (its abort may put the marked
  version back);
- an IN or BIN is live iff it is the current version of its node (its
  parent's slot, or the database's root LSN, points at this LSN); a live
  node is made dirty, so the next checkpoint logs it elsewhere (JE's lazy
  migration of INs: nothing is logged now, see the checkpointer's rules);
- everything else (FileHeader, Commit, Abort, CkptStart/End, older
  versions, entries of removed databases) is obsolete and simply dropped;
  the FileSummaryLN of a file deleted already is dead, and its record is
  removed from ``_utilization`` (the BIN, dirty, is logged by the
  checkpoint before this file goes, so no slot ever points into it).
  Deleting a file removes all its records at once (:meth:`Cleaner.delete_files`);
  a record found in a file being cleaned is dead only when a crash put it back.

The decision itself is the pure function :func:`entry_verdict` (the cleaner
gathers what the tree says and calls it in one place, ``_clean_entry``,
through ``VERDICT``, an exercise hook: see :mod:`minidb.impl`, exercise 11a).
Entries the utilization tracker already counts obsolete are not looked up.
An LN whose record a transaction holds write-locked cannot be judged now
(an abort would put back a version this file may hold): the file is left
for a later run (``nLNsLocked``) and stays a candidate.

A cleaned file is not deleted at once: a crash would recover from the last
checkpoint, whose trees may still point into it. Checkpoint step 1 takes the
cleaned files, step 9 (after CkptEnd, when the migrated LNs' BINs and the
dirtied INs are logged) deletes them (:meth:`Cleaner.delete_files`), unless
the protection registry (:mod:`.protect`) says someone still reads them.
A cleaned file is deleted wherever it lies, as in JE
(:meth:`minidb.log.manager.LogManager.remove_files`): the files that go from
the log's low end move the log head (:mod:`minidb.log.head`), a file above a
kept one (file 1 copied by a backup, files 2 to 9 cleaned) is a *middle
file*, recorded in the deleted-files record (:mod:`minidb.log.deleted`).
Both records are durable before the file is deleted, so no reader takes a
deleted file for a lost one. Two exceptions keep a cleaned file: the file
being written and the one before it (the last file's FileHeader names the
one before's last entry), and, when a deletion listener is registered (a
replicated environment's VLSN index), any file above a kept one: a
listener lets files go "up to N", so only the run from the head goes there
(as it does with ``cleaner_delete_middle_files`` off).

Only files wholly before the last checkpoint's recovery interval (its
CkptStart and firstActiveLSN, and every active transaction's first entry)
are candidates: recovery never needs them (:mod:`.selector` chooses among
them by utilization).

Statistics, named as JE names them: ``nCleanerRuns`` (files cleaned),
``nCleanerEntriesRead``, ``nLNsObsolete``, ``nLNsDead`` (a removed database, a
known deletion), ``nLNsLocked``, ``nLNsMigrated``, ``nLNsMarked`` (lazily), ``nINsObsolete``,
``nINsDead``, ``nINsMigrated`` (made dirty), ``nCleanerDeletions`` (files deleted).

Locking: every method runs under the environment latch (its callers take it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minidb import impl
from minidb.errors import LogCorruptionError
from minidb.log import LSN, LogEntry
from minidb.log.files import file_name
from minidb.logstore.cleaner.protect import FileProtector
from minidb.logstore.cleaner.selector import FileRanking, Selection
from minidb.logstore.cleaner.utilization import UtilizationTracker, key_of_summary
from minidb.logstore.logdef import (
    ERASABLE_TYPES,
    FILE_SUMMARY_TYPES,
    IN_TYPES,
    KIND_KEY,
    LN,
    LN_TYPES,
    MAPPING_DB_ID,
    USER_LN_TYPES,
)
from minidb.logstore.tree.ln import record_of
from minidb.stats import Stats

if TYPE_CHECKING:
    from collections.abc import Callable

    from minidb.logstore.checkpoint.checkpointer import Checkpointer
    from minidb.logstore.core import EnvCore
    from minidb.logstore.mapping_tree import DbTree
    from minidb.logstore.records import RecordOps
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.locks import LockTable
    from minidb.logstore.txn.txn import TxnManager

CLEANER_STATS = ["nCleanerRuns", "nCleanerEntriesRead", "nLNsObsolete", "nLNsDead", "nLNsLocked", "nLNsMigrated", "nLNsMarked",
                 "nINsObsolete", "nINsDead", "nINsMigrated", "nCleanerDeletions"]


@dataclass
class FileCleaning:
    """What cleaning one file did: the entries read, sorted into live and obsolete."""

    file_number: int
    cleaned: bool = True  # False: a locked LN stopped it
    live: list[LSN] = field(default_factory=list)
    obsolete: list[LSN] = field(default_factory=list)
    migrated: dict[LSN, LSN] = field(default_factory=dict)  # old LN -> its new LSN
    dirtied: list[str] = field(default_factory=list)  # the INs made dirty
    reason: str = ""


LN_KIND, IN_KIND, OTHER_KIND = "LN", "IN", "other"
LIVE, OBSOLETE, DEAD = "live", "obsolete", "dead"


def entry_verdict(kind: str, lsn: LSN, current_lsn: LSN | None, *, counted_obsolete: bool = False,
                  db_exists: bool = True, known_deleted: bool = False) -> str:
    """The cleaner's decision for one logged entry: ``LIVE``, ``OBSOLETE`` or ``DEAD``.

    ``kind`` is ``LN_KIND``, ``IN_KIND`` (an IN or BIN) or ``OTHER_KIND`` (a
    FileHeader, Commit, Checkpoint entry, an erased entry...); ``lsn`` is where
    the entry lies; ``current_lsn`` what the tree points at today: for an LN the
    LSN in its record's BIN slot (None: no slot for the key), for an IN the
    LSN of its node's current version (None: the node is gone).
    ``counted_obsolete``: the utilization tracker counts the entry obsolete
    already; ``db_exists``: its database still exists; ``known_deleted``: the
    record's slot is a known deletion (or the record is the summary of a file
    deleted already). Only a live entry must be kept (migrated, or its node made
    dirty); a dead one belongs to a record or database that is gone.
    """
    if kind not in (LN_KIND, IN_KIND) or counted_obsolete:
        return OBSOLETE
    if not db_exists:
        return DEAD
    if current_lsn != lsn:
        return OBSOLETE
    if kind == LN_KIND and known_deleted:
        return DEAD
    return LIVE


def _verdict_from_exercise(hook: impl.Hook, student: Callable) -> Callable[..., str]:
    """A student's ``entry_verdict`` (exercise 11a has the engine's signature), its answer checked."""
    def verdict(kind: str, lsn: LSN, current_lsn: LSN | None, **facts: bool) -> str:
        answer = student(kind, lsn, current_lsn, **facts)
        if answer not in (LIVE, OBSOLETE, DEAD):
            raise hook.wrong(f"returned {answer!r}, not {LIVE!r}, {OBSOLETE!r} or {DEAD!r}")
        return answer
    return verdict


VERDICT = impl.register("11a_live_or_obsolete", "entry_verdict", entry_verdict, _verdict_from_exercise)


class Cleaner:
    def __init__(self, core: EnvCore, utilization: UtilizationTracker, locks: LockTable, records: RecordOps,
                 db_tree: DbTree, txn_manager: TxnManager, checkpointer: "Checkpointer"):
        self.core = core
        self.utilization = utilization
        self.locks = locks
        self.records = records
        self.db_tree = db_tree
        self.txn_manager = txn_manager
        self.checkpointer = checkpointer
        self.protector = FileProtector()
        self.stats = Stats("cleaner", CLEANER_STATS)
        self.cleaned: set[int] = set()  # cleaned, waiting for a checkpoint's step 9
        self.marked: dict[tuple[int, bytes], LSN] = {}  # lazy migration: (db id, key) -> the marked LN's LSN
        self.reserved: set[int] = set()  # cleaned, a checkpoint's step 9 passed, yet kept (protected, or above a kept file)
        self.last_selection: Selection | None = None
        self.ranking = FileRanking(utilization)

    # -- choosing ----------------------------------------------------------------------
    def recovery_horizon(self) -> LSN:
        """Recovery may read entries from here on: the last CkptStart, firstActiveLSN, active txns."""
        core = self.core
        marks = [self.checkpointer.last_ckpt_start, self.checkpointer.last_first_active,
                 self.txn_manager.first_active_lsn()]
        marks = [m for m in marks if not m.is_null]
        return min(marks) if marks else core.log.end_lsn

    def protected_files(self) -> set[int]:
        """The log's files someone protects now (what the data eraser must leave alone)."""
        return {n for n in range(self.core.log.head, self.core.log.end_lsn.file + 1) if self.protector.is_protected(n)}

    def is_candidate(self, number: int) -> bool:
        return (number < self.recovery_horizon().file and number >= self.core.log.head
                and number not in self.cleaned and not self.protector.is_protected(number))

    def select(self) -> Selection:
        """:func:`~minidb.logstore.cleaner.selector.select_file` over the files not cleaned yet, answered by
        the ranking kept as the counts change (each file cleaned leaves it)."""
        config = self.core.config
        self.last_selection = self.ranking.select(self.is_candidate, config.cleaner_min_utilization,
                                                  config.cleaner_min_file_utilization)
        return self.last_selection

    def clean(self, max_files: int | None = None) -> list[FileCleaning]:
        """Clean files while the selector picks one (at most ``max_files``)."""
        done: list[FileCleaning] = []
        while max_files is None or len(done) < max_files:
            number = self.select().file_number
            if number is None:
                break
            done.append(self.clean_file(number))
            if not done[-1].cleaned:
                break
        return done

    # -- cleaning one file -------------------------------------------------------------
    def clean_file(self, number: int) -> FileCleaning:
        core = self.core
        result = FileCleaning(number)
        end = core.log.end_lsn
        stop = LSN(number + 1, 0) if number < end.file else end
        tally: Counter[str] = Counter()  # the file's counts, added to the stats once (each add takes their lock)
        try:
            for entry in list(core.log.scan(LSN(number, 0), stop)):
                if entry.lsn.file != number:
                    break
                tally["nCleanerEntriesRead"] += 1
                if not self._clean_entry(entry, result, tally):
                    result.cleaned = False
                    return result
        finally:
            for name, count in tally.items():
                self.stats.add(name, count)
        self.cleaned.add(number)
        self.ranking.leave_out(number)  # a file cleaned is no choice any more, until it is deleted
        self.stats.add("nCleanerRuns")
        core.trace.emit("cleaner: cleaned %s: %d live, %d obsolete", file_name(number), len(result.live),
                       len(result.obsolete))
        return result

    def _clean_entry(self, entry: LogEntry, result: FileCleaning, tally: Counter[str]) -> bool:
        """Sort one entry (:func:`entry_verdict` decides); False when a locked LN stops the file.

        An erased entry the data eraser cannot have made (a Commit, a MapLN...) is damage: it may be
        a live record's only copy, so the file is not cleaned and nothing is deleted."""
        core, name = self.core, entry.type_name
        if entry.header.erased and entry.erased_type_name not in ERASABLE_TYPES:
            lsn = entry.lsn
            raise LogCorruptionError(file_name(lsn.file), lsn.offset,
                                     f"erased entry at {lsn} was a {entry.erased_type_name} entry: the "
                                     "data eraser erases only records' LNs and INs; the file was not cleaned")
        kind = LN_KIND if name in LN_TYPES else IN_KIND if name in IN_TYPES else OTHER_KIND
        # A file's own summary goes with the file: never copied (see the utilization module).
        counted = self.utilization.is_obsolete(entry.lsn) or self.utilization.is_own_summary(entry.lsn)
        db, current, known_deleted, node, bin_node, index = None, None, False, None, None, None
        if kind == IN_KIND and not counted:
            db = self.db_tree.get_by_id(entry.values["db_id"])
            if db is not None:
                node = self._current_node(db, entry)
                current = entry.lsn if node is not None else None
        elif kind == LN_KIND and not counted:
            db, key = self._record_of(entry)
            if db is not None:
                owner = self.locks.owner(db.id, key)
                if owner is not None:
                    self.stats.add("nLNsLocked")
                    result.reason = f"record {key!r} of {db.name} at {entry.lsn} is locked by txn {owner}"
                    return False
                bin_node = db.tree.search(key)
                index, exact = bin_node.find(key)
                current = bin_node.lsns[index] if exact else None
                known_deleted = exact and (bin_node.known_deleted[index] or self._summary_of_deleted_file(entry))
        verdict = VERDICT.call(kind, entry.lsn, current, counted_obsolete=counted, db_exists=db is not None,
                                known_deleted=known_deleted)
        stat = "nLNs" if kind == LN_KIND else "nINs"
        if verdict != LIVE:
            result.obsolete.append(entry.lsn)
            if kind != OTHER_KIND:
                tally[stat + ("Dead" if verdict == DEAD else "Obsolete")] += 1
            if verdict == DEAD and kind == LN_KIND and current == entry.lsn and not bin_node.known_deleted[index]:
                bin_node.remove_slot(index)  # a summary of a deleted file: the record goes (logged with its BIN)
                bin_node.dirty = True
                self.utilization.count_obsolete(entry.lsn)
            return True
        result.live.append(entry.lsn)
        if kind == IN_KIND:
            node.dirty = True
            result.dirtied.append(node.describe())
            tally["nINsMigrated"] += 1
            return True
        if core.config.cleaner_lazy_migration and entry.type_name in USER_LN_TYPES:
            self.marked[(db.id, key)] = entry.lsn
            bin_node.dirty = True  # logged by the next checkpoint at the latest, with the LN before it
            tally["nLNsMarked"] += 1
            return True
        result.migrated[entry.lsn] = self._migrate(db, bin_node, index, entry)
        tally["nLNsMigrated"] += 1
        return True

    def _current_node(self, db: "DatabaseImpl", entry: LogEntry):
        """The in-memory node whose current version is the IN/BIN ``entry``, or None."""
        values, tree = entry.values, db.tree
        root = tree.root_node()
        if root.node_id == values["node_id"]:
            return root if db.root_lsn == entry.lsn else None
        parent, index, _ = tree.find_parent(values["id_key"], values["level"], values["node_id"])
        live = index is not None and parent is not None and parent.lsns[index] == entry.lsn
        return tree.fetch_child(parent, index) if live else None

    def _record_of(self, entry: LogEntry) -> tuple["DatabaseImpl | None", bytes]:
        """The database and key of the record an LN entry is a version of."""
        values, db_tree = entry.values, self.db_tree
        if entry.type_name in USER_LN_TYPES:
            return db_tree.get_by_id(values["db_id"]), values["key"]
        if entry.type_name in FILE_SUMMARY_TYPES:
            return db_tree.utilization, key_of_summary(entry.type_name, values)
        key = KIND_KEY if values["db_id"] == MAPPING_DB_ID else values["name"].encode("utf-8")
        return db_tree.mapping, key

    def _summary_of_deleted_file(self, entry: LogEntry) -> bool:
        return entry.type_name in FILE_SUMMARY_TYPES and self.core.log.is_deleted(entry.values["file_number"])

    def _migrate(self, db: "DatabaseImpl", bin_node, index: int, entry: LogEntry) -> LSN:
        """Log the live LN ``entry`` again and point its slot there."""
        core = self.core
        if entry.type_name not in USER_LN_TYPES:  # MapLN, FileSummaryLN: an internal record, logged as it is
            return self.records.write_internal(db, bin_node.keys[index], entry.entry_type, dict(entry.values))
        values = {"db_id": db.id, "key": bin_node.keys[index], "prev_lsn": entry.lsn, "data": record_of(entry)}
        lsn = core.log_entry(LN, values)
        bin_node.update_slot(index, lsn, False, values["data"])
        bin_node.dirty = True
        self.utilization.count_obsolete(entry.lsn)
        return lsn

    def migrate_marked(self, bin_node) -> list[LSN]:
        """Before ``bin_node`` is logged: log its marked LNs (lazy migration); their new LSNs."""
        if not self.marked:
            return []
        core, db_id, done = self.core, bin_node.db_id, []
        for (mark_db, key), lsn in list(self.marked.items()):
            if mark_db != db_id or key < bin_node.id_key or (bin_node.high_key is not None and key >= bin_node.high_key):
                continue
            index, exact = bin_node.find(key)
            locked = self.locks.owner(db_id, key) is not None
            if exact and bin_node.lsns[index] == lsn and not locked:
                done.append(self._migrate(self.db_tree.require_id(db_id), bin_node, index, core.log.read(lsn)))
                self.stats.add("nLNsMigrated")
            elif locked:
                continue  # a transaction holds the record: its abort may put the marked version back
            del self.marked[(mark_db, key)]
        return done

    def files_with_marks(self) -> set[int]:
        return {lsn.file for lsn in self.marked.values()}

    # -- deleting, at checkpoints ------------------------------------------------------
    def files_to_delete(self) -> list[int]:
        """Checkpoint step 1: the files cleaned so far (deleted after this checkpoint's CkptEnd)."""
        return sorted(self.cleaned)

    def delete_files(self, files: list[int]) -> list[int]:
        """Checkpoint step 9: delete what may go of ``files`` (cleaned, nothing protected, no mark pending)."""
        core = self.core
        self.reserved |= self.cleaned.intersection(files)  # no tree of a later recovery points into them
        pending = self.files_with_marks()  # lazily migrated LNs not logged yet
        ready = {n for n in files if n in self.cleaned and not self.protector.is_protected(n) and n not in pending}
        deleted = self._deletable(ready)
        if not deleted:
            return []
        core.log.remove_files(deleted)
        for number in deleted:
            self.cleaned.discard(number)
            self.reserved.discard(number)
            self._remove_summaries(self.utilization.forget_file(number))
            self.stats.add("nCleanerDeletions")
        return deleted

    def _deletable(self, ready: set[int]) -> list[int]:
        """Which of the ``ready`` files go now: the run of them from the log head, once the deletion
        listeners let files up to its end go; and those above a kept file (middle files), unless a
        deletion listener is registered. A listener's contract is "files up to N go" (the VLSN index
        truncates its head through N), which for a middle file would forget files still kept below it,
        which a feeder may be reading: in a replicated environment files still go from the head only,
        and so they do with ``cleaner_delete_middle_files`` off. The file being written and the one
        before it stay (:meth:`LogManager.remove_files`)."""
        log = self.core.log
        head = log.head
        while head in ready or log.is_deleted(head):
            head += 1
        run = [n for n in range(log.head, head) if n in ready]
        if run and not self.protector.before_deleting(head - 1):
            self.core.trace.emit("cleaner: a deletion listener keeps files up to %s", file_name(head - 1))
            run = []
        if not self._middle_files_go():
            return run
        return run + sorted(n for n in ready if n > head and n < log.end_lsn.file - 1)

    def _middle_files_go(self) -> bool:
        """Whether a cleaned file above a kept one may be deleted (see :meth:`_deletable`)."""
        return self.core.config.cleaner_delete_middle_files and not self.protector.deletion_listeners

    def _remove_summaries(self, keys: list[bytes]) -> None:
        """A deleted file's records leave ``_utilization``; their BINs, dirty, are logged by the next
        checkpoint. Their LNs are not counted obsolete here: until a checkpoint has logged those BINs, a
        recovery puts the records back (dead, below the log head), and a file holding one of their LNs
        must not be deleted. The cleaner finds those LNs obsolete (or dead) when it cleans their files."""
        tree = self.db_tree.utilization.tree
        for key in keys:
            bin_node = tree.search(key)
            index, exact = bin_node.find(key)
            if exact:
                bin_node.remove_slot(index)
                bin_node.dirty = True

    # -- for the data eraser -----------------------------------------------------------
    def reserved_files(self) -> set[int]:
        """Reserved files (JE's term) that may be deleted now: cleaned, kept at a checkpoint's step 9,
        and by now unprotected and where :meth:`_deletable` lets a file go (a prefix of the log, or a
        middle file when no deletion listener is registered): the data eraser deletes them instead of
        erasing."""
        log = self.core.log
        ready, number = set(), log.head
        while (number in self.reserved or log.is_deleted(number)) and not self.protector.is_protected(number):
            ready |= {number} - log.deleted
            number += 1
        if self._middle_files_go():
            ready |= {n for n in self.reserved if n < log.end_lsn.file - 1 and not self.protector.is_protected(n)}
        return ready

    def delete_reserved(self, number: int) -> bool:
        """Delete the reserved files up to ``number`` through step 9's path (the deletion listeners first,
        so the VLSN index is truncated); whether ``number`` is gone."""
        with self.core.latch:
            self.delete_files(sorted(n for n in self.reserved_files() if n <= number))
            return self.core.log.is_deleted(number)


CLEANER = impl.hot_spot(Cleaner)


__all__ = ["Cleaner", "CLEANER", "FileCleaning", "CLEANER_STATS", "entry_verdict", "LN_KIND", "IN_KIND", "OTHER_KIND", "LIVE",
           "OBSOLETE", "DEAD"]
