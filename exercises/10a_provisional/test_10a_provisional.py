"""Tests of exercise 10a: ``is_provisional`` and ``highest_flush_levels``.

Every test builds a real log store environment on a simulated disk and takes its LSNs, flags and
dirty nodes from what the engine logged; the expected answers come from the situation the test built
(which checkpoint ended, which nodes it made dirty), never from minidb's own functions.

``impl`` (exercises/conftest.py) is reference.py or student.py, depending on ``--exercise-impl``.
"""

from __future__ import annotations

import pytest

from minidb.io import SimDisk
from minidb.log import LSN, NULL_LSN, Provisional
from minidb.logstore import Environment, EnvironmentConfig


def new_env():
    config = EnvironmentConfig(node_max_entries=4, checkpoint_bytes_interval=None, clock=lambda: 1_700_000_000.0)
    env = Environment.open(SimDisk("exercise-03"), config)
    db = env.database("t")
    for i in range(20):  # a 3-level tree of 4-slot nodes
        db.put(f"key{i:02d}", "v")
    return env, db


def logged_with(env, result, flag):
    """(lsn, flag) of the INs a checkpoint logged with ``flag``, read back from the log's headers."""
    found = []
    for logged in result.logged:
        entry = env.log.read(logged.lsn)
        if entry.provisional is flag:
            found.append(entry.lsn)
    return found


@pytest.fixture(scope="module")
def two_checkpoints():
    env, db = new_env()
    first = env.checkpoint(minimize_recovery_time=True)
    db.put("key03", "changed")
    second = env.checkpoint(minimize_recovery_time=True)
    return env, first, second


# -- is_provisional -------------------------------------------------------------------------------

def test_before_ckpt_end_followed_by_its_checkpoints_ckpt_end_is_provisional(impl, two_checkpoints):
    """Case 2 of JE's Checkpointer documentation (docs/sources.md#before_ckpt_end-cases): the checkpoint that
    logged it ended, recovery starts from that CkptEnd."""
    env, _, second = two_checkpoints
    entries = logged_with(env, second, Provisional.BEFORE_CKPT_END)
    assert entries
    for lsn in entries:
        assert impl.is_provisional(lsn, Provisional.BEFORE_CKPT_END, second.ckpt_end_lsn) is True


def test_before_ckpt_end_after_the_last_ckpt_end_is_not_provisional(impl, two_checkpoints):
    """Case 1 of JE's Checkpointer documentation (docs/sources.md#before_ckpt_end-cases): the checkpoint never
    ended; recovery starts from the one before it."""
    env, first, second = two_checkpoints
    for lsn in logged_with(env, second, Provisional.BEFORE_CKPT_END):
        assert impl.is_provisional(lsn, Provisional.BEFORE_CKPT_END, first.ckpt_end_lsn) is False


def test_before_ckpt_end_with_no_checkpoint_in_the_log_is_not_provisional(impl, two_checkpoints):
    env, first, _ = two_checkpoints
    lsn = logged_with(env, first, Provisional.BEFORE_CKPT_END)[0]
    assert impl.is_provisional(lsn, Provisional.BEFORE_CKPT_END, NULL_LSN) is False


def test_yes_is_always_provisional(impl, two_checkpoints):
    env, first, second = two_checkpoints
    for lsn in logged_with(env, second, Provisional.YES):
        for ckpt_end in (first.ckpt_end_lsn, second.ckpt_end_lsn, NULL_LSN):
            assert impl.is_provisional(lsn, Provisional.YES, ckpt_end) is True


def test_no_is_never_provisional(impl, two_checkpoints):
    env, first, second = two_checkpoints
    roots = logged_with(env, second, Provisional.NO)
    assert roots
    for lsn in roots:
        for ckpt_end in (first.ckpt_end_lsn, second.ckpt_end_lsn, NULL_LSN):
            assert impl.is_provisional(lsn, Provisional.NO, ckpt_end) is False


def test_lsns_in_different_files(impl):
    assert impl.is_provisional(LSN(3, 0x900), Provisional.BEFORE_CKPT_END, LSN(4, 0x10)) is True
    assert impl.is_provisional(LSN(4, 0x20), Provisional.BEFORE_CKPT_END, LSN(3, 0x900)) is False


def test_an_entry_without_a_position_is_an_error(impl, two_checkpoints):
    _, _, second = two_checkpoints
    with pytest.raises(ValueError):
        impl.is_provisional(NULL_LSN, Provisional.NO, second.ckpt_end_lsn)


# -- highest_flush_levels ------------------------------------------------------------------------------

def dirty_nodes(env):
    """(db_id, level, is_bin, is_root) of the user database's dirty nodes in memory, and root levels."""
    impl = env.db_tree.get("t")
    dirty = [(n.db_id, n.level, n.is_bin, impl.root is n) for n in env.evictor.resident_nodes()
             if n.dirty and n.db_id == impl.id]
    return dirty, {impl.id: impl.root.level}, impl.id


