"""What a checkpoint reports and what its dirty map holds, as plain records (given, not the checkpointer).

The checkpointer (:mod:`.checkpointer`) and its dirty map (:mod:`.dirty_map`)
are the engine's component; these records are the language they speak to
the rest of the engine: the pictures of :mod:`minidb.viz.checkpoint`, the
tour, the crash tests, the worked cases and the evictor read them, and a
checkpointer written from the contracts alone returns them.

- :class:`CkptState`: the map's state, which the evictor consults::

      NONE                  no checkpoint; the map is empty
      DIRTY_MAP_INCOMPLETE  steps 2-4: the map is being built
      DIRTY_MAP_COMPLETE    steps 4-10: the map is built; INs are being flushed

- :class:`CheckpointReference`: what the map keeps of an IN, enough to find
  it again by a Btree search (JE's ``CheckpointReference``);
- :class:`DirtyMapSnapshot`: the map as data, by (rank, level), the mapping
  tree's levels after every other database's (rank :data:`MAPPING_RANK`,
  JE's ``0x20000 + level``);
- :data:`STEP_NAMES`, :class:`Pause`, :class:`LoggedIN` and
  :class:`CheckpointResult`: a checkpoint's steps, where a stepped run
  stopped, each IN it logged, and the whole run (its CkptStart, CkptEnd and
  firstActiveLSN, the map after step 4, the summaries of step 7, the trace).

No byte format here: the CkptStart and CkptEnd entries are the log store's
entry types (:mod:`minidb.logstore.logdef`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from minidb.log import LSN, NULL_LSN, Provisional
from minidb.logstore.tree.in_node import node_label

MAPPING_RANK = 1  # the mapping tree's levels come after every other database's (JE: 0x20000 + level)

STEP_NAMES = {
    1: "cleaner: files to delete",
    2: "dirty map incomplete",
    3: "log CkptStart",
    4: "build the dirty map",
    5: "flush the dirty map",
    6: "flush the VLSN index",
    7: "flush utilization",
    8: "log CkptEnd",
    9: "delete cleaned files",
    10: "dirty map state NONE",
}


@dataclass(frozen=True)
class Pause:
    """Where a checkpoint run stopped: in (or at the end of) step ``step``."""

    step: int
    step_done: bool
    state: CkptState
    message: str


@dataclass(frozen=True)
class LoggedIN:
    """One IN the checkpoint logged."""

    lsn: LSN
    node_id: int
    is_bin: bool
    db_name: str
    level: int
    provisional: Provisional
    is_root: bool

    def describe(self) -> str:
        return (f"{node_label(self.node_id, self.is_bin, self.is_root)} ({self.db_name}, level {self.level}) "
                f"-> {self.lsn} {self.provisional.name}")


@dataclass
class CheckpointResult:
    checkpoint_id: int
    invoker: str
    ckpt_start_lsn: LSN = NULL_LSN
    ckpt_end_lsn: LSN = NULL_LSN
    first_active_lsn: LSN = NULL_LSN
    files_to_delete: list[int] = field(default_factory=list)
    dirty_map: DirtyMapSnapshot | None = None
    highest_flush_levels: dict[str, int] = field(default_factory=dict)
    logged: list[LoggedIN] = field(default_factory=list)
    summaries: list[tuple[int, LSN]] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    parent_searches: int = 0  # Btree searches for a parent in step 5 (fewer with checkpointer_high_priority)

    def provisional_of(self, node_id: int) -> list[Provisional]:
        return [l.provisional for l in self.logged if l.node_id == node_id]


class CkptState(enum.Enum):
    NONE = "NONE"
    DIRTY_MAP_INCOMPLETE = "DIRTY_MAP_INCOMPLETE"
    DIRTY_MAP_COMPLETE = "DIRTY_MAP_COMPLETE"


@dataclass(frozen=True)
class CheckpointReference:
    """What the map keeps of an IN (JE's ``CheckpointReference``): enough to find it again."""

    db_id: int
    node_id: int
    level: int
    is_root: bool
    is_bin: bool
    id_key: bytes
    lsn: LSN

    def describe(self) -> str:
        return node_label(self.node_id, self.is_bin, self.is_root)


@dataclass(frozen=True)
class DirtyMapSnapshot:
    """The map as plain data, for pictures, traces and tests."""

    state: CkptState
    levels: tuple[tuple[int, int, tuple[CheckpointReference, ...]], ...]  # (rank, level, refs)
    highest_flush_levels: tuple[tuple[int, int], ...]  # (db id, level)

    def by_level(self) -> dict[tuple[int, int], list[CheckpointReference]]:
        return {(rank, level): list(refs) for rank, level, refs in self.levels}

    def lines(self, db_names: dict[int, str] | None = None) -> list[str]:
        names = db_names or {}
        out = []
        for rank, level, refs in self.levels:
            tree = "mapping tree " if rank == MAPPING_RANK else ""
            shown = ", ".join(f"{r.describe()} ({names.get(r.db_id, r.db_id)})" for r in refs)
            out.append(f"{tree}level {level}: {shown}")
        for db_id, level in self.highest_flush_levels:
            out.append(f"highest flush level of {names.get(db_id, db_id)}: {level}")
        return out


__all__ = ["MAPPING_RANK", "CkptState", "CheckpointReference", "DirtyMapSnapshot", "STEP_NAMES", "Pause", "LoggedIN",
           "CheckpointResult"]
