"""Milestone 2: FIFO queues with conversions first, waiting threads, timeouts, listeners.

The engine's own tests, on the manager the hot spot builds; threads meet on events and on the manager's
``watch``/``settled``, never on sleeps.
"""

from tests.pagestore.lock.test_manager import (  # noqa: F401  (collected here)
    lm,
    test_a_conversion_goes_before_earlier_waiters,
    test_a_conversion_granted_at_once_wakes_a_waiting_record_reader,
    test_a_timed_conversion_gives_up_and_keeps_the_old_mode,
    test_a_timed_wait_gives_up_and_leaves_the_queue,
    test_a_timed_wait_that_is_granted_in_time,
    test_an_immediate_conversion_fails_and_keeps_the_old_mode,
    test_an_immediate_request_fails_at_once_and_changes_nothing,
    test_an_updater_joins_readers_but_keeps_new_readers_out,
    test_the_wait_listener_fires_before_the_thread_blocks,
    test_waiters_are_granted_first_come_first_served,
)
