"""``minidb grade NAME``: the tests and random cases against student.py, each test named with its points and
why it failed, in three formats; no copying of minidb's answer, and no giving it away."""

from __future__ import annotations

import ast
import copy
import json
import re
import shutil
from pathlib import Path
from random import Random

import pytest

from minidb import impl
from minidb.cli import grade as grade_command, main
from minidb.cli.grading import junit_cases, outcomes_of

from tests.cli.grade_helpers import RIGHT_04A, WRONG_04A, grade

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"


@pytest.fixture
def exercises(tmp_path, monkeypatch):
    """A copy of exercises 04a and 11a (and the exercises' conftest) as $MINIDB_EXERCISES_DIR."""
    root = tmp_path / "exercises"
    for name in ("04a_clock_replacement", "11a_live_or_obsolete"):
        shutil.copytree(EXERCISES / name, root / name)
    shutil.copy(EXERCISES / "conftest.py", root / "conftest.py")
    monkeypatch.setenv(impl.DIR_VAR, str(root))
    return root


def test_a_right_solution_passes_every_test_and_every_random_case(exercises, capsys):
    (exercises / "04a_clock_replacement" / "student.py").write_text(RIGHT_04A)
    code, out, err = grade(capsys, "04a")
    assert code == 0, out + err
    assert re.search(r"^tests: 16 passed, 0 failed$", out, re.M)
    seed = re.search(r"^random cases: 300 passed, 0 failed \(seed (\d+)\)$", out, re.M)
    assert seed and out.endswith("grade 04a_clock_replacement: pass\n")


def test_a_wrong_solution_fails_and_the_seed_reproduces_its_cases(exercises, capsys):
    """Dirty frames are not passed over in the first pass: tests fail, and so do random cases."""
    (exercises / "04a_clock_replacement" / "student.py").write_text(RIGHT_04A.replace("pass_no == 1", "pass_no == 9"))
    code, out, _ = grade(capsys, "04a_clock_replacement", "--seed", "5")
    assert code == 1 and out.endswith("grade 04a_clock_replacement: fail\n")
    assert re.search(r"^tests: \d+ passed, [1-9]\d* failed", out, re.M)
    cases = re.search(r"^random cases: (\d+) passed, ([1-9]\d*) failed \(seed 5\)$", out, re.M)
    assert cases and int(cases[1]) + int(cases[2]) == 300
    assert re.search(r"^      case \d+ differs from the reference$", out, re.M)  # named, never answered


@pytest.mark.parametrize("source,why", [
    ("from reference import choose_victim\n", "imports from reference"),
    ("import reference\n", "imports reference"),
    ("from minidb.pagestore.buffer.clock import choose_victim\n", "imports choose_victim from minidb.pagestore.buffer.clock"),
    ("from minidb.pagestore import choose_victim\n", "imports choose_victim from minidb.pagestore"),
    ("import minidb.pagestore.buffer.clock as clock\nchoose_victim = clock.choose_victim\n", "imports minidb.pagestore.buffer.clock"),
    ("from minidb.pagestore.buffer import clock\n", "imports clock from minidb.pagestore.buffer"),
    ("from . import reference\n", "imports from .\n"),
    ("import importlib\n", "imports importlib"),
    ("def choose_victim(frames, hand):\n    return __import__('reference').choose_victim(frames, hand)\n", "uses __import__"),
    ("import sys\nchoose_victim = sys.modules['x']\n", "uses sys.modules"),
])
def test_a_student_file_importing_minidbs_answer_is_refused_with_one_line(exercises, capsys, source, why):
    (exercises / "04a_clock_replacement" / "student.py").write_text(source)
    code, out, err = grade(capsys, "04a")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("minidb grade: error: refused: ") and why.strip() in err, err


def test_what_the_stub_itself_imports_is_allowed(exercises, capsys):
    """11a's stub imports LSN from minidb.log, a module its reference uses too: it is graded (and fails)."""
    code, out, err = grade(capsys, "11a")
    assert code == 1 and err == "" and "tests: 0 passed, 19 failed" in out
    (exercises / "11a_live_or_obsolete" / "student.py").write_text("from minidb.log import LSN, LogManager\n")
    assert grade(capsys, "11a")[0] == 2


@pytest.mark.parametrize("name", ["99", "clock", ""])
def test_an_unknown_exercise_is_a_usage_error(exercises, capsys, name):
    code, out, err = grade(capsys, name)
    assert code == 2 and err.count("\n") == 1 and f"no exercise {name!r}" in err and "04a_clock_replacement" in err


