"""The page store's crash sweep: transactions crashed at every write and fsync, restarted, compared with a model."""

import pytest

import minidb.pagestore.restart.undo as undo_module
from minidb.pagestore.transactions.rollback import UndoStep
from minidb.pagestore.xct_crashtest import crash_sweep, run_workload

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 8
SEEDS_PER_CHUNK = 25  # 200 workloads
OPS = 16


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_pagestore_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=20)


def test_the_workloads_commit_abort_and_leave_transactions_in_flight():
    workloads = [run_workload(seed, OPS) for seed in range(SEEDS_PER_CHUNK)]
    assert sum(len(w.commits) for w in workloads) > SEEDS_PER_CHUNK
    assert any(len(w.states[-1]) > 1 for w in workloads)


def test_the_sweep_catches_a_restart_that_does_not_undo(monkeypatch):
    """With the undo pass doing nothing, in-flight changes survive the crash: violations."""
    def skip(volume, entry, xct):
        return UndoStep(entry.lsn, entry.type_name, "skipped", entry.values["txn_prev_lsn"])

    monkeypatch.setattr(undo_module, "undo_step", skip)
    violations = sum(len(crash_sweep(seed, ops=OPS).violations) for seed in range(4))
    assert violations > 0


def test_minidb_crashtest_pagestore(capsys):
    from minidb.cli import main

    assert main(["crashtest", "pagestore", "--seed", "3", "--ops", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crash points: ") and out.strip().endswith("violations: 0")


def test_the_workloads_grow_records_to_large_2_and_shrink_them_back():
    reshapes = set()
    for seed in range(CHUNKS * SEEDS_PER_CHUNK):
        reshapes |= run_workload(seed, OPS).reshapes
    changes = {change for change in reshapes if change[0] != change[1]}
    assert {("SMALL", "LARGE_0"), ("LARGE_0", "LARGE_1"), ("LARGE_0", "LARGE_2"), ("LARGE_1", "LARGE_2")} <= changes
    assert {("LARGE_2", "LARGE_0"), ("LARGE_2", "SMALL"), ("LARGE_0", "SMALL")} <= changes  # and back down
