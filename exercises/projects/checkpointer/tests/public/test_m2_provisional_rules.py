"""Milestone 2: which flag each IN a checkpoint logs gets, and why: the highest flush level of each database,
bottom up, a child's parent joining the map, the root and its MapLN, the mapping tree last, and the evictor
logging INs while a checkpoint runs, in each of its states.

The engine's own tests of these contracts, run on the dirty map and checkpointer the hot spots build
(yours with ``--exercise-impl=student``): each opens an environment, which builds both.
"""

from tests.logstore.test_checkpointer import (  # noqa: F401  (collected here)
    test_flags_by_level_and_logging_a_child_dirties_its_parent,
    test_root_logging_writes_a_map_ln,
)
from tests.logstore.test_dirty_map import (  # noqa: F401  (collected here)
    test_a_dirty_bin_asks_for_level_2,
    test_a_dirty_upper_in_asks_for_its_own_level_and_a_dirty_root_for_its_level,
    test_an_in_of_the_max_flush_level_evicted_provisionally_is_logged_again_non_provisionally,
    test_eviction_during_each_checkpoint_state,
    test_minimize_recovery_time_flushes_up_to_the_root,
    test_the_mapping_tree_is_flushed_to_its_root_last,
)
