"""Milestone 1: the dirty map alone, by level, with its highest flush levels, the order it gives its INs up
in, and what the evictor gets from it in each state.

Each test builds your ``DirtyINMap`` (through the hot spot ``DIRTY_IN_MAP``) over a three-level tree with
every IN clean, in an environment whose checkpointer is a stand-in that takes no checkpoint, and drives
the map as a checkpoint and the evictor would.
"""

from minidb.log import Provisional
from minidb.logstore import CkptState
from minidb.logstore.checkpoint import MAPPING_RANK


def test_a_new_map_is_empty_in_state_none(map_setup):
    dm = map_setup.dm
    assert dm.state is CkptState.NONE and len(dm) == 0
    assert dm.snapshot().levels == () and dm.snapshot().state is CkptState.NONE


def test_the_map_takes_the_dirty_ins_by_level_and_a_dirty_bin_asks_for_level_2(map_setup):
    s = map_setup
    s.db.put("key005", "changed")
    s.db.put("key017", "changed")
    examined = s.build()
    assert sorted(n.node_id for n in examined) == [n.node_id for n in examined]  # node-id order
    assert len(examined) == len(s.env.evictor.resident_nodes())
    assert s.dm.state is CkptState.DIRTY_MAP_COMPLETE
    assert sorted(s.refs(0, 1)) == sorted({s.bin_of("key005").node_id, s.bin_of("key017").node_id})
    assert s.refs(0, 2) == [] and s.dm.highest_flush_level(s.db_id) == 2
    assert dict(s.dm.snapshot().highest_flush_levels)[s.db_id] == 2
    assert len(s.dm) == sum(len(refs) for _, _, refs in s.dm.snapshot().levels)


def test_a_dirty_root_asks_for_its_own_level_and_flush_all_for_the_root(map_setup):
    s = map_setup
    s.db.put("key005", "changed")
    root = s.env.db_tree.get("t").root
    root.dirty = True
    s.build()
    assert s.refs(0, 3) == [root.node_id] and s.dm.highest_flush_level(s.db_id) == 3
    s.dm.reset()
    assert s.dm.state is CkptState.NONE and len(s.dm) == 0 and s.dm.highest_flush_level(s.db_id) is None
    root.dirty = False
    s.build(flush_all=True)
    assert s.dm.highest_flush_level(s.db_id) == 3  # minimize_recovery_time: up to the root


def test_the_map_gives_its_ins_up_bottom_up_the_mapping_tree_last(map_setup):
    s = map_setup
    s.db.put("key005", "changed")
    mapping = s.env.db_tree.mapping
    mapping_bin = mapping.tree.search(b"t")
    mapping_bin.dirty = True
    s.build()
    assert s.dm.lowest_level_set() == (0, 1)
    assert s.dm.snapshot().levels[-1][0] == MAPPING_RANK
    order = []
    while (key := s.dm.lowest_level_set()) is not None:
        ref = s.dm.remove_next_node(key)
        if ref is None:
            break
        order.append((key, ref.node_id))
    assert [key for key, _ in order] == sorted(key for key, _ in order)
    assert order[-1][0][0] == MAPPING_RANK and len(s.dm) == 0


def test_add_in_and_remove_node(map_setup):
    s = map_setup
    s.dm.begin_checkpoint(False)
    parent = s.bin_of("key005").parent
    assert s.dm.add_in(parent, update_flush_levels=False) is True
    assert s.dm.add_in(parent, update_flush_levels=False) is False
    assert s.dm.contains(s.db_id, 2, parent.node_id) and s.dm.highest_flush_level(s.db_id) is None
    assert s.dm.remove_node(s.db_id, 2, parent.node_id).node_id == parent.node_id
    assert not s.dm.contains(s.db_id, 2, parent.node_id) and s.dm.remove_node(s.db_id, 2, parent.node_id) is None


def test_eviction_in_state_none_logs_non_provisionally(map_setup):
    s = map_setup
    bin_node = s.bin_of("key005")
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 1, bin_node.parent) is Provisional.NO
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 3, None) is Provisional.NO
    assert len(s.dm) == 0


def test_eviction_while_the_map_is_built_adds_the_parent(map_setup):
    s = map_setup
    s.db.put("key001", "changed")
    s.dm.begin_checkpoint(False)
    bin_node = s.bin_of("key005")
    parent = bin_node.parent
    assert not s.dm.contains(s.db_id, 2, parent.node_id)
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 1, parent) is Provisional.YES
    assert s.dm.contains(s.db_id, 2, parent.node_id) and s.dm.highest_flush_level(s.db_id) == 2
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 3, None) is Provisional.NO
    s.dm.raise_flush_level(s.db_id, 3)
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 2, None) is Provisional.YES


def test_eviction_once_the_map_is_complete_leaves_the_map_alone(map_setup):
    s = map_setup
    s.db.put("key005", "changed")
    s.build()
    bin_node = s.bin_of("key005")
    before = s.dm.snapshot()
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 3, None) is Provisional.NO
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 1, bin_node.parent) is Provisional.YES
    assert s.dm.coordinate_eviction_with_checkpoint(s.db_id, 2, bin_node.parent.parent) is Provisional.YES
    assert s.dm.snapshot() == before


def test_a_removed_database_leaves_the_map(map_setup):
    s = map_setup
    s.db.put("key005", "changed")
    s.build()
    s.dm.forget_database(s.db_id)
    assert s.refs(0, 1) == [] and s.dm.highest_flush_level(s.db_id) is None
