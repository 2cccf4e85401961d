"""The B+tree crash sweep: index operations crashed at every write and fsync, restarted, compared with a model."""

from collections import Counter

import pytest

from minidb.crashtest.btree import FILE_MAX, crash_sweep, run_workload
from minidb.log.manager import LogManager
from minidb.pagestore.transactions.rollback import UndoStep

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 4
SEEDS_PER_CHUNK = 25  # 100 workloads crashed at every point here; `make sweep` crashes 1,000
OPS = 20


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_btree_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=OPS, min_points_per_seed=15)


def test_the_workloads_split_roll_back_and_leave_transactions_in_flight():
    logged = Counter()
    for seed in range(SEEDS_PER_CHUNK):
        workload = run_workload(seed, OPS)
        log = LogManager(workload.disk.clone(), file_max=FILE_MAX, readonly=True)
        logged.update(e.type_name for e in log.scan())
        log.close()
    assert logged["page_link"] >= 20 and logged["page_remove"] >= 20  # splits
    assert logged["xct_abort"] >= 10 and logged["compensate"] > logged["page_remove"]  # rollbacks, logical undos
    assert logged["btree_remove"] >= 50 and logged["xct_end"] >= 2 * SEEDS_PER_CHUNK


def test_the_sweep_catches_a_restart_that_does_not_undo(monkeypatch):
    import minidb.pagestore.restart.undo as undo_module  # restart's own undo (an aries_restart edition has none)

    def skip(volume, entry, xct):
        return UndoStep(entry.lsn, entry.type_name, "skipped", entry.values["txn_prev_lsn"])

    monkeypatch.setattr(undo_module, "undo_step", skip)
    assert any(crash_sweep(seed, ops=OPS).violations for seed in range(4))  # stops at the first that catches it


def test_minidb_crashtest_btree(capsys):
    from minidb.cli import main

    assert main(["crashtest", "btree", "--seed", "3", "--ops", "10"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crash points: ") and out.strip().endswith("violations: 0")
