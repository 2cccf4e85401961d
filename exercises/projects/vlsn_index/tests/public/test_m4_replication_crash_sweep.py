"""Milestone 4: the engine's crash sweeps with your index inside: every crash point of a replicated
workload recovered and checked (VLSNs without gaps, the range, every lookup, every promise), and every
crash point of a syncup rollback."""

from minidb.crashtest import replication, rollback


def test_the_replicated_environment_survives_a_crash_at_every_point():
    for seed in range(1, 3):
        result = replication.crash_sweep(seed, ops=10)
        assert result.points and not result.violations, result.violations[:3]


def test_a_rollback_survives_a_crash_at_every_point():
    for seed in range(1, 3):
        result = rollback.crash_sweep(seed, ops=24)
        assert result.points and not result.violations, result.violations[:3]
