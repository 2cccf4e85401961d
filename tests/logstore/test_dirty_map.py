"""The dirty map: highest flush levels, and eviction coordinated with each checkpoint state."""

import pytest

from minidb.io import CrashMode
from minidb.log import Provisional
from minidb.logstore import CkptState
from minidb.logstore.tools.verify import live_but_obsolete, records, verify_tree

from tests.logstore.helpers import fill, new_env, reopen, resident_of_level


def three_level_env(**overrides):
    """20 records in 4-slot nodes: a 3-level tree, everything logged and clean."""
    disk, env = new_env(**overrides)
    db = env.database("t")
    written = fill(db, 20)
    env.checkpoint(minimize_recovery_time=True)
    assert env.db_tree.get("t").root.level == 3
    return disk, env, db, written


def bin_of(env, key: str):
    return env.db_tree.get("t").tree.search(key.encode())


# -- highest flush levels ---------------------------------------------------------------------

def test_a_dirty_bin_asks_for_level_2():
    _, env, db, _ = three_level_env()
    db.put("key005", "changed")
    run = env.checkpointer.start()
    run.through(4)
    snapshot = run.result.dirty_map
    levels = snapshot.by_level()
    db_id = env.db_tree.get("t").id
    assert [r.node_id for r in levels[(0, 1)] if r.db_id == db_id] == [bin_of(env, "key005").node_id]
    assert dict(snapshot.highest_flush_levels)[db_id] == 2
    run.finish()


def test_a_dirty_upper_in_asks_for_its_own_level_and_a_dirty_root_for_its_level():
    _, env, db, _ = three_level_env()
    db_id = env.db_tree.get("t").id
    target = bin_of(env, "key005")
    parent = target.parent
    db.put("key005", "changed")
    env.evictor.evict(target)  # logged NO (no checkpoint): its level-2 parent is now dirty
    assert parent.dirty and not env.db_tree.get("t").root.dirty
    run = env.checkpointer.start()
    run.through(4)
    assert dict(run.result.dirty_map.highest_flush_levels)[db_id] == 2
    run.finish()
    # Evict the level-2 IN (its BINs first): the root becomes dirty, and asks for level 3.
    for child in list(parent.resident_children()):
        env.evictor.evict(child)
    db.put("key999", "x")  # keeps something else dirty too
    env.evictor.evict(parent)
    assert env.db_tree.get("t").root.dirty
    run = env.checkpointer.start()
    run.through(4)
    assert dict(run.result.dirty_map.highest_flush_levels)[db_id] == 3
    run.finish()


def test_minimize_recovery_time_flushes_up_to_the_root():
    _, env, db, _ = three_level_env()
    db.put("key005", "changed")
    result = env.checkpoint(minimize_recovery_time=True)
    assert result.highest_flush_levels["t"] == 3
    flags = {(l.level, l.provisional) for l in result.logged if l.db_name == "t"}
    assert flags == {(1, Provisional.YES), (2, Provisional.BEFORE_CKPT_END), (3, Provisional.NO)}


def test_the_mapping_tree_is_flushed_to_its_root_last():
    _, env, db, _ = three_level_env()
    db.put("key005", "changed")
    result = env.checkpoint(minimize_recovery_time=True)
    assert result.highest_flush_levels["_mapping"] == 2
    names = [l.db_name for l in result.logged]
    assert names[-1] == "_mapping" and names[-2] == "_mapping"
    assert result.logged[-1].is_root and result.logged[-1].provisional is Provisional.NO


# -- coordinate_eviction_with_checkpoint: the JE documentation's table ------------------------------------------

def test_coordinate_in_state_none():
    _, env, _, _ = three_level_env()
    dm = env.dirty_map
    assert dm.state is CkptState.NONE
    bin_node = bin_of(env, "key005")
    assert dm.coordinate_eviction_with_checkpoint(bin_node.db_id, 1, bin_node.parent) is Provisional.NO
    assert dm.coordinate_eviction_with_checkpoint(bin_node.db_id, 3, None) is Provisional.NO


def test_coordinate_while_the_map_is_incomplete_adds_the_parent():
    _, env, db, _ = three_level_env()
    run = env.checkpointer.start()
    run.through(3)
    dm = env.dirty_map
    assert dm.state is CkptState.DIRTY_MAP_INCOMPLETE
    bin_node = bin_of(env, "key005")
    parent = bin_node.parent
    db_id = bin_node.db_id
    assert not dm.contains(db_id, 2, parent.node_id)
    # Not the root: the parent goes into the map, as if found dirty; the IN is below its level: YES.
    assert dm.coordinate_eviction_with_checkpoint(db_id, 1, parent) is Provisional.YES
    assert dm.contains(db_id, 2, parent.node_id)
    assert dm.highest_flush_level(db_id) == 2
    # The root (no parent): at or above the highest flush level: NO.
    assert dm.coordinate_eviction_with_checkpoint(db_id, 3, None) is Provisional.NO
    # A level below the highest flush level without a parent given would be YES.
    dm.raise_flush_level(db_id, 3)
    assert dm.coordinate_eviction_with_checkpoint(db_id, 2, None) is Provisional.YES
    run.finish()


