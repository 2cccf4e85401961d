"""Instructor tests of the VLSN index project (not in the student edition): head truncation with a ghost
bucket, the log item cache after truncation, the tail refused, closed buckets, the crash sweeps over more
seeds."""

from minidb.crashtest import replication, rollback

from tests.replication.test_index import (  # noqa: F401  (collected here)
    test_head_truncation_drops_the_truncated_vlsns_from_the_log_item_cache,
    test_head_truncation_with_a_ghost_bucket,
    test_the_log_stores_own_checks_hold_with_replication_in_it,
)
from tests.replication.test_recovery import (  # noqa: F401  (collected here)
    test_an_invisible_entry_no_rollback_made_is_corruption_and_nothing_is_written,
)
from tests.replication.test_tail_and_buckets import (  # noqa: F401  (collected here)
    test_a_direct_tail_truncation_is_refused_and_changes_nothing,
    test_a_flushed_bucket_is_closed_and_never_rewritten,
    test_after_the_index_step_a_find_starts_from_the_new_entries,
    test_the_index_step_alone_comes_undone_at_recovery,
    test_the_index_step_alone_with_reused_vlsns_makes_the_environment_unopenable,
)


def test_the_crash_sweeps_over_more_seeds():
    for seed in range(3, 6):
        result = replication.crash_sweep(seed, ops=10)
        assert not result.violations, result.violations[:3]
    for seed in range(3, 6):
        result = rollback.crash_sweep(seed, ops=24)
        assert not result.violations, result.violations[:3]
