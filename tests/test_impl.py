"""Exercises inside the engine (minidb.impl): a student's function drives the engine's call site.

The point (issue 18's acceptance): the engine's crash sweep fails with a wrong
student implementation (an exercise's named mutant, written out as a
``student.py`` in a temporary exercises directory) and passes with a right
one (the reference copied as ``student.py``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from minidb import impl as hooks
from minidb.cli import main
from minidb.errors import LogCorruptionError
from minidb.io import SimDisk
from minidb.log import LSN
from minidb.log.end import LAST_FILE_SCAN, find_end
from minidb.log.groupcommit import COMMIT_STEP
from minidb.logstore.cleaner.cleaner import VERDICT
from minidb.logstore.tree.tree import SPLIT_POINT
from minidb.pagestore.btree.btree import LEAF_SPLIT
from minidb.pagestore.buffer.clock import VICTIM, ClockFrame, choose_victim
from minidb.pagestore.buffer.walrule import LOG_SYNC_POINT
from minidb.pagestore.pages.slotted import PLACE_RECORD
from minidb.pagestore.restart.redo import REDO_TEST
from minidb.pagestore.restart.undo import UNDO_WALK
from minidb.pagestore.rtree.rstar import CHOOSE_SUBTREE
from minidb.pagestore.volume.volpages import PAGES_TO_TRY
from minidb.pagestore.wal.clr import COMPENSATION
from minidb.pagestore.wal.logspace import RESERVE
from minidb.replication.stream.ack import COUNT_ACK
from minidb.replication.syncup.syncup import MATCHPOINT

from tests.log.helpers import new_log, write_messages
from tests.logstore.helpers import small_config

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"
PLUGGED = {"01a_log_end": LAST_FILE_SCAN, "01b_group_commit": COMMIT_STEP, "02a_slotted_insert": PLACE_RECORD,
           "03a_extent_alloc": PAGES_TO_TRY, "04a_clock_replacement": VICTIM, "04b_wal_rule": LOG_SYNC_POINT,
           "06a_write_clrs": COMPENSATION, "07a_leaf_split": LEAF_SPLIT, "08a_aries_undo": UNDO_WALK,
           "08c_redo_test": REDO_TEST, "09a_bin_split": SPLIT_POINT, "11a_live_or_obsolete": VERDICT,
           "13a_ack_policy": COUNT_ACK, "14a_matchpoint": MATCHPOINT, "16a_log_reservation": RESERVE,
           "18a_choose_subtree": CHOOSE_SUBTREE}


def students(tmp_path: Path, **sources: str) -> Path:
    """An exercises directory: every plugged exercise's reference as its student.py, except those in
    ``sources`` (keyword ``e08a`` for exercise 08a...: the student.py's text)."""
    for exercise in PLUGGED:
        (tmp_path / exercise).mkdir(parents=True, exist_ok=True)
        shutil.copy(EXERCISES / exercise / "reference.py", tmp_path / exercise / "student.py")
    for key, text in sources.items():
        exercise = next(e for e in PLUGGED if e.startswith(key[1:]))
        (tmp_path / exercise / "student.py").write_text(text)
    return tmp_path


def mutant_source(exercise: str, mutant: str, function: str) -> str:
    """A student.py whose ``function`` is the exercise's named mutant (from its test file's MUTANTS), its
    other functions the reference's."""
    test_file = EXERCISES / exercise / f"test_{exercise}.py"
    return (f"import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('mutant_tests', {str(test_file)!r})\n"
            f"tests = importlib.util.module_from_spec(spec)\n"
            f"spec.loader.exec_module(tests)\n"
            f"spec = importlib.util.spec_from_file_location('mutant_reference', {str(test_file.parent / 'reference.py')!r})\n"
            f"reference = importlib.util.module_from_spec(spec)\n"
            f"spec.loader.exec_module(reference)\n"
            f"globals().update((k, v) for k, v in vars(reference).items() if not k.startswith('_'))\n"
            f"{function} = tests.MUTANTS[{mutant!r}][{function!r}]\n")


def spy_source(exercise: str, function: str, then: str = "") -> str:
    """A student.py that counts its calls (``calls``) and answers as the reference does."""
    reference = EXERCISES / exercise / "reference.py"
    return (f"import importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('spy_reference', {str(reference)!r})\n"
            f"reference = importlib.util.module_from_spec(spec)\n"
            f"spec.loader.exec_module(reference)\n"
            f"calls = []\n"
            f"def {function}(*args, **kwargs):\n"
            f"    calls.append(args)\n"
            f"    {then}\n"
            f"    return reference.{function}(*args, **kwargs)\n")


def wrong_and_right(tmp_path: Path, crash_sweep, seed: int, ops: int, exercise: str, mutant: str, function: str):
    """The results of ``crash_sweep(seed, ops)`` with the exercise's named mutant as student code, then with
    every reference as student code."""
    wrong = students(tmp_path / "wrong", **{f"e{exercise[:3]}": mutant_source(exercise, mutant, function)})
    with hooks.using("student", wrong):
        result = crash_sweep(seed, ops)
    with hooks.using("student", students(tmp_path / "right")):
        return result, crash_sweep(seed, ops)


@pytest.fixture(autouse=True)
def engine_mode():
    with hooks.using(None):
        yield


# -- the switch ------------------------------------------------------------------------------------
def test_without_the_variable_the_engine_calls_its_own_function_directly(monkeypatch):
    monkeypatch.delenv(hooks.ENV_VAR, raising=False)
    hooks.use(None)
    assert hooks.mode() == hooks.ENGINE
    frames = [ClockFrame(False, False, False)] * 2
    assert VICTIM.call(frames, 0).victim == 0
    assert VICTIM.call is choose_victim  # resolved once: no lookup per call
    assert {hook.exercise for hook in hooks.hooks()} >= set(PLUGGED)


def test_the_notebooks_buffer_pool_demo_runs_the_students_victim_choice(tmp_path):
    from minidb.viz.bufferpool_demo import SCRIPT, pool_step
    own = pool_step(len(SCRIPT))
    root = students(tmp_path, e04a=spy_source("04a_clock_replacement", "choose_victim"))
    with hooks.using("student", root):
        step = pool_step(len(SCRIPT))  # notebook 04's script
        student = hooks.load_student("04a_clock_replacement")
        assert VICTIM.call is not choose_victim
    assert student.calls, "the buffer pool never asked the student's choose_victim"
    assert all(isinstance(frames, list) and isinstance(hand, int) for frames, hand in student.calls)
    assert step.frames == own.frames  # the same victims as minidb's own choice


@pytest.mark.parametrize("value", ["students", "mutant:x", "yes"])
def test_an_unknown_value_is_one_line_and_exit_2(monkeypatch, capsys, value):
    monkeypatch.setenv(hooks.ENV_VAR, value)
    with pytest.raises(hooks.ExerciseError, match=f"{hooks.ENV_VAR}={value!r}: expected reference or fast or student"):
        hooks.use(None)
    assert main(["crashtest", "log", "--ops", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected reference or fast or student" in err


def test_a_pristine_stub_inside_the_engine_names_the_exercise_and_function(capsys):
    code = main(["crashtest", "pagestore", "--seed", "7", "--ops", "8", "--impl", "student"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "exercise 01b_group_commit: commit_step is not implemented yet" in err  # format's first log sync


def test_one_exercise_alone_runs_inside_the_engine_while_the_other_stubs_are_untouched(tmp_path, capsys):
    """--exercise 08a: only 08a's student.py runs; the other plugged exercises are pristine stubs, and the
    engine's own functions stand in for them (a student tests the one exercise they did)."""
    root = tmp_path / "ex"
    for exercise in PLUGGED:  # every stub as shipped ...
        (root / exercise).mkdir(parents=True)
        shutil.copy(EXERCISES / exercise / "student.py", root / exercise / "student.py")
    (root / "08a_aries_undo" / "student.py").write_text(  # ... but 08a, wrong
        mutant_source("08a_aries_undo", "a_clr_goes_on_to_its_prev", "undo_order"))
    from minidb.crashtest.pagestore import crash_sweep
    with hooks.using("student", root, only=["08a"]):
        assert UNDO_WALK.resolve() is not UNDO_WALK.default and COMPENSATION.resolve() is COMPENSATION.default
        assert crash_sweep(7, 8).violations  # the wrong undo order ran, and nothing stopped at a stub
    with hooks.using("student", root):
        with pytest.raises(hooks.ExerciseError, match="not implemented yet"):
            crash_sweep(7, 8)
    assert main(["crashtest", "pagestore", "--seed", "7", "--ops", "8", "--impl", "student", "--exercise", "99z"]) == 2
    assert "--exercise: no exercise '99z'" in capsys.readouterr().err
    assert main(["crashtest", "log", "--ops", "1", "--exercise", "08a"]) == 2
    assert "only with --impl student" in capsys.readouterr().err


def test_the_variable_can_name_the_exercises(monkeypatch):
    monkeypatch.setenv(hooks.ENV_VAR, "student:08a,04a_clock_replacement")
    hooks.use(None)
    assert hooks.mode() == hooks.STUDENT
    assert hooks.chosen("08a_aries_undo") and hooks.chosen("04a_clock_replacement")
    assert not hooks.chosen("02a_slotted_insert")
    monkeypatch.setenv(hooks.ENV_VAR, "reference:08a")
    with pytest.raises(hooks.ExerciseError, match="student:08a,04b"):
        hooks.use(None)


def test_a_missing_student_file_is_an_error_not_a_fallback(tmp_path):
    with hooks.using("student", tmp_path):
        with pytest.raises(hooks.ExerciseError, match=r"exercise 04a_clock_replacement: no student file .*student\.py"):
            VICTIM.call([ClockFrame(False, False, False)], 0)


def test_a_student_error_or_an_answer_of_the_wrong_form_fails_with_one_line(tmp_path, capsys):
    root = students(tmp_path, e04a="def choose_victim(frames, hand):\n    return [][0]\n")
    with hooks.using("student", root), pytest.raises(hooks.StudentCodeError,
                                                      match="exercise 04a_clock_replacement: choose_victim raised IndexError"):
        VICTIM.call([ClockFrame(False, False, False)], 0)
    (root / "04a_clock_replacement" / "student.py").write_text("def choose_victim(frames, hand):\n    return 0, 0, [], 1\n")
    with hooks.using("student", root), pytest.raises(hooks.StudentCodeError, match="returned .*not .victim, hand_after"):
        VICTIM.call([ClockFrame(False, False, False)], 0)
    (root / "04a_clock_replacement" / "student.py").write_text("def choose_victim(frames, hand):\n    return 0, 0, []\n")
    with hooks.using("student", root), pytest.raises(hooks.StudentCodeError, match="chose frame 0, which is pinned"):
        VICTIM.call([ClockFrame(True, False, False)] * 2, 0)


# -- the point: the crash sweeps run on the student's code -------------------------------------------
def test_the_pagestore_crash_sweep_fails_with_a_wrong_undo_order_and_passes_with_a_right_one(tmp_path, monkeypatch,
                                                                                              capsys):
    """``minidb crashtest pagestore --impl student``: how a student knows their recovery code is right."""
    from minidb.crashtest.pagestore import crash_sweep
    wrong = students(tmp_path / "wrong", e08a=mutant_source("08a_aries_undo", "a_clr_goes_on_to_its_prev", "undo_order"))
    monkeypatch.setenv(hooks.DIR_VAR, str(wrong))
    assert main(["crashtest", "pagestore", "--seed", "7", "--ops", "8", "--impl", "student", "--show", "1"]) == 1
    out = capsys.readouterr().out
    assert "restart failed" in out and "crash points: 188, violations: 30" in out
    with hooks.using("student", students(tmp_path / "right")):
        assert crash_sweep(7, 8).summary() == "crash points: 188, violations: 0"


def test_the_btree_crash_sweep_fails_with_a_wrong_separator_and_passes_with_a_right_one(tmp_path):
    from minidb.crashtest.btree import crash_sweep
    wrong = students(tmp_path / "wrong", e07a=mutant_source("07a_leaf_split", "separator_is_the_last_key_on_the_left",
                                                            "leaf_split"))
    with hooks.using("student", wrong):
        result = crash_sweep(1, 16)
    assert any("the index holds no key" in v for v in result.violations), result.violations[:3]
    with hooks.using("student", students(tmp_path / "right")):
        assert crash_sweep(1, 16).summary() == f"crash points: {result.points}, violations: 0"


def test_the_pagestore_crash_sweep_fails_when_pages_are_written_ahead_of_their_log(tmp_path):
    """Exercise 04b inside the buffer pool: taking a page whose last entry starts at the log's durable end
    for durable lets the page reach the disk before that entry, and restart cannot undo what the crash
    lost (seed 7). The right rule syncs first, so the sweep has crash points of its own (the fsyncs)."""
    from minidb.crashtest.pagestore import crash_sweep
    wrong, right = wrong_and_right(tmp_path, crash_sweep, 7, 16, "04b_wal_rule",
                                   "an_entry_at_the_durable_end_counts_as_durable", "log_sync_point")
    assert wrong.violations, wrong.summary()
    # The count depends on the pages written: with a pool of a few frames, each insert's lookup in the
    # store directory (the reference keeps no descriptors) evicts and writes pages.
    assert right.summary() == "crash points: 342, violations: 0"


def test_the_pagestore_crash_sweep_fails_with_wrong_clrs_and_passes_with_right_ones(tmp_path):
    """Exercise 06a inside rollback and restart: a splice's CLR that does not swap the bytes undoes nothing,
    so aborted updates survive (seed 7); a CLR type that does not exist is refused by name."""
    from minidb.crashtest.pagestore import crash_sweep
    wrong = students(tmp_path / "wrong", e06a=mutant_source("06a_write_clrs", "splice_bytes_not_swapped", "compensation"))
    with hooks.using("student", wrong):
        assert crash_sweep(7, 16).violations
    with hooks.using("student", students(tmp_path / "right")):
        assert crash_sweep(7, 16).summary() == "crash points: 342, violations: 0"
    twin = students(tmp_path / "twin", e06a=mutant_source("06a_write_clrs", "a_clr_twin_for_a_logical_entry",
                                                           "compensation"))
    with hooks.using("student", twin), pytest.raises(hooks.StudentCodeError, match="no entry type has that name"):
        crash_sweep(7, 16)


def test_the_log_crash_sweep_fails_when_a_commit_returns_before_its_entry_is_durable(tmp_path):
    """Exercise 01b inside the log manager: taking an entry that starts at the durable end for durable
    returns from ``sync`` without an fsync: a crash loses entries a sync promised, and an entry logged
    after a crash is not there when the log is opened again (``close`` syncs it the same way; seed 1)."""
    from minidb.crashtest.log import crash_sweep
    wrong, right = wrong_and_right(tmp_path, crash_sweep, 1, 40, "01b_group_commit",
                                   "an_entry_at_the_durable_end_counts_as_durable", "commit_step")
    assert any("were synced" in v for v in wrong.violations), wrong.violations[:3]
    assert any("after a new entry and a reopen" in v for v in wrong.violations), wrong.violations[:3]
    assert right.violations == [] and right.summary() == crash_sweep(1, 40).summary()  # as the engine's own code


def one_fsync_serves_everything_written() -> None:
    """Four entries written, the first synced: the one fsync makes all four durable (no threads, so the
    outcome does not depend on how threads are scheduled)."""
    from minidb.log import TRACE

    from tests.log.helpers import new_log
    log = new_log(SimDisk())
    lsns = [log.append(TRACE, {"message": f"txn {i}"}) for i in range(4)]
    log.sync(lsns[0])
    assert all(log.is_durable(lsn) for lsn in lsns), "the entries written with the first are not durable"
    assert log.stats["nFsyncs"] == 1


def test_the_group_commit_tests_fail_when_a_leader_syncs_only_its_own_entry(tmp_path):
    """Exercise 01b inside the log: a leader whose fsync counts for its own entry only leaves the entries
    written with it undurable, so their commits need fsyncs of their own; the log's scripted group-commit
    test passes on a right answer."""
    from tests.log.test_manager import test_group_commit_shares_one_fsync
    wrong = students(tmp_path / "wrong", e01b=mutant_source("01b_group_commit", "the_leader_syncs_only_its_own_entry",
                                                            "commit_step"))
    with hooks.using("student", wrong), pytest.raises(AssertionError, match="not durable"):
        one_fsync_serves_everything_written()
    one_fsync_serves_everything_written()  # minidb's own rule
    right = students(tmp_path / "right", e01b=spy_source("01b_group_commit", "commit_step"))
    with hooks.using("student", right):
        test_group_commit_shares_one_fsync()
        calls = hooks.load_student("01b_group_commit").calls
    assert {call[3] for call in calls} == {False, True}  # asked as follower and as leader
    no_bound = students(tmp_path / "unbounded", e01b=mutant_source("01b_group_commit", "the_leader_gathers_without_a_bound",
                                                                   "commit_step"))
    with hooks.using("student", no_bound), pytest.raises(hooks.StudentCodeError, match="past the bound"):
        COMMIT_STEP.call(LSN(1, 0x40), LSN(1, 0x26), False, True, None, 0, 3, 0.005, 0.005)


def test_the_page_stores_reservation_tests_fail_when_a_record_takes_reserved_bytes(tmp_path):
    """Exercise 02a inside ``SlottedPage._place``: counting another transaction's reserved bytes as usable
    lets an insert take the room a rollback needs (the engine's worked example of space reservation)."""
    from tests.pagestore.test_slotted import test_space_reservation_worked_example
    wrong = students(tmp_path / "wrong", e02a=mutant_source("02a_slotted_insert", "reserved_bytes_count_as_usable",
                                                            "place_record"))
    with hooks.using("student", wrong), pytest.raises((AssertionError, pytest.fail.Exception)):
        test_space_reservation_worked_example()
    right = students(tmp_path / "right", e02a=spy_source("02a_slotted_insert", "place_record"))
    with hooks.using("student", right):
        test_space_reservation_worked_example()
        assert hooks.load_student("02a_slotted_insert").calls


def test_the_volumes_allocation_tests_fail_with_a_wrong_page_or_extent_choice(tmp_path):
    """Exercise 03a inside the volume (``PageAllocation._free_for``, ``ExtentAllocation._find_free_extents``):
    compacting only after the last page leaves holes unfilled, and a lowest-free hint moved past the extents
    taken skips the one another transaction held, which is free again later."""
    from tests.pagestore.test_alloc_protocol import (
        test_the_free_extent_search_skips_an_extent_another_transaction_holds,
    )
    from tests.pagestore.test_volume import test_append_goes_past_the_last_allocated_page_compact_fills_holes
    for test, mutant, function in [
            (test_append_goes_past_the_last_allocated_page_compact_fills_holes, "compact_only_after_the_last_page",
             "pages_to_try"),
            (test_the_free_extent_search_skips_an_extent_another_transaction_holds, "hint_past_the_last_extent_taken",
             "find_free_extents")]:
        wrong = students(tmp_path / mutant, e03a=mutant_source("03a_extent_alloc", mutant, function))
        with hooks.using("student", wrong), pytest.raises(AssertionError):
            test()
        with hooks.using("student", students(tmp_path / "right")):
            test()


def test_the_pagestore_crash_sweep_fails_when_redo_applies_a_change_twice(tmp_path):
    """Exercise 08c inside restart's redo pass: redoing a change the page already has (page LSN equal to
    the entry's) applies it twice, and restart fails or finds the wrong records (seed 7)."""
    from minidb.crashtest.pagestore import crash_sweep
    wrong, right = wrong_and_right(tmp_path, crash_sweep, 7, 8, "08c_redo_test", "change_redone_on_a_page_that_has_it",
                                   "redo_test")
    assert wrong.violations, wrong.summary()
    assert right.summary() == f"crash points: {wrong.points}, violations: 0"


def test_the_logstore_crash_sweep_fails_with_a_wrong_bin_split(tmp_path):
    """Exercise 09a inside ``Tree.split_if_needed``: a separator that is the last key kept leaves that key
    outside its BIN's range, which the tree refuses; a new slot before the BIN's own is refused by name."""
    from minidb.crashtest.logstore import crash_sweep
    from minidb.logstore.errors import TreeError
    wrong = students(tmp_path / "wrong", e09a=mutant_source("09a_bin_split", "separator_is_the_last_key_kept",
                                                            "split_point"))
    with hooks.using("student", wrong), pytest.raises(TreeError, match="lies outside the node's range"):
        crash_sweep(1, 16)
    before = students(tmp_path / "before", e09a=mutant_source("09a_bin_split", "new_slot_before_the_bins_own",
                                                              "split_point"))
    with hooks.using("student", before), pytest.raises(hooks.StudentCodeError, match="before the node's own slot"):
        crash_sweep(1, 16)
    with hooks.using("student", students(tmp_path / "right")):
        assert crash_sweep(1, 16).violations == []


def test_the_syncup_rollback_crash_sweep_fails_when_the_matchpoint_compares_lsns(tmp_path):
    """Exercise 14a inside ``ReplicaFeederSyncup.pump``: comparing LSNs (node-local) instead of checksums
    takes a sync point the two logs do not share, an older one, so the rejoining replica rolls back more than
    it must (seed 4: back past the checkpoint in its tail, by hard recovery) and ends without records n2 holds
    at the true matchpoint, which the sweep's model catches; where both nodes happen to log their sync points
    at the same offsets, as in seed 1, comparing LSNs finds the right one."""
    from minidb.crashtest.rollback import crash_sweep
    wrong = students(tmp_path / "wrong", e14a=mutant_source("14a_matchpoint", "compares_lsns_instead_of_checksums",
                                                            "find_matchpoint"))
    with hooks.using("student", wrong):
        violations = crash_sweep(4, 16).violations
    assert any("left records that are not n2's at the matchpoint" in v for v in violations), violations[:2]
    right = students(tmp_path / "right", e14a=spy_source("14a_matchpoint", "find_matchpoint"))
    with hooks.using("student", right):
        assert crash_sweep(4, 16).summary() == "crash points: 118, violations: 0"
        assert hooks.load_student("14a_matchpoint").calls


def test_the_durability_tests_fail_with_a_wrong_ack_count_and_pass_with_a_right_one(tmp_path):
    """Exercise 13a inside ``ReplicaAckPolicy.required_acks`` and ``FeederTxns.note_ack``: a majority that
    forgets the master is a vote needs both replicas, so a commit with one replica cut off times out; a
    replica's ack counted twice (which would release an ALL commit only one replica holds) is refused by name."""
    from minidb.replication.errors import InsufficientAcksError

    from tests.replication.test_durability import (
        test_a_partitioned_replica_majority_succeeds_all_fails,
        test_a_replica_that_acks_twice_is_one_ack,
    )
    tests = [(test_a_partitioned_replica_majority_succeeds_all_fails, "a_majority_without_the_master", "required_acks",
              InsufficientAcksError, "acked by n2; no ack from n3"),
             (test_a_replica_that_acks_twice_is_one_ack, "a_replica_counted_twice", "count_ack",
              hooks.StudentCodeError, "with at most 'n2' added once")]
    for test, mutant, function, error, match in tests:
        wrong = students(tmp_path / mutant, e13a=mutant_source("13a_ack_policy", mutant, function))
        with hooks.using("student", wrong), pytest.raises(error, match=match):
            test()
    right = students(tmp_path / "right", e13a=spy_source("13a_ack_policy", "count_ack")
                     + "required_acks = reference.required_acks\n")
    with hooks.using("student", right):
        for test, *_ in tests:
            test()
        assert hooks.load_student("13a_ack_policy").calls


def test_the_log_space_tests_fail_with_a_wrong_reservation_and_pass_with_a_right_one(tmp_path):
    """Exercise 16a inside ``LogSpace.admit``: an entry that reserves no page image holds less than restart
    reserves again for it; one admitted without counting its own bytes eats the room kept for rollbacks."""
    from tests.pagestore.test_log_space import (
        test_forward_work_never_takes_the_room_kept_for_rollbacks_and_a_checkpoint as never_takes,
        test_restart_reserves_again_for_the_losers_and_ends_at_zero,
    )
    tests = [(test_restart_reserves_again_for_the_losers_and_ends_at_zero, (), "no_page_image"),
             (never_takes, (23,), "the_entry_itself_is_not_counted")]
    for test, args, mutant in tests:
        wrong = students(tmp_path / mutant, e16a=mutant_source("16a_log_reservation", mutant, "reserve_for_rollback"))
        with hooks.using("student", wrong), pytest.raises(AssertionError):
            test(*args)
    right = students(tmp_path / "right", e16a=spy_source("16a_log_reservation", "reserve_for_rollback"))
    with hooks.using("student", right):
        for test, args, _ in tests:
            test(*args)
        assert hooks.load_student("16a_log_reservation").calls


def test_the_rtree_tests_judge_a_students_choose_subtree_and_the_crash_sweep_runs_it(tmp_path):
    """Exercise 18a inside ``RTree._choose_path``: any entry's index keeps the tree sound, so the crash sweep
    passes on a spy (which answers as minidb does) and the R*-tree's own tests of the choice, asked through
    the hook, are what fail on each typical mistake; an answer that is no entry's index is refused by name."""
    from minidb.crashtest.rtree import crash_sweep

    from tests.pagestore.rtree import test_rstar
    choice_tests = [getattr(test_rstar, name) for name in dir(test_rstar) if name.startswith("test_choose_subtree")]
    assert len(choice_tests) >= 5
    for mutant in ("area_growth_at_the_leaf_level_too", "overlap_growth_at_every_level",
                   "the_overlap_after_not_its_growth", "ties_skip_the_area_growth", "ties_go_to_the_last"):
        wrong = students(tmp_path / mutant, e18a=mutant_source("18a_choose_subtree", mutant, "choose_subtree"))
        with hooks.using("student", wrong, only=["18a"]):
            failed = []
            for test in choice_tests:
                try:
                    test()
                except AssertionError:
                    failed.append(test.__name__)
            assert failed, f"no test of test_rstar.py catches the mistake {mutant}"
    right = students(tmp_path / "right", e18a=spy_source("18a_choose_subtree", "choose_subtree"))
    with hooks.using("student", right, only=["18a"]):
        for test in choice_tests:
            test()
        asked = len(hooks.load_student("18a_choose_subtree").calls)
        assert crash_sweep(1, 8).summary() == "crash points: 50, violations: 0"
        assert len(hooks.load_student("18a_choose_subtree").calls) > asked  # the tree's descents asked it
    beyond = students(tmp_path / "beyond", e18a="def choose_subtree(boxes, new, leaves):\n    return len(boxes)\n")
    with hooks.using("student", beyond, only=["18a"]), \
            pytest.raises(hooks.StudentCodeError, match="returned 2, not the index of one of the node's 2 entries"):
        from minidb.pagestore import Box
        CHOOSE_SUBTREE.call([Box(0, 0, 1, 1), Box(2, 2, 3, 3)], Box(0, 0, 0, 0), True)


# -- the other call sites ------------------------------------------------------------------------------
def test_the_notebooks_recovery_demo_runs_the_students_undo_order(tmp_path):
    from minidb.viz.recovery_demo import recovery_view
    root = students(tmp_path, e08a=spy_source("08a_aries_undo", "undo_order"))
    with hooks.using("student", root):
        view = recovery_view(28, "everything", "restarted", draw=False)  # notebook 08's crash
        calls = hooks.load_student("08a_aries_undo").calls
    assert calls and view.found == view.expected


def test_the_log_open_uses_the_students_end_of_log(tmp_path):
    disk = SimDisk("end")
    log = new_log(disk)
    write_messages(log, ["one", "two"])
    log.close()
    own = find_end(disk)
    root = students(tmp_path, e01a=spy_source("01a_log_end", "valid_end"))
    with hooks.using("student", root):
        assert find_end(disk).end_offset == own.end_offset > 0  # the spy answers as minidb does
        assert len(hooks.load_student("01a_log_end").calls) == 1
    (root / "01a_log_end" / "student.py").write_text("def valid_end(data, file_number):\n    return 0\n")
    with hooks.using("student", root), pytest.raises(LogCorruptionError, match="not a torn tail"):
        find_end(disk)  # an intact FileHeader after the student's end: corruption, as minidb would say


def test_the_cleaner_asks_the_students_verdict(tmp_path):
    from minidb.logstore import Environment
    root = students(tmp_path, e11a="def entry_verdict(kind, lsn, current_lsn, **facts):\n    return 'gone'\n")
    env = Environment.open(SimDisk("clean"), small_config(file_max=4096))
    db = env.database("accounts")
    while env.log.end_lsn.file < 3:
        db.put("k", "x" * 200)
    env.checkpoint()
    with hooks.using("student", root), pytest.raises(hooks.StudentCodeError, match="returned 'gone'"):
        env.cleaner.clean_file(1)


def test_the_variable_can_name_a_hot_spot_whose_module_is_not_imported_yet(monkeypatch):
    """``fast:NAME`` is checked when the mode is first read, perhaps before NAME's module is imported (the
    first hot spot called may be another one's): the registry imports the module the name gives."""
    import subprocess
    import sys

    code = ("from minidb import impl; import minidb.log.manager; "
            "print(impl.mode(), sorted(impl._only))")
    env = {**__import__("os").environ, hooks.ENV_VAR: "fast:logstore.tree.tree.Tree"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "fast ['logstore.tree.tree.Tree']"


def test_a_hot_spot_runs_its_twin_only_in_fast_mode_and_a_missing_twin_is_an_error():
    from minidb.fast.pagestore.lock.manager import LockManager as FastLockManager
    from minidb.pagestore.lock.manager import LOCK_MANAGER, LockManager

    with hooks.using("fast"):
        assert type(LOCK_MANAGER.call()) is FastLockManager
    for which in ("reference", "student"):
        with hooks.using(which):
            assert type(LOCK_MANAGER.call()) is LockManager  # a student reads, and runs, the reference

    def nowhere():  # a hot spot declared here, in tests/, has no twin under minidb/fast/
        return None

    spot = hooks.HotSpot(nowhere)
    with hooks.using("fast"):
        with pytest.raises(hooks.ExerciseError, match="no module minidb.fast"):
            spot.call()
    assert spot.reference is nowhere and spot.chosen() is nowhere  # outside fast mode, the reference
