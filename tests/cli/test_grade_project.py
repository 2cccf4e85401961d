"""``minidb grade NAME`` for a project: public and hidden tests and judge commands, each category's points split
among its tests; a hidden test's reason never shown. On a small made-up project (``tinykv``) in a temporary
exercises directory, whose judge is a stand-in script that says how it was called."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from minidb import impl
from minidb.cli import grade_project

from tests.cli.grade_helpers import grade

EXERCISES = Path(__file__).resolve().parents[2] / "exercises"

PROJECT_JSON = {
    "name": "tinykv", "title": "A tiny key-value store", "components": ["store"],
    "reference_files": ["minidb/pagestore/buffer/clock.py"], "fast_files": [],
    "judge": [["judge", "ok"], ["judge", "bad"]], "weights": {"public": 40, "hidden": 40, "judge": 20},
}
SOLUTION = '''
def put(store, key, value):
    store[key] = value


def get(store, key):
    return store.get(key)


def size(store):
    return len(store)
'''
STUDENT = SOLUTION.replace("return len(store)", "return 0")  # size is wrong
SKELETON = "from minidb.pagestore.buffer.clock import ClockFrame\n\n\ndef put(store, key, value):\n    ...\n"
CONFTEST = '''
import importlib.util
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture
def kv(request):
    which = request.config.getoption("--exercise-impl") or "reference"
    path = PROJECT / ("student.py" if which == "student" else "solution.py")
    spec = importlib.util.spec_from_file_location(f"tinykv_{which}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
'''
TESTS = {
    "public/test_m1.py": '''
def test_put_then_get(kv):
    store = {}
    kv.put(store, "a", 1)
    assert kv.get(store, "a") == 1


def test_get_missing(kv):
    assert kv.get({}, "a") is None
''',
    "public/test_m2.py": '''
def test_size(kv):
    store = {}
    kv.put(store, "a", 1)
    assert kv.size(store) == 1
''',
    "hidden/test_instructor.py": '''
def test_overwrite(kv):
    store = {}
    kv.put(store, "a", 1)
    kv.put(store, "a", 2)
    assert kv.get(store, "a") == 2


def test_size_of_three(kv):
    store = {}
    for key in "abc":
        kv.put(store, key, 0)
    assert kv.size(store) == 3, "SECRET-EXPECTED-3"
''',
}
JUDGE = '''
import os
import sys

args = sys.argv[1:]
called_right = args[2:] == ["--impl", "student", "--project", "tinykv"] and os.environ["MINIDB_EXERCISES_DIR"] == {root!r}
ok = called_right and args[:2] == ["judge", "ok"]
print("crash points: 12, violations: 0" if ok else f"violations: 2 (called as {{args}})", file=sys.stderr)
sys.exit(0 if ok else 1)
'''


@pytest.fixture
def project(tmp_path, monkeypatch):
    """exercises/projects/tinykv in a temporary exercises directory, with the judge a stand-in."""
    root = tmp_path / "exercises"
    directory = root / grade_project.FOLDER / "tinykv"
    (directory / "tests" / "public").mkdir(parents=True)
    (directory / "tests" / "hidden").mkdir()
    shutil.copy(EXERCISES / "conftest.py", root / "conftest.py")
    (directory / "project.json").write_text(json.dumps(PROJECT_JSON))
    for name, text in {"student.py": STUDENT, "solution.py": SOLUTION, "skeleton.py": SKELETON,
                       "README.md": "# tinykv\n", "tests/conftest.py": CONFTEST}.items():
        (directory / name).write_text(text)
    for name, text in TESTS.items():
        (directory / "tests" / name).write_text(text)
    judge = tmp_path / "judge.py"
    judge.write_text(JUDGE.format(root=str(root.resolve())))
    monkeypatch.setattr(grade_project, "JUDGE", [sys.executable, str(judge)])
    monkeypatch.setenv(impl.DIR_VAR, str(root))
    return directory


def test_a_project_is_graded_by_category_with_its_points_split_among_its_tests(project, capsys):
    """public 2 of 3 (40 points: 26.67), hidden 1 of 2 (40: 20), judge 1 of 2 (20: 10): 56.67 of 100."""
    code, out, err = grade(capsys, "tinykv", "--format", "json")
    report = json.loads(out)
    tests = {t["name"]: t for t in report["tests"]}
    assert code == 1 and err == "" and report["kind"] == "project" and report["max_score"] == 100
    assert report["score"] == pytest.approx(40 * 2 / 3 + 20 + 10, abs=1e-3)
    assert {name: t["status"] for name, t in tests.items()} == {
        "test_m1.py::test_put_then_get": "passed", "test_m1.py::test_get_missing": "passed",
        "test_m2.py::test_size": "failed", "test_instructor.py::test_overwrite": "passed",
        "test_instructor.py::test_size_of_three": "failed", "minidb judge ok": "passed", "minidb judge bad": "failed"}
    assert tests["test_m2.py::test_size"]["why"].endswith("assert 0 == 1")
    assert tests["minidb judge bad"]["why"].startswith("exit code 1: violations: 2")
    assert tests["test_m1.py::test_get_missing"]["max_score"] == pytest.approx(40 / 3, abs=1e-3)
    assert tests["minidb judge ok"]["max_score"] == 10
    assert report["summary"] == ["public: 2 passed, 1 failed (40 points)", "hidden: 1 passed, 1 failed (40 points)",
                                 "judge: 1 passed, 1 failed (20 points)"]


def test_a_hidden_tests_reason_is_never_shown(project, capsys, tmp_path):
    results = tmp_path / "results.json"
    code, out, _ = grade(capsys, "tinykv", "--format", "gradescope", "--out", str(results))
    report = json.loads(results.read_text())
    hidden = [t for t in report["tests"] if t["name"].startswith("test_instructor.py::")]
    assert code == 1 and "SECRET" not in out + results.read_text()
    assert {t["visibility"] for t in hidden} == {"after_published"} and report["stdout_visibility"] == "hidden"
    assert [t["output"] for t in hidden if t["status"] == "failed"] == ["a hidden test failed (its details are not shown)"]
    assert re.search(r"^  failed +20  test_instructor.py::test_size_of_three: a hidden test failed", out, re.M)


def test_a_project_file_importing_its_reference_files_is_refused(project, capsys):
    """What skeleton.py imports from a reference file is allowed; anything else from it is refused."""
    (project / "student.py").write_text("from minidb.pagestore.buffer.clock import ClockFrame\n" + SOLUTION)
    assert grade(capsys, "tinykv")[0] == 1  # graded (the judge's "bad" fails)
    (project / "student.py").write_text("from minidb.pagestore.buffer.clock import choose_victim\n" + SOLUTION)
    code, out, err = grade(capsys, "tinykv")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "imports choose_victim from minidb.pagestore.buffer.clock" in err


def test_an_unknown_name_lists_the_projects_too(project, capsys):
    code, _, err = grade(capsys, "tinyk")
    assert code == 2 and "no exercise 'tinyk'" in err and "projects: tinykv" in err


def test_a_mistake_in_project_json_is_one_line(project, capsys):
    (project / "project.json").write_text(json.dumps({**PROJECT_JSON, "weights": {"public": 40, "secret": 60}}))
    code, out, err = grade(capsys, "tinykv")
    assert code == 2 and out == "" and err.count("\n") == 1 and "weights must give public, hidden, judge" in err