def test_every_test_is_named_with_its_points_and_each_failure_says_why_in_one_line(exercises, capsys):
    (exercises / "04a_clock_replacement" / "student.py").write_text(WRONG_04A)
    code, out, _ = grade(capsys, "04a", "--seed", "5")
    lines = [line for line in out.splitlines() if re.match(r"  (passed|failed)  ", line)]
    assert code == 1 and len(lines) == 17  # 16 tests and the random cases
    assert "  passed  1  test_every_frame_pinned" in lines
    assert "  failed  1  test_the_readme_worked_example: assert (2, 3, [0]) == (0, 1, [0, 3])" in lines
    assert all(": " in line for line in lines if line.startswith("  failed"))
    assert re.search(r"^  failed  1  random cases: \d+ of 300 cases differ from the reference \(seed 5\)$", out, re.M)
    score = re.search(r"^score: (\d+)/17$", out, re.M)
    assert score and int(score[1]) == sum(line.startswith("  passed") for line in lines)


def answers_of_failed_cases(exercise: Path, student_source: str, seed: int) -> list[str]:
    """The reference's answers, as printed, to the random cases a student's file gets wrong."""
    tests = grade_command.load(grade_command.test_file(exercise), "minidb_test_grade_tests")
    reference = grade_command.load(exercise / "reference.py", "minidb_test_grade_reference")
    namespace: dict = {}
    exec(compile(student_source, "student.py", "exec"), namespace)
    answers = []
    with impl.using(impl.ENGINE):
        for function, args, kwargs in tests.random_cases(Random(seed)):
            expected = getattr(reference, function)(*copy.deepcopy(args), **kwargs)
            if namespace[function](*copy.deepcopy(args), **kwargs) != expected:
                answers.append(repr(expected))
    return answers


def test_a_failed_random_case_never_shows_the_references_answer(exercises, capsys, tmp_path):
    """Grep every report for the reference's answers to the cases the student got wrong (those long enough
    not to turn up by chance, like "(3, 4, [0, 2])"): none may be there. The exercise keeps its random cases
    and one test the wrong file passes, so nothing else in the reports shows an answer."""
    tests = exercises / "04a_clock_replacement" / "test_04a_clock_replacement.py"
    random_cases = next(node for node in ast.parse(tests.read_text()).body if getattr(node, "name", "") == "random_cases")
    tests.write_text("def test_one_clean_frame(impl):\n    assert impl.choose_victim([(False, False, False)], 0) == "
                     "(0, 0, [])\n\n\n" + ast.get_source_segment(tests.read_text(), random_cases) + "\n")
    (exercises / "04a_clock_replacement" / "student.py").write_text(WRONG_04A)
    answers = [a for a in answers_of_failed_cases(exercises / "04a_clock_replacement", WRONG_04A, 5) if len(a) >= 9]
    assert len(answers) >= 3
    reports = []
    for form in ("text", "json", "gradescope"):
        out_file = tmp_path / f"report.{form}"
        code, out, err = grade(capsys, "04a", "--seed", "5", "--format", form, "--out", str(out_file))
        assert code == 1
        reports += [out, err, out_file.read_text()]
    for answer in answers:
        for report in reports:
            assert answer not in report and answer.replace(" ", "") not in report.replace(" ", "")


def test_the_json_report_follows_its_schema(exercises, capsys, tmp_path):
    (exercises / "04a_clock_replacement" / "student.py").write_text(WRONG_04A)
    out_file = tmp_path / "grade.json"
    code, out, _ = grade(capsys, "04a", "--seed", "5", "--format", "json", "--out", str(out_file))
    report = json.loads(out_file.read_text())
    assert code == 1 and out.endswith("grade 04a_clock_replacement: fail\n")  # the text report on stdout
    assert {k: report[k] for k in ("name", "kind", "impl", "seed", "max_score", "passed", "refused")} == {
        "name": "04a_clock_replacement", "kind": "exercise", "impl": "student", "seed": 5, "max_score": 17,
        "passed": False, "refused": None}
    assert len(report["tests"]) == 17 and report["score"] == sum(t["score"] for t in report["tests"])
    random_cases = report["tests"][-1]
    assert random_cases["name"] == "random cases" and random_cases["status"] == "failed"
    assert all(d.endswith("differs from the reference") for d in random_cases["details"])
    assert {t["status"] for t in report["tests"]} == {"passed", "failed"}
    assert all(set(t) == {"name", "category", "score", "max_score", "status", "why", "details", "hidden"}
               for t in report["tests"])


def test_the_gradescope_report_is_a_results_json(exercises, capsys):
    (exercises / "04a_clock_replacement" / "student.py").write_text(RIGHT_04A)
    code, out, _ = grade(capsys, "04a", "--format", "gradescope")
    report = json.loads(out)
    assert code == 0 and report["score"] == 17 and report["stdout_visibility"] == "visible"
    assert "random cases: 300 passed, 0 failed (seed " in report["output"]
    assert len(report["tests"]) == 17
    for test in report["tests"]:
        assert set(test) == {"name", "score", "max_score", "output", "visibility", "status"}
        assert test["status"] == "passed" and test["score"] == test["max_score"] == 1 and test["visibility"] == "visible"


