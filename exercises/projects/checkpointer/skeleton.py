"""Project checkpointer: the log store's checkpointer and its dirty map, whole (see README.md).

Every log store environment builds its dirty map and its checkpointer
through the hot spots ``DIRTY_IN_MAP`` and ``CHECKPOINTER`` (the
environment's composition root, so every open, every recovery, the crash
tests and the tour); with ``--impl student --project checkpointer`` it
constructs the ``DirtyINMap`` and the ``Checkpointer`` of this file instead.
Every method below is one the engine (the evictor, splits, the mapping
tree, recovery, the environment, the given run driver), its pictures or its
tests call; its docstring is the contract.

The contracts, in one place (JE's ``Checkpointer`` and ``DirtyINMap``):

- **What a checkpoint promises.** Recovery reads INs from the last complete
  checkpoint's CkptStart and LNs from its firstActiveLSN. So every IN dirty
  at CkptStart must be logged after it, and be reachable from the mapping
  tree's root through INs that recovery replays (logged ``Provisional.NO``,
  or ``BEFORE_CKPT_END`` of a checkpoint that never ended), by the time
  CkptEnd is durable.
- **The ten steps**, each a stanza of :meth:`Checkpointer.checkpoint_steps`,
  each saying at least one trace line ``step N: ...`` (``run.say``) and
  ending with ``yield run.pause(N, True)``: 1 the cleaner's files to delete
  after this checkpoint; 2 the map's state DIRTY_MAP_INCOMPLETE; 3 CkptStart
  logged, firstActiveLSN noted after it (the CkptStart itself when no
  transaction is active); 4 the map built from the dirty resident INs
  (``run.pause(4, False, ...)`` after each IN examined), state
  DIRTY_MAP_COMPLETE; 5 the map flushed bottom up (``run.pause(5, False,
  ...)`` after each IN); 6 the hooks ``core.hooks.flush_vlsn_index`` called
  with the run; 7 ``utilization.flush()``; 8 CkptEnd logged and the log
  fsynced; 9 the files of step 1 deleted; 10 state NONE, the run done.
- **The dirty map by level.** The INs dirty at CkptStart, kept as
  ``CheckpointReference`` records by (rank, level), the mapping tree's
  levels after every other database's (``MAPPING_RANK``), with each
  database's *highest flush level*: the highest ``flush_level_of`` any of
  its INs taken into the map asks for (the mapping tree, and every database
  with ``minimize_recovery_time``, up to its root).
- **Bottom up.** No IN is logged before the INs of lower levels of its
  database that the map holds; logging a child dirties its parent, which
  joins the map and is logged in its turn, up to the highest flush level.
- **Provisional rules** (:func:`checkpoint_provisional`): an IN at (or
  above) its database's highest flush level is logged ``NO``; a BIN below it
  ``YES``; an IN in between ``BEFORE_CKPT_END``; a root always ``NO`` (its
  MapLN follows). An IN at the highest flush level that eviction logged
  provisionally after CkptStart is logged again, ``NO``.
- **Eviction.** The evictor asks :meth:`DirtyINMap.coordinate_eviction_with_checkpoint`
  how to log a dirty IN: state NONE, ``NO``; while the map is built, the
  parent joins the map (as if found dirty), then ``NO`` at or above the
  highest flush level, ``YES`` below; once it is built, ``NO`` for a root,
  ``YES`` for any other IN.
- **Splits.** A split logs both halves ``YES`` and tells the map; while the
  map is built their parents join it; during the flush, a split of an IN at
  the highest flush level raises that level by one and adds the parents.
- **One at a time.** A second ``start`` while a run is under way is a
  ``UserError``; a step that raises abandons the run (the given driver
  resets the map and clears ``current``).

Given, to build on: the run driver :class:`~minidb.logstore.checkpoint.run.CheckpointRun`
(``advance``, ``through``, ``until``, ``finish``, and for the steps ``begin``,
``say``, ``pause``, ``db_name``, ``result``, ``minimize_recovery_time``,
``env``); the records of :mod:`minidb.logstore.checkpoint.records`
(``CkptState``, ``CheckpointReference``, ``DirtyMapSnapshot``, ``STEP_NAMES``,
``LoggedIN``, ``CheckpointResult``, ``Pause``, ``MAPPING_RANK``); ``flush_level_of``
and ``BIN_LEVEL`` (:mod:`minidb.logstore.checkpoint.provisional`, exercise 10a);
the entry types ``CKPT_START`` and ``CKPT_END`` and their fields
(:mod:`minidb.logstore.logdef`); the environment's parts handed to the
constructors (the core: ``log_entry``, ``log``, ``config``, ``hooks``, ``trace``,
``now_ms``, ``last_node_id``; the node logger's ``log_in``; the trees'
``find_parent``, ``fetch_child``, ``root_node``, ``search``; the mapping tree;
the transaction manager's ``first_active_lsn``; the utilization tracker's
``flush``; the cleaner's ``files_to_delete`` and ``delete_files``). Not the
reference checkpointer or dirty map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minidb.log import LSN, Provisional
from minidb.logstore.checkpoint.provisional import BIN_LEVEL, flush_level_of  # noqa: F401
from minidb.logstore.checkpoint.records import (  # noqa: F401
    MAPPING_RANK,
    STEP_NAMES,
    CheckpointReference,
    CheckpointResult,
    CkptState,
    DirtyMapSnapshot,
    LoggedIN,
    Pause,
)
from minidb.logstore.checkpoint.run import CheckpointRun
from minidb.logstore.logdef import CKPT_END, CKPT_START, MAPPING_DB_ID  # noqa: F401

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from minidb.logstore.cleaner.utilization import UtilizationTracker
    from minidb.logstore.core import EnvCore
    from minidb.logstore.mapping_tree import DbTree
    from minidb.logstore.tree.in_node import IN
    from minidb.logstore.tree.node_logger import NodeLogger
    from minidb.logstore.tree.tree import DatabaseImpl
    from minidb.logstore.txn.txn import TxnManager


def checkpoint_provisional(level: int, max_flush_level: int) -> Provisional:
    """The flag the checkpointer logs an IN of ``level`` with, when its database's highest flush level is
    ``max_flush_level``: ``NO`` at or above it, ``YES`` for a BIN (level ``BIN_LEVEL``) below it,
    ``BEFORE_CKPT_END`` for an upper IN below it."""
    raise NotImplementedError("checkpoint_provisional")


class DirtyINMap:
    """The checkpoint's dirty map: the INs to flush by level, the highest flush levels, the state."""

    def __init__(self, core: EnvCore, database_of: Callable[[int], DatabaseImpl],
                 resident_nodes: Callable[[], list[IN]]):
        """``database_of(db_id)``: a database's ``DatabaseImpl`` (its ``tree``, ``root``, ``name``);
        ``resident_nodes()``: the cache's INs (what step 4 examines; a node's ``dirty``, ``resident``,
        ``level``, ``is_bin``, ``node_id``, ``db_id``, ``id_key``, ``last_logged_lsn``, ``parent``).

        Attributes the engine reads: ``state`` (a ``CkptState``, NONE until a checkpoint begins);
        ``flush_done`` (False; your checkpointer sets it once its step 5 is over)."""
        raise NotImplementedError("DirtyINMap.__init__")

    # -- building (steps 2 and 4) ----------------------------------------------------------------
    def begin_checkpoint(self, flush_all: bool) -> None:
        """Step 2: an empty map becomes DIRTY_MAP_INCOMPLETE; ``flush_all`` (minimize_recovery_time): every
        database's highest flush level is its root level."""
        raise NotImplementedError("DirtyINMap.begin_checkpoint")

    def select_dirty_ins_for_checkpoint(self) -> Iterator[IN]:
        """Step 4: examine the resident INs in node-id order (skipping one evicted meanwhile), take every
        dirty one into the map, counting it in its database's highest flush level; yield each IN examined
        (the checkpoint pauses after each)."""
        raise NotImplementedError("DirtyINMap.select_dirty_ins_for_checkpoint")

    def complete(self) -> None:
        """The end of step 4: DIRTY_MAP_INCOMPLETE becomes DIRTY_MAP_COMPLETE."""
        raise NotImplementedError("DirtyINMap.complete")

    def add_in(self, node: IN, update_flush_levels: bool) -> bool:
        """Take ``node`` into the map (a ``CheckpointReference`` at its database's rank and its level); count it
        in the highest flush level if ``update_flush_levels``. False if the map held it already."""
        raise NotImplementedError("DirtyINMap.add_in")

    # -- flushing (step 5) -------------------------------------------------------------------------
    def lowest_level_set(self) -> tuple[int, int] | None:
        """The lowest non-empty (rank, level) of the map (every database's level 1 before any level 2, the
        mapping tree's levels last), None when the map is empty."""
        raise NotImplementedError("DirtyINMap.lowest_level_set")

    def remove_next_node(self, key: tuple[int, int]) -> CheckpointReference | None:
        """Take out of the map the reference of (rank, level) ``key`` with the smallest node id; None if none."""
        raise NotImplementedError("DirtyINMap.remove_next_node")

    def remove_node(self, db_id: int, level: int, node_id: int) -> CheckpointReference | None:
        """Take IN ``node_id`` of ``level`` of ``db_id`` out of the map; its reference, or None if not there."""
        raise NotImplementedError("DirtyINMap.remove_node")

    # -- what the engine calls -----------------------------------------------------------------------

    def reset(self) -> None:
        """Empty the map, forget every highest flush level, state NONE (step 10, or an abandoned run)."""
        raise NotImplementedError("DirtyINMap.reset")

    def coordinate_eviction_with_checkpoint(self, db_id: int, target_level: int, parent: IN | None) -> Provisional:
        """How the evictor must log a dirty IN of ``target_level`` of database ``db_id`` (``parent`` None: the
        root): the rules of the module documentation. While the map is built, ``parent`` joins it and its
        database's highest flush level counts it."""
        raise NotImplementedError("DirtyINMap.coordinate_eviction_with_checkpoint")

    def coordinate_split_with_checkpoint(self, db: DatabaseImpl, splits: list[tuple[IN, IN]]) -> None:
        """A split of ``db`` logged the (left, right) pairs ``splits``, bottom up, each half ``YES``: while the
        map is built, the halves' parents join it; while it is flushed (before the flush is done), a split
        of an IN at ``db``'s highest flush level raises that level by one and the halves' parents join the
        map. Nothing in state NONE."""
        raise NotImplementedError("DirtyINMap.coordinate_split_with_checkpoint")

    def note_map_ln_logged(self, mapping: DatabaseImpl, key: bytes) -> None:
        """A checkpoint logged a root, and so a MapLN under ``key`` in the mapping tree ``mapping``: while a
        checkpoint has not finished its flush, the mapping tree's BIN holding ``key`` joins the map."""
        raise NotImplementedError("DirtyINMap.note_map_ln_logged")

    def forget_database(self, db_id: int) -> None:
        """Database ``db_id`` was removed: none of its INs stays in the map, nor its highest flush level."""
        raise NotImplementedError("DirtyINMap.forget_database")

    def highest_flush_level(self, db_id: int) -> int | None:
        """The highest flush level of ``db_id`` in this checkpoint (None: none of its INs was taken)."""
        raise NotImplementedError("DirtyINMap.highest_flush_level")

    def raise_flush_level(self, db_id: int, level: int) -> None:
        """Make ``db_id``'s highest flush level at least ``level``."""
        raise NotImplementedError("DirtyINMap.raise_flush_level")

    def contains(self, db_id: int, level: int, node_id: int) -> bool:
        """Whether the map holds (still to flush) IN ``node_id`` of ``level`` of database ``db_id``."""
        raise NotImplementedError("DirtyINMap.contains")

    def __len__(self) -> int:
        """How many INs the map holds, still to flush."""
        raise NotImplementedError("DirtyINMap.__len__")

    def snapshot(self) -> DirtyMapSnapshot:
        """The map as a ``DirtyMapSnapshot``: the state; the non-empty levels by (rank, level) ascending,
        each with its references sorted by (db id, node id); the highest flush levels by db id."""
        raise NotImplementedError("DirtyINMap.snapshot")


