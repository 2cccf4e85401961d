"""Milestone 3: the flush at checkpoint step 6, the recovery merge, truncation at both ends."""

from tests.replication.test_index import (  # noqa: F401  (collected here)
    test_flush_and_reload_give_the_same_lookups,
    test_head_truncation_keeps_at_least_1000_vlsns,
    test_head_truncation_refuses_what_it_cannot_do,
    test_tail_truncation_after_a_rollback_survives_recovery,
    test_the_index_is_flushed_at_every_checkpoint_and_not_on_every_put,
    test_the_step_6_hook_line_is_the_index_flush,
    test_vlsns_ascend_across_restarts,
)
from tests.replication.test_recovery import (  # noqa: F401  (collected here)
    test_a_crash_during_recovery_then_recovery_again,
    test_the_seeds_recovery_example,
)
from tests.replication.test_tracker import (  # noqa: F401  (collected here)
    test_remove_from_tail_at_every_point_over_a_real_log,
)
