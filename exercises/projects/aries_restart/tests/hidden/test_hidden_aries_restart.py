"""Instructor tests of the ARIES restart project (not in the student edition): the engine's own recovery
tests on the student's restart (a crash during a rollback and during restart at every point, checkpoints
among active transactions, freeing space, prepared transactions in doubt with their locks and their
reserved space, TMP files dropped, volumes mounted again, log space reserved again for the losers, stepping through the passes),
and the crash sweeps over more seeds."""

from minidb.crashtest import btree, pagestore

from tests.pagestore.test_log_space import (  # noqa: F401  (collected here)
    test_restart_reserves_again_for_the_losers_and_ends_at_zero,
)
from tests.pagestore.test_recovery import (  # noqa: F401  (collected here)
    test_a_checkpoint_taken_while_transactions_are_active,
    test_a_store_destroyed_by_a_transaction_that_crashes_in_freeing_space,
    test_crash_during_restart_at_every_point,
    test_crash_during_rollback,
    test_restart_after_restart_needs_no_undo,
    test_three_committed_five_in_flight_exactly_the_three_remain,
)
from tests.pagestore.test_restart import (  # noqa: F401  (collected here)
    test_restart_finishes_a_transaction_left_in_freeing_space,
    test_stepping_through_the_passes_gives_the_same_result_as_running_them,
)
from tests.pagestore.test_two_phase_commit import (  # noqa: F401  (collected here)
    test_crash_restart_in_doubt_with_locks_held_then_commit_prepared,
    test_crash_restart_then_abort_prepared_rolls_its_changes_back,
    test_restart_drops_the_tmp_files_a_prepared_transaction_used_before_taking_its_locks_again,
    test_restart_holds_the_slot_a_prepared_transaction_freed_for_its_abort,
)
from tests.pagestore.test_volumes import (  # noqa: F401  (collected here)
    test_a_dismounted_volume_stays_dismounted_across_restarts_and_mounts_again,
    test_a_volume_added_after_the_last_checkpoint_is_mounted_again_at_restart,
    test_one_transaction_across_two_volumes_survives_a_crash,
)


def test_the_crash_sweeps_over_more_seeds():
    result = btree.crash_sweep(3, ops=20)
    assert not result.violations, result.violations[:3]
    result = pagestore.crash_sweep(4, ops=12)
    assert not result.violations, result.violations[:3]