class Checkpointer:
    """Runs checkpoints, on demand and by log growth (``config.checkpoint_bytes_interval``)."""

    def __init__(self, core: EnvCore, utilization: UtilizationTracker, dirty_map: DirtyINMap,
                 node_logger: NodeLogger, db_tree: DbTree, txn_manager: TxnManager):
        """The environment's parts this checkpointer works with (``dirty_map`` is the one the environment
        built, the one the evictor consults).

        Attributes the engine and the given run read and write: ``core``, ``dirty_map``, ``db_tree``;
        ``cleaner`` and ``environment`` (None; the environment sets them after building the cleaner);
        ``last_checkpoint_id`` (0; a new run takes the next id); ``last_ckpt_start``, ``last_first_active``,
        ``last_ckpt_end`` (NULL_LSN until a checkpoint ends or recovery finds one); ``current`` (the run under
        way, else None); ``history`` (every finished ``CheckpointResult``, in order); ``stats``
        (``Stats("checkpointer", ["nCheckpoints", "nFullINFlush", "nFullBINFlush"])``, counted as named)."""
        raise NotImplementedError("Checkpointer.__init__")

    def start(self, invoker: str = "api", minimize_recovery_time: bool = False) -> CheckpointRun:
        """Begin a checkpoint (``CheckpointRun(self, invoker, minimize_recovery_time)``, under the core's latch,
        on a usable environment) and return it unstarted, as ``current``; a ``UserError`` if one is
        under way."""
        raise NotImplementedError("Checkpointer.start")

    def run(self, invoker: str = "api", minimize_recovery_time: bool = False) -> CheckpointResult:
        """A whole checkpoint: started and finished; its result."""
        raise NotImplementedError("Checkpointer.run")

    def checkpoint_steps(self, run: CheckpointRun) -> Iterator[Pause]:
        """The ten steps of ``run`` (the module documentation), a generator of pauses that the run drives.
        Fills ``run.result``: the files of step 1, ``ckpt_start_lsn``, ``first_active_lsn``, the map's
        snapshot after step 4, each IN logged in step 5 as a ``LoggedIN`` (in log order), the highest flush
        levels by database name, the summaries of step 7, ``ckpt_end_lsn``. CkptEnd's fields:
        ``checkpoint_id``, ``invoker``, ``time_ms``, ``ckpt_start_lsn``, ``first_active_lsn``, ``root_lsn`` (the
        mapping tree's), ``last_node_id``, ``last_db_id``, ``last_txn_id``, ``files_to_delete``. After the
        fsync of step 8: ``last_ckpt_start``, ``last_first_active``, ``last_ckpt_end`` and the bytes interval
        start from this checkpoint. Step 10 resets the map, clears ``current``, counts ``nCheckpoints``,
        marks the run ``done`` and appends the result to ``history``. Hooks
        (``core.hooks``): ``cleaner_files_to_delete`` and ``delete_cleaned_files`` stand in for the cleaner's
        when set; each ``flush_vlsn_index`` hook is called with the run at step 6."""
        raise NotImplementedError("Checkpointer.checkpoint_steps")

    def continue_after(self, checkpoint_id: int, ckpt_start: LSN, ckpt_end: LSN) -> None:
        """Recovery found the last checkpoint (its id, CkptStart and CkptEnd): the next one takes the next
        id, and ``last_ckpt_start`` and ``last_ckpt_end`` are these."""
        raise NotImplementedError("Checkpointer.continue_after")

    def bytes_since_last_end(self) -> int:
        """Log bytes written (``core.log.stats["nBytes"]``) since the last CkptEnd this checkpointer wrote
        (since the log opened, before the first)."""
        raise NotImplementedError("Checkpointer.bytes_since_last_end")

    def maybe_checkpoint(self) -> CheckpointResult | None:
        """The daemon's check after each operation: a whole checkpoint (invoker ``"bytes interval"``) if
        ``config.checkpoint_bytes_interval`` is set, no run is under way and the log has grown by at least
        the interval since the last CkptEnd; else None."""
        raise NotImplementedError("Checkpointer.maybe_checkpoint")
