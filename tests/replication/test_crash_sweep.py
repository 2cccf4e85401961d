"""Replication's crash sweep: a replicated workload crashed at every write, truncate and fsync.

Each workload (minidb.crashtest.replication) spans several checkpoints, some stepped with replicated
entries logged between CkptStart and the index's flush, and a restart; after every crash point
recovery must give an index whose range is exactly the log's VLSNs 1..n (ascending, no gaps), every
VLSN of which maps to its entry through LTE/GTE and a log scan, and whose next VLSN is n + 1.
"""

import pytest

from minidb.crashtest.replication import check_index, check_point, crash_sweep, run_workload, stream_of
from minidb.io import CrashMode
from minidb.replication import ReplicatedEnvironment

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 6
SEEDS_PER_CHUNK = 4  # 6 x 4 = 24 workloads
OPS = 10


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=60)


def test_every_workload_spans_checkpoints_and_a_restart():
    for seed in range(8):
        workload = run_workload(seed, OPS)
        assert workload.checkpoints >= 2 and workload.stepped_checkpoints >= 1
        assert len(workload.restarts) == 1 and workload.promises


def test_the_checker_catches_an_index_that_disagrees_with_the_log():
    workload = run_workload(seed=3, ops=OPS)
    last = len(workload.disk.events) - 1
    image = workload.disk.crash_image(last, CrashMode.everything())
    env = ReplicatedEnvironment.open(image, workload.config, workload.index_config)
    assert check_index(env) is None
    truth = {vlsn: lsn for vlsn, lsn, _ in stream_of(env)}
    bucket = next(b for b in env.vlsn_index.tracker.buckets() if b.last > b.first and not b.is_ghost)
    bucket.file_offsets[0] = truth[bucket.first + 1].offset  # a wrong mapping: VLSN first -> first + 1's LSN
    assert f"VLSN {bucket.first} at {truth[bucket.first]}" in check_index(env)


def test_the_checker_catches_a_broken_promise():
    workload = run_workload(seed=5, ops=OPS)
    image = workload.disk.crash_image(1, CrashMode.nothing())
    workload.promises.append((0, 10_000))
    assert "was fsynced before the crash" in check_point(workload, image, 1)


def test_the_crashtest_command(capsys):
    from minidb.cli import main

    assert main(["crashtest", "replication", "--seed", "0", "--ops", "10"]) == 0
    # 136 with the reference's redo, one LN at a time (--impl fast: 130, from another history: redo by key
    # logs fewer BINs, so the log ends a file earlier). The two creations' MapLNs, logged with VLSNs, move the
    # file boundaries: the checkpoint at the restart now fits in one file fewer, one write and fsync less.
    assert capsys.readouterr().out.strip().endswith("crash points: 136, violations: 0")
    # every write, truncate and fsync of the history is swept: after each, the crash that keeps nothing of the
    # unsynced writes and the one that keeps everything; after a write, also one torn and one random subset
    events = [e for e in run_workload(seed=0, ops=10).disk.events if e.kind in ("write", "truncate", "fsync")]
    assert all(len(e.data) > 1 for e in events if e.kind == "write")
    assert sum(4 if e.kind == "write" else 2 for e in events) == 136


def test_the_checker_catches_transaction_ids_of_the_wrong_kind_or_reused():
    from minidb.crashtest.replication import check_txn_ids

    workload = run_workload(seed=3, ops=OPS)
    image = workload.disk.crash_image(len(workload.disk.events) - 1, CrashMode.everything())
    env = ReplicatedEnvironment.open(image, workload.config, workload.index_config)
    assert check_txn_ids(env) is None
    manager = env.env.txn_manager
    plain_begin = manager.begin
    manager.begin = lambda durability=None, **kw: plain_begin(durability)  # the index's flush: a positive id
    env.checkpoint()
    assert "ids of that kind are negative" in check_txn_ids(env)
    manager.begin = plain_begin
    env = ReplicatedEnvironment.open(workload.disk.crash_image(len(workload.disk.events) - 1,
                                                               CrashMode.everything()),
                                     workload.config, workload.index_config)
    env.env.txn_manager.last_txn_id = 0  # a counter that forgot: ids come round again
    db = env.database("a")
    for _ in range(3):
        with env.begin() as txn:
            db.put(b"k", b"v", txn=txn)
    assert "ends two transactions" in check_txn_ids(env)
