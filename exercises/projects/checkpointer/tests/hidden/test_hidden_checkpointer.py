"""Instructor tests of the checkpointer project (not in the student edition): a split at the max flush level
during the flush, the evictor's table on the engine's map, the high-priority subtree flush, the bytes
interval counted from CkptEnd, recovery crashed and recovered again, the JE documentation's three
BEFORE_CKPT_END cases cleaned by a cleaner, the sweeps over more seeds."""

from minidb.crashtest import logstore

from tests.logstore.test_checkpointer import (  # noqa: F401  (collected here)
    test_a_high_priority_checkpoint_recovers_like_any_other,
    test_high_priority_logs_each_subtree_in_one_stretch_after_one_parent_search,
    test_item10_the_bytes_interval_counts_from_the_last_checkpoint_s_end,
)
from tests.logstore.test_dirty_map import (  # noqa: F401  (collected here)
    test_a_split_at_the_max_flush_level_during_the_flush_raises_it,
    test_coordinate_in_state_none,
    test_coordinate_once_the_map_is_complete,
    test_coordinate_while_the_map_is_incomplete_adds_the_parent,
)
from tests.logstore.test_recovery import (  # noqa: F401  (collected here)
    test_a_crash_during_recovery_then_recovery_again,
    test_committed_state_after_a_crash,
)
from tests.logstore.test_worked_cases import (  # noqa: F401  (collected here)
    test_a_cleaner_trusting_the_counts,
    test_case_3_without_the_bug_the_real_cleaner_keeps_a,
)


def test_the_crash_sweep_over_more_seeds():
    for seed in range(4, 8):
        result = logstore.crash_sweep(seed, ops=10)
        assert not result.violations, result.violations[:3]
