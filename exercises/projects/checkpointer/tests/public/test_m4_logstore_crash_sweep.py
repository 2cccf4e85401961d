"""Milestone 4: the engine's crash sweeps with your checkpointer inside: every crash point of a log store
workload (full and stepped checkpoints with evictions between their pauses, the cleaner deleting files at
step 9, a transaction open across checkpoints) recovered from your checkpoints and checked, and a crash at
every write of two checkpoints."""

from minidb.crashtest import logstore

from tests.logstore.test_crash_two_checkpoints import (  # noqa: F401  (collected here)
    test_recovery_after_a_crash_at_every_write_gives_exactly_the_committed_state,
)


def test_the_log_store_survives_a_crash_at_every_point():
    for seed in range(1, 4):
        result = logstore.crash_sweep(seed, ops=10)
        assert result.points and not result.violations, result.violations[:3]
