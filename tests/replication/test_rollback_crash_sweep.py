"""The rollback's crash sweep: a syncup rollback crashed at every write and fsync (minidb.crashtest.rollback).

After every crash point the reopened node has finished the rollback (RollbackStart and RollbackEnd in the log,
every entry after the matchpoint INVISIBLE, the records those at the matchpoint) or never began it (nothing
invisible, the records those before it), and its log and VLSN index agree.
"""

import pytest

from minidb.crashtest.rollback import check_rollback_point, crash_sweep, records_of, run_rollback_workload
from minidb.io import CrashMode
from minidb.log.files import file_name
from minidb.replication.env import ReplicatedEnvironment

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 2
SEEDS_PER_CHUNK = 8  # 16 workloads
OPS = 12
SWEEP_OPS = 24  # long enough for BINs logged in n1's tail to point at records the rollback takes back


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=SWEEP_OPS, min_points_per_seed=25)


def test_every_workload_rolls_back_and_the_node_then_converges_with_the_master():
    for seed in range(6):
        workload = run_rollback_workload(seed, OPS, converge=True)
        assert workload.rolled_back >= 1 and workload.matchpoint < workload.last_before
        assert workload.converged, seed


def test_a_finished_rollback_is_undone_again_when_no_checkpoint_followed_it():
    # The crash keeps the RollbackEnd but not the checkpoint after it: recovery starts from the checkpoint
    # before n1's tail, and BINs logged while the tail was written still point at rolled-back records
    # (seed 23, 20 operations), which redo, skipping invisible entries, leaves there.
    workload = run_rollback_workload(seed=23, ops=20)
    end = workload.rollback_end
    write = next(e.index for e in workload.disk.events[workload.start:] if e.kind == "write"
                 and e.name == file_name(end.file) and e.offset <= end.offset < e.offset + len(e.data))
    image = workload.disk.crash_image(write, CrashMode.everything())
    assert check_rollback_point(workload, image) is None


def test_a_finished_rollback_undone_again_keeps_what_the_new_master_wrote_after_it():
    # n1 takes n2's stream after the rollback, then crashes before any checkpoint: the rollback is undone
    # again at open, but a key the new master wrote since keeps its redone version (seed 44: n2 deletes a
    # key whose rolled-back deletion had left no slot either; it must not come back).
    for seed in range(40, 48):
        workload = run_rollback_workload(seed, SWEEP_OPS, converge=True)
        image = workload.disk.crash_image(len(workload.disk.events) - 1, CrashMode.everything())
        with ReplicatedEnvironment.open(image, workload.config, workload.index_config) as env:
            assert records_of(env) == workload.caught_up, seed


def test_the_checker_catches_a_rollback_left_half_done():
    workload = run_rollback_workload(seed=3, ops=OPS)
    image = workload.disk.crash_image(len(workload.disk.events) - 1, CrashMode.everything())
    workload.after = dict(workload.before)  # claim the rolled-back records should still be there
    assert "the records after recovery (rolled back) differ" in check_rollback_point(workload, image)


def test_the_command_line_runs_the_rollback_sweep(capsys):
    from minidb.cli import main

    assert main(["crashtest", "rollback", "--seed", "4", "--ops", "6"]) == 0
    out = capsys.readouterr().out
    assert int(out.split("crash points: ")[1].split(",")[0]) > 15 and out.strip().endswith("violations: 0")


def test_a_rollback_across_a_checkpoint_by_hard_recovery_survives_a_crash_at_every_point():
    # n1's tail holds a checkpoint: the rollback ends with hard recovery, whose own recovery and checkpoint
    # are crashed too (the events after the RollbackEnd's write). Each restart must hold n2's records at the
    # matchpoint (or n1's before the rollback, if no RollbackStart was durable).
    for seed in range(3):
        workload = run_rollback_workload(seed, OPS, across_checkpoint=True)
        assert workload.hard_recovery is not None and workload.after == workload.at_matchpoint
        end = workload.rollback_end
        write = next(e.index for e in workload.disk.events[workload.start:] if e.kind == "write"
                     and e.name == file_name(end.file) and e.offset <= end.offset < e.offset + len(e.data))
        assert len(workload.disk.events) - write >= 5  # hard recovery's recovery and checkpoint, crashed too
        result = crash_sweep(seed, OPS, across_checkpoint=True)
        assert result.points > 40 and result.ok, result.violations[:3]


def test_the_rollback_workload_converges_after_a_hard_recovery():
    for seed in range(3):
        workload = run_rollback_workload(seed, OPS, converge=True, across_checkpoint=True)
        assert workload.hard_recovery is not None and workload.converged, seed
