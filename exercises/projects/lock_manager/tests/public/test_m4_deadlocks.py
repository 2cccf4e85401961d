"""Milestone 4: Dreadlocks deadlock detection on real threads: cycles found, the younger the victim, no
false victim; then the engine's transactions on your manager."""

from minidb.crashtest import btree

from tests.pagestore.lock.test_deadlocks import (  # noqa: F401  (collected here)
    test_a_conversion_ahead_is_waited_for_and_found_in_a_cycle,
    test_a_three_transaction_cycle_needs_digests_propagated,
    test_a_two_transaction_cycle_closed_by_the_older,
    test_a_waiter_behind_a_compatible_waiter_is_no_deadlock,
    test_first_come_first_served_can_make_a_real_deadlock,
    test_shared_fingerprint_bits_give_a_false_positive,
    test_the_upgrade_deadlock,
    test_the_victim_is_always_the_younger_of_the_two,
    test_waits_for_graph_as_data,
)


def test_the_btree_crash_sweep_with_your_lock_manager():
    for seed in (1, 2):
        result = btree.crash_sweep(seed, ops=12)
        assert result.points and not result.violations, result.violations[:3]
