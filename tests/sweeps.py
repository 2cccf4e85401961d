"""What every crash-sweep test does: run a chunk of seeded workloads and demand zero violations.

The seeds are split into chunks so pytest-xdist can spread a sweep over both cores; each chunk
also checks that its workloads really had crash points, so a sweep that quietly stopped crashing
anything would fail instead of passing.

Every sweep runs in both implementations (:mod:`minidb.impl`): even chunks with the reference,
odd chunks with every accelerated twin (``--impl fast``), so each engine's crash test meets both
on as many seeds as before, at the same cost.
"""

from minidb import impl


def chunk_impl(chunk: int) -> str:
    """The implementation a chunk's workloads run with: the reference, or every twin."""
    return impl.FAST if chunk % 2 else impl.ENGINE


def assert_chunk_has_no_violations(crash_sweep, chunk: int, seeds_per_chunk: int, ops: int,
                                   min_points_per_seed: int) -> None:
    points = 0
    with impl.using(chunk_impl(chunk)):
        for seed in range(chunk * seeds_per_chunk, (chunk + 1) * seeds_per_chunk):
            result = crash_sweep(seed, ops=ops)
            assert result.violations == [], (chunk_impl(chunk), seed, result.violations[:3])
            points += result.points
    assert points > min_points_per_seed * seeds_per_chunk, points
