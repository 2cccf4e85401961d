"""The checkpointer's ten steps, each visible in the trace; flags by level; subtrees; hooks."""

import re

import pytest

from minidb.errors import UserError
from minidb.io import CrashMode
from minidb.log import Provisional
from minidb.logstore import CkptState, EnvironmentHooks
from minidb.logstore.checkpoint.records import STEP_NAMES
from minidb.logstore.tools.verify import verify_tree

from tests.logstore.helpers import entries, fill, new_env, reopen


def three_level(**overrides):
    disk, env = new_env(**overrides)
    db = env.database("t")
    fill(db, 20)
    env.checkpoint(minimize_recovery_time=True)
    return disk, env, db


def test_the_ten_steps_in_order_each_in_the_trace():
    _, env, db = three_level()
    db.put("key003", "x")
    result = env.checkpoint()
    steps = [int(re.match(r"step (\d+):", line).group(1)) for line in result.trace]
    assert sorted(set(steps)) == list(range(1, 11))
    assert steps == sorted(steps), "steps appear in order"
    text = "\n".join(result.trace)
    assert "step 2: dirty map state DIRTY_MAP_INCOMPLETE" in text
    assert f"step 3: CkptStart logged at {result.ckpt_start_lsn}" in text
    assert "step 4: dirty map state DIRTY_MAP_COMPLETE" in text
    assert "step 4: highest flush level of t: 2" in text
    assert "step 6: VLSN index" in text and "step 7: FileSummaryLN at" in text
    assert f"step 8: CkptEnd logged at {result.ckpt_end_lsn}" in text
    assert "step 10: dirty map state NONE" in text
    assert env.dirty_map.state is CkptState.NONE


def test_each_pause_tells_its_step_and_state():
    _, env, db = three_level()
    db.put("key003", "x")
    run = env.checkpointer.start()
    seen = []
    while not run.done:
        pause = run.advance()
        if pause is None:
            break
        seen.append((pause.step, pause.step_done, pause.state))
    done_steps = [s for s, done, _ in seen if done]
    assert done_steps == list(range(1, 11))
    states = {s: state for s, done, state in seen if done}
    assert states[1] is CkptState.NONE
    assert states[2] is CkptState.DIRTY_MAP_INCOMPLETE and states[3] is CkptState.DIRTY_MAP_INCOMPLETE
    assert all(states[s] is CkptState.DIRTY_MAP_COMPLETE for s in range(4, 10))
    assert states[10] is CkptState.NONE
    assert any(step == 4 and not done for step, done, _ in seen), "step 4 pauses between INs"
    assert any(step == 5 and not done for step, done, _ in seen), "step 5 pauses between INs"
    assert set(STEP_NAMES) == set(range(1, 11))


def test_ckpt_start_and_end_entries():
    _, env, db = three_level()
    txn = env.begin()
    first = db.put("key004", "in a txn", txn=txn)
    result = env.checkpoint()
    start = env.log.read(result.ckpt_start_lsn)
    end = env.log.read(result.ckpt_end_lsn)
    assert start.type_name == "CkptStart" and end.type_name == "CkptEnd"
    assert end["ckpt_start_lsn"] == result.ckpt_start_lsn
    assert end["first_active_lsn"] == first == result.first_active_lsn  # <= CkptStart: the txn is active
    assert end["first_active_lsn"] < end["ckpt_start_lsn"]
    assert end["root_lsn"] == env.db_tree.mapping.root_lsn
    assert env.log.is_durable(result.ckpt_end_lsn)
    txn.commit()
    result = env.checkpoint()
    assert result.first_active_lsn == result.ckpt_start_lsn  # no active txn


