"""Milestone 4: the engine's crash sweeps with your pool inside: every crash point, redo and restart right."""

from minidb.crashtest import pagestore, volume


def test_the_volume_survives_a_crash_at_every_point(kit):
    for seed in range(1, 6):
        result = volume.crash_sweep(seed, ops=30)
        assert result.points and not result.violations, result.violations[:3]


def test_the_page_store_survives_a_crash_at_every_point(kit):
    for seed in range(1, 3):
        result = pagestore.crash_sweep(seed, ops=12)
        assert result.points and not result.violations, result.violations[:3]
