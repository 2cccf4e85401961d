"""The checkpointer (JE's ``Checkpointer``): the JE documentation's ten steps, one at a time.

A checkpoint bounds recovery: recovery reads INs from the last complete
checkpoint's CkptStart and LNs from its firstActiveLSN, so the checkpoint
must log, and make reachable through non-provisional ancestors, every IN
that was dirty at CkptStart. Its steps, each a line of the run's trace::

     1  ask the cleaner (:mod:`minidb.logstore.cleaner`) which files it cleaned:
        they may go after this checkpoint
     2  dirty map state DIRTY_MAP_INCOMPLETE
     3  log CkptStart; note firstActiveLSN (after CkptStart: JE #20270)
     4  build the dirty map by level from the dirty resident INs, with the
        highest flush level of each database; state DIRTY_MAP_COMPLETE
     5  flush the map bottom up: the bottom two levels a subtree at a time
        (a level-2 IN right after its BINs), higher levels strictly by level;
        Provisional.YES at the bottom level, BEFORE_CKPT_END in between, NO at
        a database's max flush level. Logging a child dirties its parent,
        which is added to the map and logged in its turn, up to the max
        flush level. The mapping tree comes last, up to its root. By default
        each IN is logged on its own, after a Btree search for its parent,
        with a pause after it; with ``checkpointer_high_priority``
        (je.checkpointer.highPriority) a subtree (a level-2 IN and its
        mapped BINs) is logged in one stretch after one search, the BINs
        found through the parent's slots, with no pause between them
     6  flush the VLSN index (hook; replication; what a hook returns is
        the step's trace line)
     7  flush the utilization tracker: a FileSummaryLN per changed file (its counts,
        the obsolete offsets tracked since its previous one); a file changed only
        by the utilization tree's own upkeep may wait, but not past the checkpoint
        of ``close`` (:mod:`minidb.logstore.cleaner.utilization`, "The profile's upkeep")
     8  log CkptEnd (CkptStart LSN, firstActiveLSN, mapping-tree root) and fsync
     9  delete the cleaned files of step 1 that nobody protects (wherever they lie:
        the log head or the deleted-files record written first)
    10  dirty map state NONE

The steps are one generator of pauses (:meth:`Checkpointer.checkpoint_steps`),
which a :class:`~minidb.logstore.checkpoint.run.CheckpointRun` drives: between
two pauses (after each step, after each IN examined in step 4 and each IN
flushed in step 5) the environment may run other operations, including
eviction, exactly as JE's evictor runs concurrently with a checkpoint.
``env.checkpoint()`` runs one to the end; ``env.checkpointer.start()``
returns one to step through.

Which flag each level gets (:func:`checkpoint_provisional`): NO at the
database's max flush level (recovery replays it: it is the level that makes
the flushed nodes below it reachable), YES for a BIN below it (recovery never
needs a BIN: its parent, logged after it, points to it), BEFORE_CKPT_END in
between (replayed only if this checkpoint never reaches its CkptEnd, when
the previous checkpoint's recovery needs it). A root is always NO.

The engine builds the checkpointer and its dirty map through the hot spots
``CHECKPOINTER`` and ``DIRTY_IN_MAP`` (components of the course project
``checkpointer``, ``exercises/projects/checkpointer/``).

Two details keep the JE documentation's rule "Provisional.NO is used for INs at the max
flush level during an active checkpoint" true while eviction follows the
JE documentation's table (YES for every non-root IN once the map is complete):

- like JE, the parent of every IN taken from the map is added to the map,
  even when the IN is no longer dirty (eviction or a split logged it since);
- an IN at the max flush level that eviction logged provisionally after
  CkptStart is logged again, non-provisionally.

Example trace: 20 records ``acct00`` .. ``acct19`` put into ``accounts`` with
4-slot nodes (a 3-level tree), a checkpoint, then one record changed (one dirty
BIN), then ``env.checkpoint(minimize_recovery_time=True)`` (the lines of the
internal databases ``_utilization`` and ``_mapping`` left out)::

    step 3: CkptStart logged at 0x1/0x15ad; firstActiveLSN 0x1/0x15ad (no active txn)
    step 4: level 1: BIN 4 (_utilization), BIN 8 (accounts)
    step 4: highest flush level of accounts: 3
    step 4: dirty map state DIRTY_MAP_COMPLETE
    step 5: BIN 8 (accounts, level 1) -> 0x1/0x16a3 YES
    step 5: IN 12 (accounts, level 2) -> 0x1/0x170b BEFORE_CKPT_END
    step 5: IN 11 root (accounts, level 3) -> 0x1/0x1791 NO; MapLN for accounts
    step 6: VLSN index: nothing to flush (not replicated)
    step 8: CkptEnd logged at 0x1/0x1a7b (CkptStart 0x1/0x15ad, firstActiveLSN 0x1/0x15ad, mapping tree root 0x1/0x18c3); log fsynced
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb import impl
from minidb.errors import UserError
from minidb.log import LSN, NULL_LSN, Provisional
from minidb.logstore.checkpoint.provisional import BIN_LEVEL
from minidb.logstore.checkpoint.records import CheckpointResult, LoggedIN, Pause
from minidb.logstore.checkpoint.run import CheckpointRun
from minidb.logstore.logdef import CKPT_END, CKPT_START
from minidb.stats import Stats

if TYPE_CHECKING:
    from collections.abc import Iterator

    from minidb.logstore.checkpoint.dirty_map import DirtyINMap
    from minidb.logstore.checkpoint.records import CheckpointReference
    from minidb.logstore.cleaner.cleaner import Cleaner
    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.mapping_tree import DbTree
    from minidb.logstore.tree.node_logger import NodeLogger
    from minidb.logstore.txn.txn import TxnManager


def checkpoint_provisional(level: int, max_flush_level: int) -> Provisional:
    """The flag the checkpointer logs an IN of ``level`` with (seed, step 5)."""
    if level >= max_flush_level:
        return Provisional.NO
    if level == BIN_LEVEL:
        return Provisional.YES
    return Provisional.BEFORE_CKPT_END


class Checkpointer:
    """Runs checkpoints, on demand and by log growth (``checkpoint_bytes_interval``)."""

    def __init__(self, core: EnvCore, utilization: UtilizationTracker, dirty_map: DirtyINMap, node_logger: NodeLogger,
                 db_tree: DbTree, txn_manager: TxnManager):
        self.core = core
        self.utilization = utilization
        self.dirty_map = dirty_map
        self.node_logger = node_logger
        self.db_tree = db_tree
        self.txn_manager = txn_manager
        self.cleaner: Cleaner | None = None  # whose cleaned files each checkpoint deletes (the environment sets it)
        self.environment: object = None  # what the hooks are given as ``run.env`` (the environment sets it)
        self.last_checkpoint_id = 0
        self.last_ckpt_start: LSN = NULL_LSN
        self.last_first_active: LSN = NULL_LSN
        self.last_ckpt_end: LSN = NULL_LSN
        self.bytes_at_last_end = 0
        self.current: CheckpointRun | None = None
        self.history: list[CheckpointResult] = []
        self.stats = Stats("checkpointer", ["nCheckpoints", "nFullINFlush", "nFullBINFlush"])

    def start(self, invoker: str = "api", minimize_recovery_time: bool = False) -> CheckpointRun:
        """Begin a checkpoint to advance step by step (one at a time)."""
        with self.core.latch:
            self.core.check_usable()
            if self.current is not None:
                raise UserError(f"checkpoint {self.current.result.checkpoint_id} is still running")
            self.current = CheckpointRun(self, invoker, minimize_recovery_time)
            return self.current

    def run(self, invoker: str = "api", minimize_recovery_time: bool = False) -> CheckpointResult:
        return self.start(invoker, minimize_recovery_time).finish()

    def continue_after(self, checkpoint_id: int, ckpt_start: LSN, ckpt_end: LSN) -> None:
        """Recovery found the last checkpoint: the next one takes the next id."""
        self.last_checkpoint_id = checkpoint_id
        self.last_ckpt_start, self.last_ckpt_end = ckpt_start, ckpt_end

    def bytes_since_last_end(self) -> int:
        """Log bytes written since the last CkptEnd. As in JE, the interval counts from the end of
        the last checkpoint, so a checkpoint that writes more than the interval (many dirty nodes,
        a summary per log file) does not set off the next one at once."""
        return self.core.log.stats["nBytes"] - self.bytes_at_last_end

    def maybe_checkpoint(self) -> CheckpointResult | None:
        """The daemon's check, made after each operation: a checkpoint by log growth."""
        interval = self.core.config.checkpoint_bytes_interval
        if interval is None or self.current is not None or self.bytes_since_last_end() < interval:
            return None
        return self.run("bytes interval")

    # -- the ten steps ---------------------------------------------------------------------
    def checkpoint_steps(self, run: CheckpointRun) -> Iterator[Pause]:
        core, checkpointer = self.core, self
        hooks = core.hooks
        dirty_map = checkpointer.dirty_map
        result = run.result

        run.begin(1)
        cleaner_files = hooks.cleaner_files_to_delete or checkpointer.cleaner.files_to_delete
        files = list(cleaner_files())
        result.files_to_delete = files
        run.say(1, "cleaner: files to delete after this checkpoint: %s",
                ", ".join(map(str, files)) if files else "none")
        yield run.pause(1, True)

        run.begin(2)
        dirty_map.begin_checkpoint(run.minimize_recovery_time)
        run.say(2, "dirty map state %s", dirty_map.state.name)
        yield run.pause(2, True)

        run.begin(3)
        start = core.log_entry(CKPT_START, {"checkpoint_id": result.checkpoint_id, "invoker": result.invoker,
                                           "time_ms": core.now_ms()})
        result.ckpt_start_lsn = start
        first_active = checkpointer.txn_manager.first_active_lsn()
        result.first_active_lsn = start if first_active.is_null else first_active
        run.say(3, "CkptStart logged at %s; firstActiveLSN %s%s", start, result.first_active_lsn,
                " (no active txn)" if first_active.is_null else "")
        yield run.pause(3, True)

        run.begin(4)
        for node in dirty_map.select_dirty_ins_for_checkpoint():
            yield run.pause(4, False, f"examined {node.describe()}")
        dirty_map.complete()
        result.dirty_map = dirty_map.snapshot()
        names = {db_id: run.db_name(db_id) for db_id, _ in result.dirty_map.highest_flush_levels}
        names.update({r.db_id: run.db_name(r.db_id) for _, _, refs in result.dirty_map.levels for r in refs})
        for line in result.dirty_map.lines(names) or ["no dirty INs"]:
            run.say(4, "%s", line)
        run.say(4, "dirty map state %s", dirty_map.state.name)
        yield run.pause(4, True)

        run.begin(5)
        yield from self.flush_dirty_nodes(run)
        dirty_map.flush_done = True
        result.highest_flush_levels = {run.db_name(d): lvl for d, lvl in dirty_map.highest_flush_levels.items()}
        run.say(5, "flushed %d INs", len(result.logged))
        yield run.pause(5, True)

        run.begin(6)
        said = [flush(run) for flush in hooks.flush_vlsn_index]
        messages = [message for message in said if message]  # a hook may say what it flushed
        run.say(6, "VLSN index: %s", "; ".join(messages) if messages else
                f"flushed ({len(hooks.flush_vlsn_index)} hooks)" if hooks.flush_vlsn_index
                else "nothing to flush (not replicated)")
        yield run.pause(6, True)

        run.begin(7)
        result.summaries = checkpointer.utilization.flush()
        for number, lsn in result.summaries:
            run.say(7, "FileSummaryLN at %s: %s", lsn, checkpointer.utilization.summary(number))
        if not result.summaries:
            run.say(7, "no file's utilization changed")
        yield run.pause(7, True)

        run.begin(8)
        end = self._log_ckpt_end(result)
        result.ckpt_end_lsn = end
        self.last_ckpt_start = start
        self.last_first_active = result.first_active_lsn
        self.last_ckpt_end = end
        self.bytes_at_last_end = core.log.stats["nBytes"]
        run.say(8, "CkptEnd logged at %s (CkptStart %s, firstActiveLSN %s, mapping tree root %s); log fsynced",
                end, start, result.first_active_lsn, checkpointer.db_tree.mapping.root_lsn)
        yield run.pause(8, True)

        run.begin(9)
        if hooks.delete_cleaned_files is not None:
            if files:
                hooks.delete_cleaned_files(files)
            deleted = files
        else:
            deleted = checkpointer.cleaner.delete_files(files)
        run.say(9, "cleaner: deleted files: %s", ", ".join(map(str, deleted)) if deleted else "none")
        yield run.pause(9, True)

        run.begin(10)
        dirty_map.reset()
        self.current = None
        self.stats.add("nCheckpoints")
        run.say(10, "dirty map state %s", dirty_map.state.name)
        run.done = True
        self.history.append(result)
        yield run.pause(10, True)

    def _log_ckpt_end(self, result: CheckpointResult) -> LSN:
        """Step 8: CkptEnd, then the fsync that makes the whole checkpoint count (and lets step 9 delete)."""
        core = self.core
        end = core.log_entry(CKPT_END, {
            "checkpoint_id": result.checkpoint_id, "invoker": result.invoker, "time_ms": core.now_ms(),
            "ckpt_start_lsn": result.ckpt_start_lsn, "first_active_lsn": result.first_active_lsn,
            "root_lsn": self.db_tree.mapping.root_lsn, "last_node_id": core.last_node_id,
            "last_db_id": self.db_tree.last_db_id, "last_txn_id": self.txn_manager.last_txn_id,
            "files_to_delete": [{"file": f} for f in result.files_to_delete],
        })
        core.log.sync(end)
        return end

    # -- step 5 ------------------------------------------------------------------------------
    def flush_dirty_nodes(self, run: CheckpointRun) -> Iterator[Pause]:
        dirty_map = self.dirty_map
        while (key := dirty_map.lowest_level_set()) is not None:
            while (ref := dirty_map.remove_next_node(key)) is not None:
                highest = dirty_map.highest_flush_level(ref.db_id)
                if highest is not None and ref.level <= highest:
                    yield from self._flush_in(run, ref, allow_subtree=True)
            dirty_map.remove_level(key)

    def _log(self, run: CheckpointRun, node, provisional: Provisional, reason: str) -> LSN:
        db = self.db_tree.require_id(node.db_id)
        is_root = db.root is node
        lsn = self.node_logger.log_in(node, provisional, reason=reason)
        logged = LoggedIN(lsn, node.node_id, node.is_bin, db.name, node.level, provisional, is_root)
        run.result.logged.append(logged)
        self.stats.add("nFullBINFlush" if node.is_bin else "nFullINFlush")
        extra = f"; MapLN for {db.name}" if is_root and db.id != 0 else ""
        run.say(5, "%s%s", logged.describe(), extra)
        return lsn

    def _flush_in(self, run: CheckpointRun, ref: CheckpointReference, allow_subtree: bool) -> Iterator[Pause]:
        dirty_map = self.dirty_map
        db = self.db_tree.require_id(ref.db_id)
        if db is None:
            return
        highest = dirty_map.highest_flush_level(db.id) or ref.level
        root = db.tree.root_node()
        if root.node_id == ref.node_id:
            if root.dirty or root.last_logged_lsn.is_null:
                self._log(run, root, Provisional.NO, "checkpoint: root")
            yield run.pause(5, False, f"{ref.describe()} of {db.name}")
            return
        parent, index = self._find_parent(run, db, ref)
        if parent is None or index is None:
            yield run.pause(5, False)
            return
        if ref.level == BIN_LEVEL and allow_subtree and self.core.config.checkpointer_high_priority:
            self._flush_subtree(run, db, ref, parent, index)
            yield run.pause(5, False, f"the subtree of {parent.describe()} of {db.name}")
            return
        self._flush_child(run, db, ref, parent, index, highest)
        yield run.pause(5, False, f"{ref.describe()} of {db.name}")
        if ref.level != BIN_LEVEL or not allow_subtree:
            return
        # The bottom two levels, a subtree at a time: the other mapped BINs of this parent, then the parent.
        for child_id in list(parent.node_ids):
            if child_id == ref.node_id:
                continue
            sibling = dirty_map.remove_node(db.id, BIN_LEVEL, child_id)
            if sibling is not None:
                yield from self._flush_in(run, sibling, allow_subtree=False)
        highest = dirty_map.highest_flush_level(db.id) or highest
        if parent.level <= highest:
            parent_ref = dirty_map.remove_node(db.id, parent.level, parent.node_id)
            if parent_ref is not None:
                yield from self._flush_in(run, parent_ref, allow_subtree=False)

    def _find_parent(self, run: CheckpointRun, db, ref: CheckpointReference):
        """A Btree search for the parent of ``ref`` (counted); (parent, slot) or a None when it is gone."""
        run.result.parent_searches += 1
        parent, index, _ = db.tree.find_parent(ref.id_key, ref.level, ref.node_id)
        if parent is None or index is None:
            if parent is not None and parent.level > ref.level:
                self.dirty_map.add_in(parent, update_flush_levels=False)
            run.say(5, "%s (%s) is no longer in the tree", ref.describe(), db.name)
        return parent, index

    def _flush_child(self, run: CheckpointRun, db, ref: CheckpointReference, parent, index: int, highest: int) -> None:
        """Log the node of ``ref`` (slot ``index`` of ``parent``) if it must be; its parent joins the map."""
        # Like JE: the parent goes into the map even when this IN is no longer dirty.
        self.dirty_map.add_in(parent, update_flush_levels=False)
        provisional = checkpoint_provisional(ref.level, highest)
        node = parent.targets[index]
        must_log = node is not None and node.dirty
        if not must_log and provisional is Provisional.NO and parent.lsns[index] >= run.result.ckpt_start_lsn:
            node = db.tree.fetch_child(parent, index)
            if node.last_logged_provisional is not Provisional.NO:
                must_log = True  # evicted provisionally since CkptStart: the max flush level must be NO
        if must_log:
            self._log(run, node, provisional, f"checkpoint: level {ref.level}")
        else:
            run.say(5, "%s (%s, level %d) not dirty; parent %s added", ref.describe(), db.name, ref.level,
                    parent.describe())

    def _flush_subtree(self, run: CheckpointRun, db, ref: CheckpointReference, parent, index: int) -> None:
        """je.checkpointer.highPriority: the mapped BINs of ``parent`` and then ``parent`` itself, in one
        stretch with no pause (nothing runs between them: the parent stays latched), found through
        the parent's slots and its parent pointer after the one Btree search that found ``parent``."""
        dirty_map = self.dirty_map
        siblings = [dirty_map.remove_node(db.id, BIN_LEVEL, child_id) for child_id in parent.node_ids
                    if child_id != ref.node_id]
        for bin_ref in [ref] + [r for r in siblings if r is not None]:
            highest = dirty_map.highest_flush_level(db.id) or bin_ref.level
            self._flush_child(run, db, bin_ref, parent, parent.index_of_child(bin_ref.node_id), highest)
        highest = dirty_map.highest_flush_level(db.id) or parent.level
        parent_ref = dirty_map.remove_node(db.id, parent.level, parent.node_id) if parent.level <= highest else None
        if parent_ref is None:
            return
        if db.tree.root_node() is parent:
            if parent.dirty or parent.last_logged_lsn.is_null:
                self._log(run, parent, Provisional.NO, "checkpoint: root")
            return
        grandparent = parent.parent  # resident, since its child is: no search
        assert grandparent is not None, f"{parent.describe()} is resident without its parent"
        self._flush_child(run, db, parent_ref, grandparent, grandparent.index_of_child(parent.node_id), highest)


CHECKPOINTER = impl.hot_spot(Checkpointer, twin=False, project="checkpointer")

__all__ = ["Checkpointer", "CheckpointRun", "CheckpointResult", "LoggedIN", "Pause", "CHECKPOINTER",
           "checkpoint_provisional"]
