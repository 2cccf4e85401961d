"""Milestone 3: escalation of a transaction's many locks under a page or a store to one lock on it."""

from tests.pagestore.lock.test_escalation import (  # noqa: F401  (collected here)
    test_escalation_after_a_wait,
    test_escalation_can_be_disabled_per_object_per_transaction_or_for_all,
    test_kvl_locks_count_under_their_store,
    test_pages_escalate_to_their_store_and_take_their_records_along,
    test_short_locks_do_not_count_and_stay,
    test_the_most_specific_threshold_wins,
    test_writers_escalate_to_ex,
)