def test_a_dirty_bin_asks_for_the_level_above(impl):
    env, db = new_env()
    env.checkpoint(minimize_recovery_time=True)
    db.put("key05", "changed")
    dirty, roots, db_id = dirty_nodes(env)
    assert [(level, is_bin) for _, level, is_bin, _ in dirty] == [(1, True)]
    assert impl.highest_flush_levels(dirty, roots) == {db_id: 2}


def test_a_dirty_upper_in_asks_for_its_own_level(impl):
    env, db = new_env()
    env.checkpoint(minimize_recovery_time=True)
    db.put("key05", "changed")
    env.evictor.evict(env.db_tree.get("t").tree.search(b"key05"))  # logs the BIN; its level-2 parent is dirty
    dirty, roots, db_id = dirty_nodes(env)
    assert sorted(level for _, level, _, _ in dirty) == [2]
    assert impl.highest_flush_levels(dirty, roots) == {db_id: 2}


def test_a_dirty_root_asks_for_its_level(impl):
    env, db = new_env()
    dirty, roots, db_id = dirty_nodes(env)  # nothing logged yet: the root and many nodes are dirty
    assert any(is_root for _, _, _, is_root in dirty) and roots[db_id] == 3
    assert impl.highest_flush_levels(dirty, roots) == {db_id: 3}


def test_flush_all_asks_for_the_root_level(impl):
    env, db = new_env()
    env.checkpoint(minimize_recovery_time=True)
    db.put("key05", "changed")
    dirty, roots, db_id = dirty_nodes(env)
    assert impl.highest_flush_levels(dirty, roots, flush_all=True) == {db_id: 3}


def test_several_databases_and_none_dirty(impl):
    dirty = [(2, 1, True, False), (2, 1, True, False), (3, 2, False, False), (3, 1, True, False), (4, 2, False, True)]
    roots = {2: 3, 3: 4, 4: 2, 5: 3}
    assert impl.highest_flush_levels(dirty, roots) == {2: 2, 3: 2, 4: 2}
    assert impl.highest_flush_levels(dirty, roots, flush_all=True) == {2: 3, 3: 4, 4: 2}
    assert impl.highest_flush_levels([], roots) == {}


# What student.py may import from the modules that implement this exercise (minidb grade refuses the rest).
STUDENT_MAY_IMPORT = {"minidb.log": ["LSN", "Provisional"]}


# Typical wrong solutions (exercises/test_stubs_fail.py requires each to fail a test): minidb's
# answer with one rule broken.
def _provisional(entry_lsn, flag, last_ckpt_end_lsn):
    from minidb.logstore.checkpoint.provisional import is_provisional
    return is_provisional(entry_lsn, flag, last_ckpt_end_lsn)


def _levels(dirty, root_levels, flush_all=False, *, bin_asks_above=True):
    from minidb.logstore.checkpoint.provisional import flush_level_of
    levels = {}
    for db_id, level, is_bin, is_root in dirty:
        asked = flush_level_of(level, is_bin and bin_asks_above, is_root, root_levels[db_id], flush_all)
        levels[db_id] = max(levels.get(db_id, 0), asked)
    return levels


MUTANTS = {
    "before_ckpt_end_read_backwards": {"is_provisional": lambda lsn, flag, end: (
        not _provisional(lsn, flag, end) if flag == Provisional.BEFORE_CKPT_END else _provisional(lsn, flag, end))},
    "a_null_entry_lsn_is_not_provisional": {"is_provisional": lambda lsn, flag, end: (
        False if lsn == NULL_LSN else _provisional(lsn, flag, end))},
    "a_bin_asks_its_own_level": {"highest_flush_levels": lambda dirty, roots, flush_all=False: _levels(
        dirty, roots, flush_all, bin_asks_above=False)},
    "flush_all_is_ignored": {"highest_flush_levels": lambda dirty, roots, flush_all=False: _levels(dirty, roots)},
}


def random_cases(rng):
    """For ``minidb grade``: every flag against a CkptEnd before, at, after the entry or none (in one or
    two files); random dirty maps of several databases, with and without flush_all."""
    for _ in range(150):
        entry_lsn = LSN(rng.randrange(1, 3), rng.randrange(0x26, 0x400))
        ckpt_end = rng.choice([NULL_LSN, entry_lsn, LSN(rng.randrange(1, 3), rng.randrange(0x26, 0x400))])
        yield "is_provisional", (entry_lsn, rng.choice(list(Provisional)), ckpt_end), {}
    for _ in range(150):
        roots = {db: rng.randrange(1, 5) for db in rng.sample(range(1, 9), rng.randrange(1, 4))}
        dirty = []
        for _ in range(rng.randrange(0, 6)):
            db = rng.choice(list(roots))
            level = rng.randrange(1, roots[db] + 1)
            dirty.append((db, level, level == 1, level == roots[db]))
        yield "highest_flush_levels", (dirty, roots), {"flush_all": rng.random() < 0.3}
