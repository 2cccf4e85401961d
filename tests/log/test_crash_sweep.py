"""The log's crash sweep: 200 seeded workloads, every crash point, zero violations."""

import pytest

from minidb.crashtest.log import _messages, check_point, crash_sweep, run_workload
from minidb.io import CrashMode
from minidb.log import LogManager

from tests.sweeps import assert_chunk_has_no_violations

CHUNKS = 8
SEEDS_PER_CHUNK = 25  # 8 x 25 = 200 workloads


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_crash_sweep_has_no_violations(chunk):
    assert_chunk_has_no_violations(crash_sweep, chunk, SEEDS_PER_CHUNK, ops=40, min_points_per_seed=50)


def test_the_checker_catches_a_log_that_lost_synced_entries():
    workload = run_workload(seed=3, ops=40)
    last_fsync = max(e.index for e in workload.disk.events if e.kind == "fsync")
    promised = max(n for index, n in workload.promised if index <= last_fsync)
    assert promised > 0
    # An image from before the last fsync lacks entries that were promised afterwards.
    early = workload.disk.crash_image(1, CrashMode.nothing())
    problem = check_point(workload, early, promised)
    assert problem is not None and "were synced" in problem


def test_the_checker_catches_entries_that_are_not_a_prefix():
    workload = run_workload(seed=5, ops=40)
    workload.messages[0] = "something else"
    image = workload.disk.crash_image(len(workload.disk.events) - 1, CrashMode.everything())
    assert "not a prefix" in check_point(workload, image, 0)


def test_the_checker_names_an_entry_the_workload_never_wrote():
    """More survivors than the workload wrote (a duplicated entry, say) is a violation, not a crash of the checker."""
    workload = run_workload(seed=5, ops=40)
    image = workload.disk.crash_image(len(workload.disk.events) - 1, CrashMode.everything())
    survivors = _messages(LogManager(image.clone(), file_max=workload.file_max, buffer_size=workload.buffer_size))
    workload.messages[:] = survivors[:-1]  # the workload "wrote" one entry fewer than the log holds
    problem = check_point(workload, image, 0)
    assert problem == f"survivors are not a prefix: entry {len(survivors) - 1} was never written"
