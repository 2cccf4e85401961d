"""``minidb grade EXERCISE``: the tests and random cases against student.py; no copying of minidb's answer."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from minidb import impl
from minidb.cli import main

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"

RIGHT_04A = '''
def choose_victim(frames, hand):
    n = len(frames)
    referenced = [r for _, _, r in frames]
    cleared = []
    for pass_no in (1, 2, 3):
        for _ in range(n):
            index, hand = hand, (hand + 1) % n
            pinned, dirty, _ = frames[index]
            if pinned:
                continue
            if referenced[index] and pass_no < 3:
                referenced[index] = False
                cleared.append(index)
                continue
            if dirty and pass_no == 1:
                continue
            return index, hand, cleared
    return None, hand, cleared
'''


@pytest.fixture
def exercises(tmp_path, monkeypatch):
    """A copy of exercises 04a and 11a (and the exercises' conftest) as $MINIDB_EXERCISES_DIR."""
    root = tmp_path / "exercises"
    for name in ("04a_clock_replacement", "11a_live_or_obsolete"):
        shutil.copytree(EXERCISES / name, root / name)
    shutil.copy(EXERCISES / "conftest.py", root / "conftest.py")
    monkeypatch.setenv(impl.DIR_VAR, str(root))
    return root


def grade(capsys, *args):
    code = main(["grade", *args])
    out, err = capsys.readouterr()
    return code, out, err


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
    assert "  case " in out and "expected (" in out  # the first failed cases, with what was expected


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
