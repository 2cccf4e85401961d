"""Milestone 3: a whole checkpoint: the ten steps in order, each with its trace line and pause, CkptStart and
CkptEnd with their fields, the bottom two levels a subtree at a time, the summaries of step 7, the hooks of
steps 1, 6 and 9, checkpoints by log growth, one at a time, and recovery from the checkpoint.

The engine's own tests, run on the dirty map and checkpointer the hot spots build.
"""

from tests.logstore.test_checkpointer import (  # noqa: F401  (collected here)
    test_a_checkpoint_with_nothing_dirty_in_user_databases,
    test_checkpoints_by_log_growth,
    test_ckpt_start_and_end_entries,
    test_each_pause_tells_its_step_and_state,
    test_file_summaries_at_step_7,
    test_hooks_at_steps_1_6_and_9,
    test_one_checkpoint_at_a_time,
    test_the_bottom_two_levels_a_subtree_at_a_time,
    test_the_ten_steps_in_order_each_in_the_trace,
)
from tests.logstore.test_recovery import (  # noqa: F401  (collected here)
    test_a_transaction_spanning_a_checkpoint_is_replayed_from_first_active_lsn,
    test_non_provisional_ins_after_ckpt_start_are_replayed_provisional_ones_are_not,
)
