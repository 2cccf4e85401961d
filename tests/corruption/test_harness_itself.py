"""The harness itself: its baseline is right, its cases do what they say, and it flags bad outcomes.

An engine that returned altered data, cut a fsynced entry or threw a
traceback must be classified WRONG, LOST and CRASH; these tests feed the
classifier such engines (a fake ``read``) on the log's state.
"""

import dataclasses

import pytest

from minidb.errors import LogCorruptionError
from minidb.log import LSN, file_number

from tests.corruption import BUILDERS, build_log
from tests.corruption.cases import KINDS, Case, all_cases, sample
from tests.corruption.classify import prefix_cut, run_case, run_verify
from tests.corruption.state import disk_with


@pytest.fixture(scope="module")
def log_state():
    return build_log.build()


@pytest.mark.parametrize("engine", sorted(BUILDERS))
def test_harness_undamaged_state_verifies_and_reads_back_its_model(engine, tmp_path):
    state = BUILDERS[engine]()
    assert len(state.log_files) >= 2  # several log files, so non-last files are damaged too
    assert run_verify(state.files, tmp_path / "v")[0] == 0
    assert state.read(disk_with(state.files)) == state.model


def test_harness_cases_change_exactly_what_they_say(log_state):
    name = log_state.log_files[0]
    original = log_state.files[name]
    flipped = Case("log", name, 5, "bitflip-header", bit=3).apply(log_state.files)[name]
    assert [i for i in range(len(original)) if flipped[i] != original[i]] == [5]
    assert flipped[5] ^ original[5] == 8
    zeroed = Case("log", name, 38, "zero-header", length=14).apply(log_state.files)[name]
    assert zeroed[38:52] == bytes(14) and zeroed[:38] == original[:38] and zeroed[52:] == original[52:]
    assert Case("log", name, 38, "truncate-at-boundary").apply(log_state.files)[name] == original[:38]
    assert name not in Case("log", name, 0, "delete-file").apply(log_state.files)
    assert log_state.files[name] == original  # the state itself is never damaged


def test_harness_full_list_flips_every_header_bit_and_cuts_at_every_boundary(log_state):
    cases = all_cases(log_state)
    for name in log_state.log_files:
        entries = log_state.entries(name)
        flips = {(c.offset, c.bit) for c in cases if c.file == name and c.kind == "bitflip-header"}
        assert flips == {(at, bit) for offset, header, _ in entries for at in range(offset, offset + header)
                         for bit in range(8)}
        cuts = [c.offset for c in cases if c.file == name and c.kind == "truncate-at-boundary"]
        assert cuts == [offset for offset, _, _ in entries]
    assert {c.file for c in cases if c.kind == "delete-file"} == set(log_state.files)


def test_harness_sample_is_seeded_and_covers_every_kind(log_state):
    cases = all_cases(log_state)
    assert sample(cases, 5) == sample(cases, 5)
    assert sample(cases, 5, seed=1) != sample(cases, 5, seed=2)
    assert {c.kind for c in sample(cases, 5)} == {c.kind for c in cases} <= set(KINDS)


def _last_file_cut(state) -> Case:
    """A cut of the last log file before its last entry: a prefix case that verify accepts."""
    name = state.last_log_file
    return Case("log", name, state.entries(name)[-3][0], "truncate-at-boundary")


def test_harness_flags_altered_data_as_wrong(log_state, tmp_path):
    case = _last_file_cut(log_state)
    cut = prefix_cut(log_state, case)
    honest = run_case(log_state, case, tmp_path / "c")
    assert honest.outcome == "prefix" and cut == LSN(file_number(case.file), case.offset)

    def altered(disk):
        entries = list(log_state.model_at(cut))
        lsn, type_name, vlsn, values = entries[-1]
        entries[-1] = (lsn, type_name, vlsn, {"message": values["message"] + "!"})
        return tuple(entries)

    result = run_case(dataclasses.replace(log_state, read=altered), case, tmp_path / "c")
    assert result.outcome == "WRONG", result
    partial = run_case(dataclasses.replace(log_state, read=lambda disk: log_state.model_at(cut)[:-1]),
                       case, tmp_path / "c")
    assert partial.outcome == "WRONG" and "items returned" in partial.detail, partial


def test_harness_flags_a_cut_fsynced_entry_as_lost(log_state, tmp_path):
    first = log_state.log_files[0]

    def cutting_read(disk):
        with disk.open(first) as handle:
            handle.truncate(handle.size() - 1)
            handle.fsync()
        return log_state.model

    result = run_case(dataclasses.replace(log_state, read=cutting_read), _last_file_cut(log_state), tmp_path / "c")
    assert result.outcome == "LOST" and first in result.detail, result

    def deleting_read(disk):
        disk.delete(first)
        return log_state.model

    result = run_case(dataclasses.replace(log_state, read=deleting_read), _last_file_cut(log_state), tmp_path / "c")
    assert result.outcome == "LOST" and "deleted" in result.detail, result


def test_harness_cut_of_a_torn_looking_tail_is_allowed_only_from_the_last_entry(log_state, tmp_path):
    name = log_state.last_log_file
    last, header, _ = log_state.entries(name)[-1]
    case = Case("log", name, last + header, "bitflip-item", bit=0)
    assert run_case(log_state, case, tmp_path / "c").outcome == "prefix"

    def cutting_more(disk):
        with disk.open(name) as handle:
            handle.truncate(last - 1)
            handle.fsync()
        return log_state.model_at(LSN(file_number(name), last))

    result = run_case(dataclasses.replace(log_state, read=cutting_more), case, tmp_path / "c")
    assert result.outcome == "LOST", result


def test_harness_flags_a_traceback_as_crash_and_a_corruption_error_as_detected(log_state, tmp_path):
    case = _last_file_cut(log_state)

    def broken(disk):
        raise KeyError("slot")

    def reporting(disk):
        raise LogCorruptionError(case.file, case.offset, "bad entry")

    assert run_case(dataclasses.replace(log_state, read=broken), case, tmp_path / "c").outcome == "CRASH"
    assert run_case(dataclasses.replace(log_state, read=reporting), case, tmp_path / "c").outcome == "detected"


def test_harness_a_cut_of_a_non_last_file_is_never_a_prefix(log_state, tmp_path):
    name = log_state.log_files[0]
    case = Case("log", name, log_state.entries(name)[-1][0], "truncate-at-boundary")
    assert prefix_cut(log_state, case) is None
    result = run_case(dataclasses.replace(log_state, read=lambda disk: log_state.model), case, tmp_path / "c")
    assert result.outcome == "detected", result  # verify: the FileHeader of the next file names another last entry
