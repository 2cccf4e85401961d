"""Milestone 4: the engine's crash sweeps with your restart inside. A workload of transactions (records,
B+tree keys, aborts, checkpoints) is crashed after every write and fsync, whole, torn or in part; each image
is restarted by your ``Restart`` and checked against a model of what committed; at a quarter of the points
the disk crashes again during restart, and a second restart must give the same result."""

from minidb.crashtest import btree, pagestore


def test_the_btree_workload_survives_a_crash_at_every_point():
    result = btree.crash_sweep(5, ops=20)
    assert result.points and not result.violations, result.violations[:3]


def test_the_pagestore_workload_survives_a_crash_at_every_point():
    result = pagestore.crash_sweep(5, ops=12)
    assert result.points and not result.violations, result.violations[:3]