def test_weights_come_from_the_test_file(exercises, capsys):
    tests = exercises / "04a_clock_replacement" / "test_04a_clock_replacement.py"
    tests.write_text(tests.read_text() + '\nWEIGHTS = {"test_the_readme_worked_example": 3, "random_cases": 5}\n')
    (exercises / "04a_clock_replacement" / "student.py").write_text(WRONG_04A)
    code, out, _ = grade(capsys, "04a", "--seed", "5", "--format", "json")
    report = json.loads(out)
    weights = {t["name"]: t["max_score"] for t in report["tests"]}
    assert code == 1 and report["max_score"] == 15 + 3 + 5
    assert weights["test_the_readme_worked_example"] == 3 and weights["random cases"] == 5
    assert weights["test_every_frame_pinned"] == 1


def test_weights_naming_no_test_are_a_usage_error(exercises, capsys):
    tests = exercises / "04a_clock_replacement" / "test_04a_clock_replacement.py"
    tests.write_text(tests.read_text() + '\nWEIGHTS = {"test_that_is_not_there": 2}\n')
    code, out, err = grade(capsys, "04a")
    assert code == 2 and out == "" and err.count("\n") == 1 and "WEIGHTS names test_that_is_not_there" in err


def test_a_refused_file_still_gets_a_report_of_zero(exercises, capsys, tmp_path):
    """Gradescope needs a results.json whatever happens: a refused file scores 0, every test failed, and why."""
    (exercises / "04a_clock_replacement" / "student.py").write_text("from reference import choose_victim\n")
    out_file = tmp_path / "results.json"
    code, out, err = grade(capsys, "04a", "--format", "gradescope", "--out", str(out_file))
    report = json.loads(out_file.read_text())
    assert code == 2 and out == "" and err.startswith("minidb grade: error: refused: ")
    assert report["score"] == 0 and len(report["tests"]) == 17 and "refused: " in report["output"]
    assert {t["status"] for t in report["tests"]} == {"failed"}


def test_what_the_student_code_prints_stays_out_of_the_json_report(exercises, capsys):
    (exercises / "04a_clock_replacement" / "student.py").write_text(
        RIGHT_04A.replace("    n = len(frames)\n", "    n = len(frames)\n    print('debugging', n)\n"))
    code, out, _ = grade(capsys, "04a", "--format", "json")
    assert code == 0 and json.loads(out)["passed"]


def test_a_file_that_exits_as_it_is_imported_is_graded_all_the_same(exercises, capsys):
    """SystemExit when student.py is imported: every test fails, and the random cases say why."""
    (exercises / "04a_clock_replacement" / "student.py").write_text("raise SystemExit(3)\n" + RIGHT_04A)
    code, out, _ = grade(capsys, "04a", "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["score"] == 0 and len(report["tests"]) == 17
    assert report["tests"][-1]["why"] == "student.py cannot be imported: SystemExit: 3"
    assert "random cases: not run: student.py cannot be imported: SystemExit: 3" in report["summary"]


def test_help_says_where_the_exercises_are_and_how_to_grade_a_copy(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["grade", "--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0
    assert "$MINIDB_EXERCISES_DIR" in out and "To grade a copy" in out and "--format {text,json,gradescope}" in out


JUNIT_COLLECTION_FAILURE = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="" name="exercises.04a_clock_replacement.test_04a_clock_replacement" file="x.py">
<error message="collection failure">ImportError while importing test module
E   ModuleNotFoundError: No module named 'nowhere'</error></testcase></testsuite></testsuites>"""


def test_tests_pytest_could_not_collect_fail_one_by_one_with_its_reason():
    cases, why = junit_cases(JUNIT_COLLECTION_FAILURE)
    assert cases is None and why == "ModuleNotFoundError: No module named 'nowhere'"
    outcomes = outcomes_of([EXERCISES / "04a_clock_replacement" / "test_04a_clock_replacement.py"], cases, why, "tests", {})
    assert len(outcomes) == 16 and not any(o.passed for o in outcomes)
    assert outcomes[0].why == "not run: ModuleNotFoundError: No module named 'nowhere'"


# Grading runs an exercise's own tests and random cases, which the suite already runs against minidb's
# implementation for every exercise (exercises/); what grading adds (the report, its points, the verdict)
# is the same code for each, so three exercises of three engines prove it (about 5 s each).
GRADED_IN_FULL = ["04a_clock_replacement", "08b_aries_analysis", "12a_vlsn_bucket"]


@pytest.mark.slow
@pytest.mark.parametrize("exercise", GRADED_IN_FULL)
def test_minidbs_own_implementation_gets_full_marks(exercise, capsys, monkeypatch):
    monkeypatch.delenv(impl.DIR_VAR, raising=False)
    code, out, err = grade(capsys, exercise, "--impl", "reference", "--format", "json", "--seed", "1")
    report = json.loads(out)
    failed = [(t["name"], t["why"]) for t in report["tests"] if t["status"] != "passed"]
    assert code == 0 and report["passed"] and report["score"] == report["max_score"] > 0, (failed, err)
