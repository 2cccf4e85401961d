"""The rollback's crash sweep: a syncup rollback crashed at every write and fsync (minidb.replication.rollback_crashtest).

After every crash point the reopened node has finished the rollback (RollbackStart and RollbackEnd in the log,
every entry after the matchpoint INVISIBLE, the records those at the matchpoint) or never began it (nothing
invisible, the records those before it), and its log and VLSN index agree.
"""

import pytest

from minidb.io import CrashMode
from minidb.replication.rollback_crashtest import check_rollback_point, crash_sweep, run_rollback_workload

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 2
SEEDS_PER_CHUNK = 8  # 16 workloads
OPS = 12


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=25)


def test_every_workload_rolls_back_and_the_node_then_converges_with_the_master():
    for seed in range(6):
        workload = run_rollback_workload(seed, OPS, converge=True)
        assert workload.rolled_back >= 1 and workload.matchpoint < workload.last_before
        assert workload.converged, seed


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
