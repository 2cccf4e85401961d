"""The R*-tree crash sweep: box insertions and removals crashed at every write and fsync, restarted, compared
with a model."""

from collections import Counter

import pytest

from minidb.crashtest.rtree import FILE_MAX, Runner, crash_sweep
from minidb.log.manager import LogManager
from minidb.pagestore.transactions.rollback import UndoStep

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 2
SEEDS_PER_CHUNK = 3
OPS = 25


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_rtree_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=30)


def test_the_workloads_restructure_roll_back_and_leave_transactions_in_flight():
    logged, steps, refused = Counter(), Counter(), 0
    for seed in range(CHUNKS * SEEDS_PER_CHUNK):
        runner = Runner(seed, OPS)
        workload = runner.run()
        refused += runner.refused
        steps.update(kind for step in runner.sm.rtrees.trace.lines
                     for kind in ("reinsert", "splits:", "dissolved", "grows") if kind in step)
        log = LogManager(workload.disk.clone(), file_max=FILE_MAX, readonly=True)
        logged.update(e.type_name for e in log.scan())
        log.close()
    assert steps["reinsert"] >= 10 and steps["splits:"] >= 10 and steps["grows"] >= 3 and steps["dissolved"] >= 3
    assert logged["xct_abort"] >= 2 and logged["rtree_remove"] >= 30 and refused >= 3
    assert logged["compensate"] > logged["rtree_insert"] + logged["rtree_remove"]  # rollbacks undid some


def test_the_sweep_catches_a_restart_that_does_not_undo(monkeypatch):
    import minidb.pagestore.restart.undo as undo_module  # restart's own undo (an aries_restart edition has none)

    def skip(volume, entry, xct):
        return UndoStep(entry.lsn, entry.type_name, "skipped", entry.values["txn_prev_lsn"])

    monkeypatch.setattr(undo_module, "undo_step", skip)
    assert any(crash_sweep(seed, ops=OPS).violations for seed in range(3))


def test_minidb_crashtest_rtree(capsys):
    from minidb.cli import main

    assert main(["crashtest", "rtree", "--seed", "3", "--ops", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crash points: ") and out.strip().endswith("violations: 0")