def test_coordinate_once_the_map_is_complete():
    _, env, db, _ = three_level_env()
    db.put("key005", "changed")
    run = env.checkpointer.start()
    run.through(4)
    dm = env.dirty_map
    assert dm.state is CkptState.DIRTY_MAP_COMPLETE
    bin_node = bin_of(env, "key005")
    before = len(dm)
    # Root: NO. Not the root: YES, at any level, and the map does not change.
    assert dm.coordinate_eviction_with_checkpoint(bin_node.db_id, 3, None) is Provisional.NO
    assert dm.coordinate_eviction_with_checkpoint(bin_node.db_id, 1, bin_node.parent) is Provisional.YES
    assert dm.coordinate_eviction_with_checkpoint(bin_node.db_id, 2, bin_node.parent.parent) is Provisional.YES
    assert len(dm) == before
    run.finish()
    assert dm.state is CkptState.NONE and len(dm) == 0


# -- eviction during each checkpoint state, in the real engine ----------------------------------------

def _to_step_4_pause(run):
    while True:
        pause = run.advance()
        if pause.step == 4 and not pause.step_done:
            return pause


WHERE = {
    # name: (how far to run the checkpoint before evicting, the state then, the JE documentation's answer)
    "no checkpoint": (None, CkptState.NONE, Provisional.NO),
    "after CkptStart": (lambda run: run.through(3), CkptState.DIRTY_MAP_INCOMPLETE, Provisional.YES),
    "while the map is built": (_to_step_4_pause, CkptState.DIRTY_MAP_INCOMPLETE, Provisional.YES),
    "map complete": (lambda run: run.through(4), CkptState.DIRTY_MAP_COMPLETE, Provisional.YES),
    "during the flush": (lambda run: run.until(5), CkptState.DIRTY_MAP_COMPLETE, Provisional.YES),
    "between CkptEnd and NONE": (lambda run: run.through(8), CkptState.DIRTY_MAP_COMPLETE, Provisional.YES),
}


@pytest.mark.parametrize("where", list(WHERE))
def test_eviction_during_each_checkpoint_state(where):
    disk, env, db, written = three_level_env()
    expected = {k.encode(): f"v-{k}".encode() for k in written}
    db.put("key001", "before")  # dirty before CkptStart: in the map
    expected[b"key001"] = b"before"
    advance, state, answer = WHERE[where]
    run = None
    if advance is not None:
        run = env.checkpointer.start()
        advance(run)
    assert env.dirty_map.state is state
    db.put("key017", "evicted")  # a BIN the evictor will log now
    expected[b"key017"] = b"evicted"
    victim = bin_of(env, "key017")
    lsn = env.evictor.evict(victim)
    entry = env.log.read(lsn)
    assert entry.type_name == "BIN" and entry.provisional is answer
    if state is CkptState.DIRTY_MAP_INCOMPLETE:
        assert env.dirty_map.contains(victim.db_id, 2, env.db_tree.get("t").tree.search(b"key017").parent.node_id)
    if run is not None:
        run.finish()
    env.checkpoint()
    env.sync()
    env.crash(CrashMode.nothing())
    recovered = reopen(disk)
    assert records(recovered)["t"] == expected
    assert verify_tree(recovered) == [] and live_but_obsolete(recovered) == []


def test_an_in_of_the_max_flush_level_evicted_provisionally_is_logged_again_non_provisionally():
    disk, env, db, _ = three_level_env()
    db.put("key001", "changed")  # a dirty BIN: highest flush level 2
    target = bin_of(env, "key001")
    level2 = target.parent
    run = env.checkpointer.start()
    run.through(4)
    # Evict the BIN and then its level-2 parent: both logged YES (map complete, not the root).
    env.evictor.evict(target)
    for child in list(level2.resident_children()):
        env.evictor.evict(child)
    lsn = env.evictor.evict(level2)
    assert env.log.read(lsn).provisional is Provisional.YES
    result = run.finish()
    again = [l for l in result.logged if l.node_id == level2.node_id]
    assert [l.provisional for l in again] == [Provisional.NO]
    assert again[0].lsn > lsn
    env.crash(CrashMode.nothing())
    recovered = reopen(disk)
    assert records(recovered)["t"][b"key001"] == b"changed"
    assert live_but_obsolete(recovered) == []


def test_a_split_at_the_max_flush_level_during_the_flush_raises_it():
    disk, env, db, written = three_level_env()
    db.put("key001", "changed")
    db_id = env.db_tree.get("t").id
    run = env.checkpointer.start()
    run.through(4)
    assert env.dirty_map.highest_flush_level(db_id) == 2
    level2 = bin_of(env, "key001").parent
    before = level2.n_entries
    extra = []
    i = 0
    while env.dirty_map.highest_flush_level(db_id) == 2:
        key = f"key000-{i:02d}"
        db.put(key, "split")
        extra.append(key)
        i += 1
        assert i < 40, "the level-2 IN never split"
    assert level2.n_entries <= before + 4
    assert any("max flush level raised to 3" in line for line in env.trace.lines)
    result = run.finish()
    # The splits cascaded: the max flush level follows them up, and the top is logged non-provisionally.
    top = result.highest_flush_levels["t"]
    assert top >= 3
    tops = [l for l in result.logged if l.db_name == "t" and l.level == top]
    assert tops and all(l.provisional is Provisional.NO for l in tops)
    env.crash(CrashMode.nothing())
    recovered = reopen(disk)
    found = records(recovered)["t"]
    assert found[b"key001"] == b"changed"
    assert all(found[k.encode()] == b"split" for k in extra)
    assert verify_tree(recovered) == [] and live_but_obsolete(recovered) == []


def test_resident_nodes_by_level_helper_sees_the_tree():
    _, env, _, _ = three_level_env()
    assert len(resident_of_level(env, "t", 3)) == 1
    assert len(resident_of_level(env, "t", 2)) >= 2
