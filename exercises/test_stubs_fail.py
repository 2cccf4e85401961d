"""Meta-tests: every exercise's tests fail, all of them, against its pristine stub,
and at least one of them fails against each of its named mutants.

An exercise whose tests pass (even partly) against the untouched
``student.py`` checks nothing, or gives part of the answer away; one whose
tests error out or collect nothing would fail for the wrong reason. So for
each ``exercises/NN_*`` this runs pytest on it in a subprocess with
``--exercise-impl=student`` and requires exit code 1 (tests failed) with every
test failed.

A *mutant* is a typical wrong solution, written down in the exercise's test
file (``MUTANTS``, see ``exercises/conftest.py``): tests that let a known
mistake pass are too weak, so each mutant must make at least one test fail.

If you have solved an exercise in place, its case here fails on purpose:
``student.py`` is no longer the stub. Restore the stub (``git stash`` or
``git checkout exercises/NN_name/student.py``) before committing.
"""

from __future__ import annotations

import ast
import atexit
import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.forkrun import ForkRunner

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
EXERCISES = sorted(p for p in HERE.iterdir() if p.is_dir() and re.match(r"\d\d[a-z]?_", p.name))

# Outcome words of pytest's summary line ("3 failed, 1 passed, 2 errors in 0.12s").
OUTCOMES = ("failed", "passed", "skipped", "xfailed", "xpassed", "error", "errors")
# Variables of the running pytest (xdist worker, current test) that must not leak into the child.
INHERITED = ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
             "PYTEST_CURRENT_TEST", "PYTEST_PLUGINS")


def summary_counts(output: str) -> dict[str, int]:
    """The counts on pytest's last summary line, e.g. {"failed": 3, "passed": 1}."""
    lines = [line for line in output.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    if not lines:
        return {}
    counts: dict[str, int] = {}
    for number, word in re.findall(r"(\d+) (\w+)", lines[-1]):
        if word in OUTCOMES:
            word = "errors" if word == "error" else word
            counts[word] = counts.get(word, 0) + int(number)
    return counts


def run_impl(exercise: Path, which: str) -> subprocess.CompletedProcess:
    """pytest on one exercise, in a process of its own, against ``which`` (student, reference or mutant:NAME)."""
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    # The engine reads the variable too, as soon as a test file imports it: a mutant is the exercises' own
    # notion (the reference with functions replaced), so the engine runs its own code under it.
    env["MINIDB_IMPL"] = "reference" if which.startswith("mutant:") else which
    # An exercise's tests need none of the installed plugins (nbval, xdist, hypothesis's, Playwright's):
    # not loading them makes each of these runs start in a third of the time.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # Only the verdict matters here: a failing property-based test need not be shrunk (conftest.py).
    env["MINIDB_EXERCISE_VERDICT_ONLY"] = "1"
    argv = [os.path.relpath(exercise, ROOT), f"--exercise-impl={which}", "-q", "-p", "no:cacheprovider"]
    return forked_pytest(env).run(argv, env, timeout=300)


_runner: ForkRunner | None = None


def forked_pytest(env: dict[str, str]) -> ForkRunner:
    """The fork server this process's runs go to (tests/forkrun.py: each run a fresh process, without
    starting Python and importing pytest anew), started at the first run and stopped at exit."""
    global _runner
    if _runner is None:
        _runner = ForkRunner(str(ROOT), env)
        atexit.register(_runner.close)
    return _runner


def test_there_are_exercises():
    assert EXERCISES, f"no exercise directories (NN_name) in {HERE}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=[p.name for p in EXERCISES])
def test_pristine_stub_fails_every_test(exercise):
    assert (exercise / "student.py").is_file() and (exercise / "reference.py").is_file()
    result = run_impl(exercise, "student")
    output = result.stdout + result.stderr
    tail = "\n".join(output.splitlines()[-25:])
    counts = summary_counts(result.stdout)
    assert result.returncode == 1, (
        f"pytest on {exercise.name} with the student stub exited with {result.returncode}, "
        f"expected 1 (tests failed); 0: tests passed, 2: interrupted, 3: internal error, "
        f"4: usage error, 5: no tests collected\n{tail}"
    )
    total = sum(counts.values())
    assert total > 0, f"no summary line in the output of pytest on {exercise.name}\n{tail}"
    if counts.get("errors"):
        hint = "errors are not failures: a fixture, an import or the collection broke, not an assertion"
    else:
        hint = f"is student.py still the stub? restore it with git checkout {exercise.relative_to(ROOT)}/student.py"
    assert counts.get("failed", 0) == total, (
        f"{exercise.name}: against the pristine stub every test must fail, but the run ended with {counts} ({hint})"
        f"\n{tail}"
    )


def mutants_of(exercise: Path) -> list[str]:
    """The names in ``MUTANTS`` of the exercise's test files: a top-level dict literal with string keys.

    Read from the source, not imported: the tests import the exercise's code.
    """
    names = []
    for path in sorted(exercise.glob("test_*.py")):
        for node in ast.parse(path.read_text(), str(path)).body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "MUTANTS" for t in node.targets)
                    and isinstance(node.value, ast.Dict)):
                names += [key.value for key in node.value.keys if isinstance(key, ast.Constant)]
    return names


MUTANT_CASES = [(exercise, name) for exercise in EXERCISES for name in mutants_of(exercise)]


def test_there_are_mutants():
    assert MUTANT_CASES, "no exercise names a typical wrong solution in MUTANTS"


@pytest.mark.parametrize("exercise,mutant", MUTANT_CASES, ids=[f"{e.name}-{m}" for e, m in MUTANT_CASES])
def test_each_named_mutant_fails_a_test(exercise, mutant):
    result = run_impl(exercise, f"mutant:{mutant}")
    tail = "\n".join((result.stdout + result.stderr).splitlines()[-25:])
    counts = summary_counts(result.stdout)
    assert result.returncode == 1 and counts.get("failed", 0) > 0 and not counts.get("errors"), (
        f"{exercise.name}: the mistake {mutant!r} must fail at least one test (and error none), "
        f"but pytest exited with {result.returncode} and {counts}\n{tail}"
    )


def test_a_verdict_only_run_does_not_shrink(monkeypatch, pytestconfig):
    """``run_impl`` asks for the verdict only, and the exercises' set-up then drops hypothesis's shrink
    and explain phases: a failing property ends at its first failing example (seconds saved per mutant)."""
    from hypothesis import Phase, settings

    spec = importlib.util.spec_from_file_location("exercises_conftest_under_test", HERE / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert conftest.VERDICT_ONLY == "MINIDB_EXERCISE_VERDICT_ONLY"
    seen = {}

    class Runner:
        def run(self, argv, env, timeout):
            seen.update(env=env)

    monkeypatch.setitem(globals(), "forked_pytest", lambda env: Runner())
    run_impl(EXERCISES[0], "student")
    assert seen["env"].get(conftest.VERDICT_ONLY) == "1"

    previous = settings.get_current_profile_name()
    monkeypatch.setenv(conftest.VERDICT_ONLY, "1")
    try:
        conftest.pytest_configure(pytestconfig)
        assert Phase.generate in settings.default.phases and Phase.shrink not in settings.default.phases
        assert Phase.explain not in settings.default.phases
    finally:
        settings.load_profile(previous)
    assert Phase.shrink in settings.default.phases
