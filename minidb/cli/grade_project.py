"""``minidb grade NAME`` for a project: a whole component a student writes, in ``exercises/projects/NAME/``.

A project's directory holds ``README.md``, ``skeleton.py`` (where the student starts), ``student.py``
(graded), ``tests/public/test_m*.py`` (the milestones' tests, which the student has too),
``tests/hidden/`` (the instructor's tests), ``mutants/`` and ``project.json``::

    {"name": "NAME", "title": "...", "components": [...],
     "reference_files": ["minidb/pagestore/buffer/bufferpool.py"], "fast_files": [...],
     "judge": [["crashtest", "pagestore", "--seeds", "20", "--ops", "12"], ...],
     "weights": {"public": 40, "hidden": 40, "judge": 20}}

Its grade has three categories, each worth the points ``weights`` gives it (those above when it
gives none), split among the category's tests in proportion to their weights (a test file's
``WEIGHTS``, else 1 each; a judge command weighs 1):

``public``  the public tests, run with ``--exercise-impl=student``, one outcome per test, named
            with its file (``test_m1.py::test_get``);
``hidden``  the hidden tests, the same way; a failure's reason is not shown, and Gradescope shows
            them once the grades are published;
``judge``   each ``judge`` command, one outcome, run as ``python -m minidb ARGS --impl student
            --project NAME`` with ``$MINIDB_EXERCISES_DIR`` at the exercises directory holding the
            submission: exit code 0 passes, anything else fails with the command's last line.

A category without tests is left out, and its points with it. Worked: public 2 of 3 tests passed
(40 points: 26.67), hidden 1 of 2 (40: 20), judge 1 of 2 (20: 10): 56.67/100.

Refusal: ``student.py`` may not import a module of ``reference_files``, ``fast_files`` or
``solution_files`` (nor one
of its packages or submodules), except the names ``skeleton.py`` itself imports from it.

With ``--impl reference`` the tests run with ``--exercise-impl=reference`` and the judge with
``--impl reference`` (no ``--project``: minidb's own component runs). What is shared with exercises (outcomes, weights, reports) is
:mod:`minidb.cli.grading`'s.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from minidb.cli.grading import (
    TIMEOUT,
    Grade,
    Outcome,
    child_env,
    failed_all,
    names_imported,
    one_line,
    outcomes_of,
    refusal,
    run_pytest,
    scaled,
    weights,
)
from minidb.errors import UserError

FOLDER = "projects"  # under the exercises directory
CATEGORIES = ("public", "hidden", "judge")
DEFAULT_WEIGHTS = {"public": 40, "hidden": 40, "judge": 20}
JUDGE = [sys.executable, "-m", "minidb"]  # what a judge command's arguments follow


@dataclass
class Project:
    directory: Path
    name: str
    judge: list[list[str]]
    weights: dict[str, float]
    guarded: list[str]  # reference_files, fast_files, solution_files: what student.py may not import


def names(root: Path) -> list[str]:
    folder = root / FOLDER
    return sorted(p.name for p in folder.iterdir() if is_project(p)) if folder.is_dir() else []


def is_project(directory: Path) -> bool:
    return (directory / "project.json").is_file()


def load(directory: Path) -> Project:
    """``project.json``, checked; a mistake in it is a one-line :class:`UserError`."""
    path = directory / "project.json"
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("name") != directory.name:
        raise UserError(f"{path}: expected an object whose name is {directory.name!r}")
    judge = data.get("judge", [])
    if not (isinstance(judge, list) and all(isinstance(c, list) and c and all(isinstance(a, str) for a in c)
                                            for c in judge)):
        raise UserError(f"{path}: judge must be a list of minidb argument lists")
    weights = data.get("weights", DEFAULT_WEIGHTS)
    if not (isinstance(weights, dict) and set(weights) <= set(CATEGORIES)
            and all(isinstance(w, int | float) and not isinstance(w, bool) and w >= 0 for w in weights.values())):
        raise UserError(f"{path}: weights must give {', '.join(CATEGORIES)} numbers of points")
    guarded = data.get("reference_files", []) + data.get("fast_files", []) + data.get("solution_files", [])
    if not all(isinstance(f, str) for f in guarded):
        raise UserError(f"{path}: reference_files, fast_files and solution_files must list paths")
    return Project(directory, directory.name, judge, weights, guarded)


def module_of(path: str) -> str:
    """``minidb/pagestore/buffer/clock.py`` -> ``minidb.pagestore.buffer.clock``."""
    parts = Path(path).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def judged(project: Project, arguments: list[str], graded: str) -> Outcome:
    """One judge command's outcome."""
    command = [*arguments, "--impl", graded] + (["--project", project.name] if graded == "student" else [])
    name = "minidb " + " ".join(arguments)
    try:
        result = subprocess.run([*JUDGE, *command], cwd=project.directory.parents[2], env=child_env(None),
                                capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return Outcome(name, "judge", 1, False, f"took longer than {TIMEOUT // 60} minutes")
    last = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1:] or ["no output"]
    why = "" if result.returncode == 0 else f"exit code {result.returncode}: {one_line(last[0])}"
    return Outcome(name, "judge", 1, result.returncode == 0, why)


def grade(directory: Path, graded: str) -> Grade:
    """The project's public and hidden tests and its judge commands against ``graded``."""
    project = load(directory)
    files = {c: sorted((directory / "tests" / c).rglob("test_*.py")) for c in ("public", "hidden")}
    why = None
    if graded == "student":
        skeleton = directory / "skeleton.py"
        allowed = names_imported(skeleton) if skeleton.is_file() else {}
        why = refusal(directory / "student.py", {module_of(f) for f in project.guarded}, allowed)
    by_category: dict[str, list[Outcome]] = {}
    for category, found in files.items():
        if found:
            cases, why_none = (None, "refused") if why else run_pytest(directory / "tests" / category, graded, None)
            by_category[category] = outcomes_of(found, cases, why_none, category, weights(found), category == "hidden",
                                                 with_file=True)
    if project.judge:
        by_category["judge"] = [Outcome("minidb " + " ".join(a), "judge", 1, False) for a in project.judge] if why \
            else [judged(project, arguments, graded) for arguments in project.judge]
    outcomes, summary = [], []
    for category, found in by_category.items():
        points = project.weights.get(category, DEFAULT_WEIGHTS[category])
        outcomes += scaled(found, points)
        ok = sum(o.passed for o in found)
        summary.append(f"{category}: {ok} passed, {len(found) - ok} failed ({points:g} points)")
    result = Grade(project.name, "project", graded, outcomes, summary, refused=why)
    return failed_all(result, "not run: the file was refused") if why else result
