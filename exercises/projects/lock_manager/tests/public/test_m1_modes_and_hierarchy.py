"""Milestone 1: modes and the hierarchy, implicit parent locks, durations, unlock and release.

The engine's own tests of these contracts, run on the manager the hot spot builds (yours with
``--exercise-impl=student``): each builds its manager with ``LOCK_MANAGER.call(...)``.
"""

from tests.pagestore.lock.test_manager import (  # noqa: F401  (collected here)
    lm,
    test_a_reader_turning_writer_converts_its_parents,
    test_an_ancestor_that_covers_the_request_means_no_lock,
    test_an_instant_request_waits_for_the_holder,
    test_asking_again_longer_lengthens_never_shortens,
    test_bad_requests_are_refused_and_change_nothing,
    test_extent_and_user_locks_take_no_parents,
    test_extent_freeing_at_commit,
    test_extent_locks_are_held_to_the_end_of_the_transaction,
    test_instant_locks_are_gone_once_granted,
    test_key_value_locks_sit_under_their_store,
    test_parent_mode_of_each_child_mode,
    test_parents_already_held_strongly_enough_are_not_asked_again,
    test_query_and_held,
    test_short_locks_unlock_long_ones_do_not,
    test_unlock_of_an_implicitly_covered_lock_is_a_no_op,
)
