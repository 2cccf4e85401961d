"""What the checkpointer project's tests share: for milestone 1, a dirty map of the chosen class (the
reference's, or the student's: see exercises/projects/conftest.py) over a real tree, in an environment whose
checkpointer is a stand-in that never checkpoints, so that the map's milestone runs before the student's
checkpointer does (and in the student edition, which has no other checkpointer)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from minidb.log import NULL_LSN
from minidb.logstore.checkpoint import CHECKPOINTER, DIRTY_IN_MAP, CheckpointResult

from tests.logstore.helpers import fill, new_env


class NoCheckpoints:
    """A checkpointer that takes no checkpoint: what an environment asks of one, answered with nothing."""

    def __init__(self, core, utilization, dirty_map, node_logger, db_tree, txn_manager):
        self.dirty_map = dirty_map
        self.cleaner = self.environment = self.current = None
        self.last_ckpt_start = self.last_first_active = self.last_ckpt_end = NULL_LSN
        self.history: list[CheckpointResult] = []

    def run(self, invoker: str = "api", minimize_recovery_time: bool = False) -> CheckpointResult:
        return CheckpointResult(0, invoker)

    def continue_after(self, checkpoint_id, ckpt_start, ckpt_end) -> None:
        pass

    def bytes_since_last_end(self) -> int:
        return 0

    def maybe_checkpoint(self) -> None:
        return None


@dataclass
class MapSetup:
    env: object  # an Environment whose database "t" holds 20 records in 4-slot nodes: a 3-level tree
    db: object
    dm: object  # a DirtyINMap of the chosen class, over the environment's tree and cache

    @property
    def db_id(self) -> int:
        return self.env.db_tree.get("t").id

    def bin_of(self, key: str):
        return self.env.db_tree.get("t").tree.search(key.encode())

    def build(self, flush_all: bool = False) -> list:
        """Steps 2 and 4 on the map: every IN examined."""
        self.dm.begin_checkpoint(flush_all)
        examined = list(self.dm.select_dirty_ins_for_checkpoint())
        self.dm.complete()
        return examined

    def refs(self, rank: int, level: int) -> list[int]:
        """The node ids of database "t" the map's snapshot holds at (rank, level)."""
        return [r.node_id for r in self.dm.snapshot().by_level().get((rank, level), []) if r.db_id == self.db_id]


@pytest.fixture
def map_setup(monkeypatch):
    """A three-level tree with every IN clean (as after a checkpoint), and a new map of the chosen class."""
    monkeypatch.setattr(CHECKPOINTER, "call", NoCheckpoints)
    _, env = new_env()
    db = env.database("t")
    fill(db, 20)
    assert env.db_tree.get("t").root.level == 3
    for node in env.evictor.resident_nodes():
        node.dirty = False
    dm = DIRTY_IN_MAP.call(env.core, env.db_by_id, env.evictor.resident_nodes)
    return MapSetup(env, db, dm)
