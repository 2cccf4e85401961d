"""Milestone 2: puts out of order (from many threads), waiting feeders, closing.

The threads meet on events and on your index's ``await_waiter()``, never on sleeps, so ``await_waiter``
must be right before a threaded test can pass.
"""

from tests.replication.test_index import (  # noqa: F401  (collected here)
    test_a_wait_for_vlsn_that_times_out,
    test_a_wait_for_vlsn_woken_by_a_put_from_another_thread,
    test_closing_releases_waiting_feeders,
    test_puts_from_many_threads_arrive_out_of_order_and_still_map_every_vlsn,
)
from tests.replication.test_tracker import (  # noqa: F401  (collected here)
    test_a_vlsn_below_the_first_one_registered_makes_a_head_bucket,
    test_an_out_of_order_vlsn_does_not_move_the_range,
    test_out_of_order_puts_in_every_permutation_give_the_same_lookups,
)
