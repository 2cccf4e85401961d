"""The JE documentation's three BEFORE_CKPT_END cases, in the real engine (minidb.logstore.cases)."""

import pytest

from minidb.log import LogManager, Provisional
from minidb.log.files import file_name
from minidb.logstore import is_provisional
from minidb.logstore.cases import KEYS, clean_and_delete, clean_trusting_utilization, worked_case
from minidb.logstore.errors import EnvironmentFailureError


def log_of(case):
    return LogManager(case.disk.clone(), readonly=True)


@pytest.fixture(scope="module")
def cases():
    return {name: worked_case(n, bug) for name, (n, bug) in
            {"1": (1, False), "2": (2, False), "3": (3, False), "3-bug": (3, True)}.items()}


def test_the_entries_come_in_the_seed_order(cases):
    for name, case in cases.items():
        lsns = list(case.marks.values())
        assert lsns == sorted(lsns), name
        log = log_of(case)
        types = {label: log.read(lsn).type_name for label, lsn in case.marks.items()}
        a_type = "IN" if case.number in (1, 2) else "BIN"
        assert types["050 BIN-A"] == a_type and types["200 BIN-A"] == a_type
        assert types["060 IN-B"] == "IN" and types["100 CkptStart"] == "CkptStart"
        assert types["300 FileSummaryLN"] == "FileSummaryLN"
        assert log.read(case.marks["200 BIN-A"])["node_id"] == log.read(case.marks["050 BIN-A"])["node_id"]


def test_the_summary_at_300_counts_bin_a_at_050_obsolete(cases):
    for name in ("1", "2", "3-bug"):
        case = cases[name]
        summary = log_of(case).read(case.marks["300 FileSummaryLN"])
        old = case.marks["050 BIN-A"]
        assert summary["file_number"] == old.file
        assert old.offset in {r["offset"] for r in summary["obsolete"]}, name
    case = cases["3"]
    summary = log_of(case).read(case.marks["300 FileSummaryLN"])
    assert case.marks["050 BIN-A"].offset not in {r["offset"] for r in summary["obsolete"]}


def test_case_1_checkpoint_does_not_complete(cases):
    case = cases["1"]
    assert case.a_provisional is Provisional.BEFORE_CKPT_END
    info = case.recovered.recovery_info
    assert info.last_ckpt_end < case.marks["100 CkptStart"]  # recovery uses the checkpoint before
    assert not is_provisional(case.marks["200 BIN-A"], Provisional.BEFORE_CKPT_END, info.last_ckpt_end)
    assert case.active_a == case.marks["200 BIN-A"]  # replayed: the new version is in the tree
    assert case.old_a_counted_obsolete and case.correct


def test_case_2_checkpoint_completes(cases):
    case = cases["2"]
    info = case.recovered.recovery_info
    assert info.last_ckpt_end == case.marks["500 CkptEnd"]
    assert is_provisional(case.marks["200 BIN-A"], Provisional.BEFORE_CKPT_END, info.last_ckpt_end)
    assert log_of(case).read(case.marks["400 IN-B"]).provisional is Provisional.NO
    assert case.active_a == case.marks["200 BIN-A"]  # reached through IN-B at 400
    assert case.old_a_counted_obsolete and case.correct


def test_case_3_with_the_seed_rule_the_evictor_logs_yes(cases):
    case = cases["3"]
    assert case.a_provisional is Provisional.YES
    assert case.recovered.recovery_info.last_ckpt_end == case.marks["400 CkptEnd"]
    assert case.active_a == case.marks["050 BIN-A"]  # no IN-B was logged: the old version is in use
    assert not case.old_a_counted_obsolete and case.correct


def test_case_3_with_before_ckpt_end_in_the_evictor_is_incorrect(cases):
    case = cases["3-bug"]
    assert case.a_provisional is Provisional.BEFORE_CKPT_END
    info = case.recovered.recovery_info
    assert is_provisional(case.marks["200 BIN-A"], Provisional.BEFORE_CKPT_END, info.last_ckpt_end)
    assert case.active_a == case.marks["050 BIN-A"]
    assert case.old_a_counted_obsolete and not case.correct
    assert case.problems == [f"BIN {case.a_node_id} of cases at {case.marks['050 BIN-A']} is in use but counted obsolete"]
    assert "INCORRECT" in case.summary()


def test_the_bug_option_is_off_by_default():
    from minidb.logstore import EnvironmentConfig

    assert EnvironmentConfig().bug_evict_with_before_ckpt_end is False


@pytest.mark.parametrize("number, bug, readable", [(1, False, True), (2, False, True), (3, False, True),
                                                   (3, True, False)])
def test_a_cleaner_trusting_the_counts(number, bug, readable):
    case = worked_case(number, bug)
    cleaning = clean_trusting_utilization(case)
    assert cleaning.erased
    if readable:
        assert cleaning.error is None and cleaning.records == (18 if number == 3 else 20)  # case 3 empties A
    else:
        assert case.marks["050 BIN-A"] in cleaning.erased
        assert cleaning.error is not None and "erased" in cleaning.error
        assert str(case.marks["050 BIN-A"]) in cleaning.error


def test_case_3_the_real_cleaner_deletes_the_only_version_of_a_with_the_bug():
    case = worked_case(3, bug=True)
    a_file = case.marks["050 BIN-A"].file
    run = clean_and_delete(case)
    assert a_file in run.cleaned and a_file in run.deleted
    assert run.records == 0 and run.error is not None
    assert run.error.startswith("LogFileNotFound:")
    assert file_name(a_file) in run.error and str(case.marks["050 BIN-A"]) in run.error
    assert case.recovered.invalid is not None  # an environment failure: every later operation is refused
    with pytest.raises(EnvironmentFailureError):
        case.recovered.database("cases").get(KEYS[-1])
    assert file_name(a_file) in run.summary()


def test_case_3_without_the_bug_the_real_cleaner_keeps_a():
    case = worked_case(3)
    a_file = case.marks["050 BIN-A"].file
    run = clean_and_delete(case)
    assert a_file in run.cleaned and a_file in run.deleted
    assert run.error is None and run.records == len(KEYS) - 2  # every record but A's two, deleted before 050
    assert case.recovered.invalid is None
    assert "all 18 records read back" in run.summary()


def test_cases_are_numbered_one_to_three():
    with pytest.raises(ValueError, match="cases 1, 2 and 3"):
        worked_case(4)


def test_a_checkpoint_that_never_logs_bin_a_is_an_error_not_a_hang(monkeypatch):
    """Cases 1 and 2 step a checkpoint until it logs BIN-A; one that ends without logging it (a wrong
    checkpointer, as a student's may be) is an error naming the case, not a loop over a finished run."""
    from minidb.logstore.checkpoint.checkpointer import Checkpointer
    from minidb.logstore.checkpoint.run import CheckpointRun

    monkeypatch.setattr(Checkpointer, "_flush_in", lambda self, run, ref, allow_subtree: iter(()))
    advance = CheckpointRun.advance
    calls_after_the_end = []

    def bounded(run):
        if run.done:
            calls_after_the_end.append(run)
            assert len(calls_after_the_end) < 100, "the case kept advancing a finished checkpoint"
        return advance(run)

    monkeypatch.setattr(CheckpointRun, "advance", bounded)
    with pytest.raises(RuntimeError, match="case 1: checkpoint .* ended without logging BIN-A"):
        worked_case(1)
