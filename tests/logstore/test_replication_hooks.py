"""What replication builds on: VLSNs for replicable entries, internal databases,
the checkpoint's step-6 hook and recovery listeners."""

import itertools

from minidb.io import CrashMode, SimDisk
from minidb.logstore import REPLICABLE_TYPES, Environment, EnvironmentHooks

from tests.logstore.helpers import entries, small_config


def replicated_env(hooks=None):
    disk = SimDisk("replicated")
    env = Environment.open(disk, small_config(replicated=True), hooks)
    counter = itertools.count(1)
    env.log.vlsn_allocator = lambda: next(counter)
    return disk, env


def test_records_and_transaction_ends_of_replicated_databases_get_vlsns():
    _, env = replicated_env()
    db = env.database("t")
    vlsn_index = env.internal_database("_vlsn_index")
    assert env.db_tree.get("t").replicated and not env.db_tree.get("_vlsn_index").replicated
    db.put("a", "1")
    vlsn_index.put("bucket", "not replicated")
    with env.begin() as txn:
        db.put("b", "2", txn=txn)
        db.delete("a", txn=txn)
    txn = env.begin()
    db.put("c", "3", txn=txn)
    txn.abort()
    with env.begin() as txn:  # touches only an internal database: its Commit is not replicated either
        vlsn_index.put("range", "x", txn=txn)
    env.checkpoint()
    replicated = [e for e in entries(env) if e.header.replicated]
    assert [e.vlsn for e in replicated] == list(range(1, len(replicated) + 1))  # no gaps
    # the creation of "t" first (its MapLN), then its records and transaction ends
    assert [e.type_name for e in replicated] == ["MapLN", "LN", "LN_TX", "DEL_LN_TX", "Commit", "LN_TX", "Abort"]
    assert replicated[0]["name"] == "t" and replicated[0]["root_lsn"].is_null
    assert all(e.type_name in REPLICABLE_TYPES for e in replicated)
    for entry in entries(env):
        if not entry.header.replicated and entry.type_name in ("LN", "LN_TX", "Commit"):
            assert entry.type_name == "Commit" or entry["db_id"] == env.db_tree.get("_vlsn_index").id
    # the checkpoint logged t's root and a MapLN naming it: local, like every MapLN but a creation
    roots = [e for e in entries(env) if e.type_name == "MapLN" and e["name"] == "t" and not e["root_lsn"].is_null]
    assert roots and not any(e.header.replicated for e in roots)


def test_a_non_replicated_environment_logs_no_vlsn():
    disk = SimDisk("plain")
    env = Environment.open(disk, small_config())
    env.database("t").put("a", "1")
    assert not any(e.header.replicated for e in entries(env))


def test_the_step_6_hook_can_make_an_internal_database_recoverable():
    calls = []

    def flush_vlsn_index(run):
        calls.append(run.result.ckpt_start_lsn)
        run.env.internal_database("_vlsn_index").put(b"\xff" * 8, f"flushed at checkpoint {run.result.checkpoint_id}")

    hooks = EnvironmentHooks(flush_vlsn_index=[flush_vlsn_index])
    disk, env = replicated_env(hooks)
    env.database("t").put("a", "1")
    result = env.checkpoint()
    assert calls[-1] == result.ckpt_start_lsn
    env.crash(CrashMode.nothing())
    again = Environment.open(disk, small_config(replicated=True), EnvironmentHooks())
    bucket = again.internal_database("_vlsn_index").get(b"\xff" * 8)
    assert bucket == f"flushed at checkpoint {result.checkpoint_id}".encode()


def test_recovery_listeners_see_vlsns_from_ckpt_start_to_the_end():
    disk, env = replicated_env()
    db = env.database("t")
    db.put("before", "1")
    result = env.checkpoint()
    with env.begin() as txn:
        db.put("after", "2", txn=txn)
    env.crash(CrashMode.nothing())
    seen = []
    Environment.open(disk, small_config(replicated=True), EnvironmentHooks(recovery_listeners=[seen.append]))
    assert seen[0].lsn == result.ckpt_start_lsn
    # t's creation is VLSN 1 and "before" VLSN 2, both before CkptStart; LN_TX and Commit come after it
    assert [e.vlsn for e in seen if e.vlsn is not None] == [3, 4]


def test_what_a_step_6_hook_returns_is_the_steps_trace_line():
    hooks = EnvironmentHooks(flush_vlsn_index=[lambda run: f"flushed 3 buckets for checkpoint {run.result.checkpoint_id}",
                                               lambda run: None])
    _, env = replicated_env(hooks)
    result = env.checkpoint()
    assert f"step 6: VLSN index: flushed 3 buckets for checkpoint {result.checkpoint_id}" in result.trace
    quiet = EnvironmentHooks(flush_vlsn_index=[lambda run: None])
    _, env = replicated_env(quiet)
    assert "step 6: VLSN index: flushed (1 hooks)" in env.checkpoint().trace