def test_flags_by_level_and_logging_a_child_dirties_its_parent():
    _, env, db = three_level()
    db.put("key003", "x")  # one dirty BIN; nothing else of t is dirty
    root = env.db_tree.get("t").root
    assert not root.dirty
    result = env.checkpoint()
    mine = [l for l in result.logged if l.db_name == "t"]
    assert [(l.level, l.provisional) for l in mine] == [(1, Provisional.YES), (2, Provisional.NO)]
    for logged in mine:
        assert env.log.read(logged.lsn).provisional is logged.provisional
    # Logging the level-2 IN dirtied the root, above the max flush level: it waits for the next checkpoint.
    assert root.dirty
    result = env.checkpoint()
    assert [(l.level, l.provisional) for l in result.logged if l.db_name == "t"] == [(3, Provisional.NO)]


def test_the_bottom_two_levels_a_subtree_at_a_time():
    _, env, db = three_level()
    for key in ("key000", "key002", "key016", "key018"):  # BINs under both ends of the tree
        db.put(key, "x")
    result = env.checkpoint(minimize_recovery_time=True)
    mine = [l for l in result.logged if l.db_name == "t"]
    levels = [l.level for l in mine]
    # Each level-2 IN right after its own BINs, the root last: e.g. 1 1 2 1 1 2 3.
    assert levels[-1] == 3
    assert levels.count(2) >= 2
    first_two = levels.index(2)
    assert set(levels[:first_two]) == {1} and levels[first_two + 1] == 1
    tree = env.db_tree.get("t").tree
    for logged in mine:
        if logged.level == 1:
            # The next level-2 IN logged is this BIN's parent.
            rest = mine[mine.index(logged):]
            parent_log = next(l for l in rest if l.level == 2)
            node = next(n for n in env.evictor.resident_nodes() if n.node_id == logged.node_id)
            assert node.parent.node_id == parent_log.node_id
    assert tree.root_node().node_id == mine[-1].node_id


def test_root_logging_writes_a_map_ln():
    _, env, db = three_level()
    db.put("key003", "x")
    result = env.checkpoint(minimize_recovery_time=True)
    root_log = next(l for l in result.logged if l.db_name == "t" and l.is_root)
    map_lns = [e for e in entries(env, "MapLN") if e["name"] == "t" and e.lsn > root_log.lsn]
    assert map_lns and map_lns[0]["root_lsn"] == root_log.lsn
    assert env.db_tree.get("t").root_lsn == root_log.lsn


def test_file_summaries_at_step_7():
    _, env, db = three_level()
    db.put("key003", "x")
    result = env.checkpoint()
    assert result.summaries
    for number, lsn in result.summaries:
        entry = env.log.read(lsn)
        assert entry.type_name == "FileSummaryLN" and entry["file_number"] == number
        assert result.ckpt_start_lsn < lsn < result.ckpt_end_lsn
    assert not env.utilization.dirty or env.utilization.dirty == {env.log.end_lsn.file}


def test_checkpoints_by_log_growth():
    _, env = new_env(checkpoint_bytes_interval=3000)
    db = env.database("t")
    before = len(env.checkpointer.history)
    fill(db, 60)
    invokers = [r.invoker for r in env.checkpointer.history[before:]]
    assert "bytes interval" in invokers
    assert env.checkpointer.bytes_since_last_end() < 3000 + 2000


def test_hooks_at_steps_1_6_and_9():
    calls = []
    hooks = EnvironmentHooks(
        cleaner_files_to_delete=lambda: [7],
        flush_vlsn_index=[lambda run: calls.append(("step 6", run.step, run.env.dirty_map.state))],
        delete_cleaned_files=lambda files: calls.append(("step 9", files)),
    )
    from minidb.io import SimDisk
    from minidb.logstore import Environment

    from tests.logstore.helpers import small_config

    env = Environment.open(SimDisk("hooks"), small_config(), hooks)
    calls.clear()
    result = env.checkpoint()
    assert calls == [("step 6", 6, CkptState.DIRTY_MAP_COMPLETE), ("step 9", [7])]
    assert result.files_to_delete == [7]
    assert env.log.read(result.ckpt_end_lsn)["files_to_delete"] == [{"file": 7}]
    assert "step 1: cleaner: files to delete after this checkpoint: 7" in result.trace


