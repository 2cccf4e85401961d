"""What the checkpointer project's tests share: a dirty map of the chosen class (the reference's, or the
student's: see exercises/projects/conftest.py) over a tree that minidb's own engine built, so that the
map's milestone runs before the student's checkpointer does."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from minidb import impl
from minidb.logstore.checkpoint import DIRTY_IN_MAP

from tests.logstore.helpers import fill, new_env


@dataclass
class MapSetup:
    env: object  # an Environment of minidb's own classes, its tree 3 levels deep
    db: object  # its database "t" (20 records in 4-slot nodes)
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
def map_setup():
    """A three-level tree checkpointed clean by minidb's own engine, then the chosen map over it."""
    with impl.using(impl.ENGINE):
        _, env = new_env()
        db = env.database("t")
        fill(db, 20)
        env.checkpoint(minimize_recovery_time=True)
    dm = DIRTY_IN_MAP.call(env.core, env.db_by_id, env.evictor.resident_nodes)
    return MapSetup(env, db, dm)
