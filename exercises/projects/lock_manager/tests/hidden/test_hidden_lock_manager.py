"""Instructor tests of the lock manager project (not in the student edition): random transactions on hot
locks and random scripted interleavings over many seeds, the books recounted, the crash sweeps."""

from minidb.crashtest import btree

from tests.pagestore.lock.test_stress import (  # noqa: F401  (collected here)
    test_random_scripted_interleavings,
    test_random_transactions_on_hot_locks,
)


def test_the_btree_crash_sweep_over_more_seeds():
    for seed in range(3, 7):
        result = btree.crash_sweep(seed, ops=16)
        assert not result.violations, result.violations[:3]
