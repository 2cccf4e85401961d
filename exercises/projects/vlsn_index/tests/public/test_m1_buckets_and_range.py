"""Milestone 1: puts in order, buckets per log file, the range, lookups.

The engine's own tests of these contracts, run on the index the hot spot builds (yours with
``--exercise-impl=student``): each builds its index with ``VLSN_INDEX.call(...)`` or opens a replicated
environment, which builds it the same way.
"""

from tests.replication.test_index import (  # noqa: F401  (collected here)
    test_replicated_entries_get_vlsns_1_2_3_and_the_range_follows_them,
    test_scanners_hold_their_bucket,
)
from tests.replication.test_tracker import (  # noqa: F401  (collected here)
    test_a_full_bucket_and_a_too_distant_mapping_start_new_buckets_in_the_same_file,
    test_in_order_puts_make_a_bucket_per_file_and_close_the_old_one,
    test_lookups_outside_the_range_are_errors,
    test_only_the_last_bucket_is_updated,
)
