"""What every crash-sweep test does: run a chunk of seeded workloads and demand zero violations.

The seeds are split into chunks so pytest-xdist can spread a sweep over both cores; each chunk
also checks that its workloads really had crash points, so a sweep that quietly stopped crashing
anything would fail instead of passing.
"""


def assert_chunk_has_no_violations(crash_sweep, chunk: int, seeds_per_chunk: int, ops: int,
                                   min_points_per_seed: int) -> None:
    points = 0
    for seed in range(chunk * seeds_per_chunk, (chunk + 1) * seeds_per_chunk):
        result = crash_sweep(seed, ops=ops)
        assert result.violations == [], (seed, result.violations[:3])
        points += result.points
    assert points > min_points_per_seed * seeds_per_chunk, points