def test_one_checkpoint_at_a_time():
    _, env, _ = three_level()
    run = env.checkpointer.start()
    run.through(2)
    with pytest.raises(UserError, match="still running"):
        env.checkpoint()
    run.finish()
    assert env.checkpointer.current is None
    env.checkpoint()


def test_a_checkpoint_with_nothing_dirty_in_user_databases():
    _, env = new_env()
    env.database("t")
    env.checkpoint()
    again = env.checkpoint()
    # Only the internal trees: the FileSummaryLNs of the last step 7 dirtied _utilization's BIN.
    assert again.logged and {l.db_name for l in again.logged} <= {"_mapping", "_utilization"}
    assert again.ckpt_start_lsn < again.ckpt_end_lsn


def test_item10_the_bytes_interval_counts_from_the_last_checkpoint_s_end():
    # A checkpoint that writes more than the interval (here every dirty node of a large tree)
    # used to set off the next checkpoint after the very next operation, and so on: the log of
    # the crash tests' workloads grew far faster than their operations (hundreds of files for
    # 85 operations). JE counts the interval from the last CkptEnd.
    _, env = new_env(checkpoint_bytes_interval=600)
    db = env.database("accounts")
    opened = ckpt_ends(env)  # the open's own checkpoint
    written = 0
    while True:
        before = env.log.stats["nBytes"]
        db.put(f"key{written:03d}", "v" * 20)
        written += 1
        if ckpt_ends(env) != opened:
            break
    first = ckpt_ends(env)
    checkpoint_bytes = env.log.stats["nBytes"] - before
    assert checkpoint_bytes > 600  # the checkpoint alone wrote more than the interval
    for i in range(3):  # a few small puts, far less than the interval
        db.put(f"more{i}", "v")
    assert ckpt_ends(env) == first


def ckpt_ends(env):
    return [e.lsn for e in env.log.scan() if e.type_name == "CkptEnd"]


def step_5_of_a_checkpoint(high_priority: bool):
    """Four BINs dirtied under both level-2 INs of a three-level tree, then a checkpoint run pause by pause."""
    _, env, db = three_level(checkpointer_high_priority=high_priority)
    for key in ("key000", "key002", "key016", "key018"):
        db.put(key, "x")
    run = env.checkpointer.start(minimize_recovery_time=True)
    pauses = 0
    while (pause := run.advance()) is not None:
        pauses += pause.step == 5 and pause.message.endswith(" of t")
    logged = [(l.node_id, l.level, l.provisional) for l in run.result.logged if l.db_name == "t"]
    return logged, run.result.parent_searches, pauses


def test_high_priority_logs_each_subtree_in_one_stretch_after_one_parent_search():
    logged, searches, pauses = step_5_of_a_checkpoint(high_priority=False)
    logged_hp, searches_hp, pauses_hp = step_5_of_a_checkpoint(high_priority=True)
    assert logged_hp == logged  # the same INs, in the same order, with the same Provisional
    levels = [level for _, level, _ in logged]
    bins, subtrees = levels.count(1), levels.count(2)
    assert subtrees == 2 and bins == 3 and levels[-1] == 3
    # One search and one pause per IN logged one at a time, or per subtree (none for its BINs or level-2 IN).
    assert searches - searches_hp == (bins + subtrees) - subtrees
    assert pauses == bins + subtrees + 1 and pauses_hp == subtrees + 1  # + 1: the root, alone


def test_a_high_priority_checkpoint_recovers_like_any_other():
    disk, env, db = three_level(checkpointer_high_priority=True)
    for i in range(0, 20, 3):
        db.put(f"key{i:03d}", "changed")
    env.checkpoint()
    db.put("key001", "after")
    env.sync()
    expected = dict(db.items())
    env.crash(CrashMode.nothing())
    again = reopen(disk, checkpointer_high_priority=True)
    assert dict(again.database("t").items()) == expected
    assert verify_tree(again) == []
