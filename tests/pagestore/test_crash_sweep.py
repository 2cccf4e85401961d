"""The volume's crash sweep: every crash point of seeded workloads; redo rebuilds the maps exactly."""

import pytest

from minidb.crashtest.volume import crash_sweep
from minidb.pagestore.buffer import bufferpool

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 4
SEEDS_PER_CHUNK = 25  # 100 workloads


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_volume_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=40, min_points_per_seed=40)


def test_the_sweep_catches_pages_written_before_the_log(monkeypatch):
    """With the write-ahead rule switched off, redo cannot repair what the crash did."""
    real = bufferpool.BufferPool._write_copies

    def without_wal(self, run):
        log, self.log = self.log, None
        try:
            return real(self, run)
        finally:
            self.log = log

    monkeypatch.setattr(bufferpool.BufferPool, "_write_copies", without_wal)
    assert any(crash_sweep(seed, ops=40).violations for seed in range(3))  # stops at the first that catches it


def test_minidb_crashtest_volume(capsys):
    from minidb.cli import main

    assert main(["crashtest", "volume", "--seed", "3", "--ops", "30"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("crash points: ") and out.strip().endswith("violations: 0")
