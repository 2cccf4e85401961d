"""``minidb grade NAME``: grade a student's ``student.py`` for an exercise or a project.

Every test is named with its points, and each that failed says why in one line; then the summary,
the score and the verdict (the outcomes, the weights and the reports are :mod:`minidb.cli.grading`'s;
a project's categories are :mod:`minidb.cli.grade_project`'s)::

    minidb grade 04a
      passed  1  test_the_readme_worked_example
      ...
      passed  1  random cases
    tests: 16 passed, 0 failed
    random cases: 300 passed, 0 failed (seed 2719431)
    score: 17/17
    grade 04a_clock_replacement: pass

For an exercise, three steps:

1. **Refusal.** The student's file is read (never run) with :mod:`ast`: an
   import of ``reference``, of a module ``reference.py`` imports from (the
   engine's module holding the same function), of one of that module's
   packages or submodules (``from minidb.pagestore import choose_victim``),
   relative imports, ``importlib``/``runpy``/``__import__``/``exec``/``eval``
   and ``sys.modules`` are refused with one line and exit code 2 (with
   ``--out``, the report is written first, every test failed). An exercise
   whose stub needs a name from such a module lists it in its test file:
   ``STUDENT_MAY_IMPORT = {"minidb.log": ["LSN"]}``.
2. **Tests.** The exercise's tests run against ``student.py`` in a
   subprocess (``pytest --exercise-impl=student``), one outcome per test.
3. **Random cases**, one more outcome (weighing ``WEIGHTS["random_cases"]``,
   else 1; it passes only if every case does). The exercise's test file may
   define ``random_cases(rng)``, a generator of ``(function, args, kwargs)``;
   each case is given to the student's function and to the reference's (on
   copies of the arguments) and the answers must be equal. A case that
   differs is reported by its number and its random seed only ("case 17 differs from
   the reference"), never with the reference's answer: its seed is printed, so
   a student rebuilds the inputs from the public ``random_cases`` and works
   the answer out. Its seed is not the student's choice: it comes from
   :mod:`secrets` at grading time, and a grader reruns the same cases with
   the hidden option ``--seed N`` (below 2**63, like every ``--seed``).

``--impl reference`` grades minidb's own ``reference.py`` instead (no
refusal; its random cases against themselves): every exercise gets full
marks, which ``tests/cli/test_grade.py`` checks.

Exit code 0 only if every test and every case passed, 1 otherwise; 2 for an
unknown exercise, a missing file, a refused import or a bad ``WEIGHTS``.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import io
import re
import secrets
import sys
from pathlib import Path
from random import Random
from types import ModuleType

from minidb import impl
from minidb.cli import grade_project
from minidb.cli.common import path_arg, seed_arg
from minidb.cli.grading import (
    FORMATS,
    Grade,
    Outcome,
    Refused,
    failed_all,
    imported_from,
    literal,
    outcomes_of,
    refusal,
    render,
    run_pytest,
    weights,
)
from minidb.errors import UserError

CASES = 300  # random cases at most, per exercise
SHOWN = 3  # failed cases named
RANDOM = "random_cases"  # its key in WEIGHTS
PATTERN = r"\d\d[a-z]?_"

EPILOG = f"""\
where the exercises are: ${impl.DIR_VAR} if set, else the repository's exercises/.
To grade a copy (a student's checkout, a submission), point the variable at
the copy's exercises directory; its student.py is graded, with the copy's
tests and reference:

  {impl.DIR_VAR}=/tmp/alice/exercises minidb grade 04a --format json --out alice.json

NAME is an exercise (04a or 04a_clock_replacement) or a project
(exercises/projects/NAME). Exit code 0: every test passed; 1: some failed;
2: an unknown name, a missing file, a refused import."""


def register(commands) -> None:
    p = commands.add_parser(
        "grade", help="grade student.py of an exercise or a project: every test, its points, why it failed",
        description="Grade student.py of an exercise or a project: every test with its points, "
                    "why each failure failed, the score.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("exercise", metavar="NAME", help="the exercise's directory name or number (04a), or a project's name")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json (minidb's schema) or gradescope (Gradescope's results.json)")
    p.add_argument("--out", metavar="FILE", type=path_arg,
                   help="write the report there (then the text report goes to stdout)")
    p.add_argument("--impl", dest="graded", choices=("student", "reference"), default="student",
                   help="grade student.py (default) or minidb's own implementation (full marks expected)")
    p.add_argument("--seed", type=seed_arg, default=None, help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def exercise_names(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and re.match(PATTERN, p.name)) if root.is_dir() else []


def find(name: str) -> Path:
    """The exercise's or the project's directory, checked for the files grading needs."""
    root = impl.exercises_dir()
    names = exercise_names(root)
    projects = grade_project.names(root)
    matches = [root / n for n in names if n == name or n.split("_", 1)[0] == name]
    matches += [root / grade_project.FOLDER / n for n in projects if n == name]
    if len(matches) != 1:
        raise UserError(f"no exercise {name!r} in {root} (exercises: {', '.join(names) or 'none'}"
                        + (f"; projects: {', '.join(projects)}" if projects else "") + ")")
    directory = matches[0]
    for needed in ("student.py",) if grade_project.is_project(directory) else ("student.py", "reference.py"):
        if not (directory / needed).is_file():
            raise UserError(f"{directory / needed} does not exist")
    return directory


def test_file(directory: Path) -> Path:
    files = sorted(directory.glob("test_*.py"))
    if not files:
        raise UserError(f"{directory}: no test_*.py")
    return files[0]


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass in the file looks its module up there
    spec.loader.exec_module(module)
    return module


def run_random_cases(directory: Path, tests: Path, seed: int, graded: str = "student"
                     ) -> tuple[int, int, list[str]] | None:
    """(passed, failed, first failures) of the test file's ``random_cases``; None if it has none;
    (0, 0, [why]) if the graded file cannot be imported."""
    tag = "".join(c if c.isalnum() else "_" for c in directory.name)
    test_module = load(tests, f"minidb_grade_{tag}_tests")
    cases = getattr(test_module, RANDOM, None)
    if cases is None:
        return None
    with contextlib.redirect_stdout(io.StringIO()):  # what the student's code prints is not the report
        try:
            student = load(directory / f"{graded}.py", f"minidb_grade_{tag}_{graded}_graded")
        except (Exception, SystemExit) as e:  # the grader goes on, whatever the file does when imported
            return 0, 0, [f"{graded}.py cannot be imported: {type(e).__name__}: {e}"]
        reference = load(directory / "reference.py", f"minidb_grade_{tag}_reference")
        return compare(student, reference, cases(Random(seed)))


def compare(student, reference, cases) -> tuple[int, int, list[str]]:
    """(passed, failed, first failures) of ``student``'s answers against ``reference``'s on ``cases``
    (``(function, args, kwargs)``, at most ``CASES``), each given copies of the arguments. A failure
    names the case's number and, if the student's function raised, the exception: never an answer."""
    passed, failed, shown = 0, 0, []
    with impl.using(impl.ENGINE):
        for number, (function, args, kwargs) in enumerate(cases, 1):
            if number > CASES:
                break
            expected = getattr(reference, function)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            raised = None
            try:
                got = getattr(student, function)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            except (Exception, SystemExit) as e:
                raised = f"{type(e).__name__}: {e}"
            if raised is None and got == expected:
                passed += 1
                continue
            failed += 1
            if len(shown) < SHOWN:
                shown.append(f"case {number}: {function} raised {raised:.200}" if raised
                             else f"case {number} differs from the reference")
    return passed, failed, shown


def grade_exercise(directory: Path, graded: str, seed: int) -> Grade:
    """The exercise's tests and random cases against ``graded`` (student or reference)."""
    tests = test_file(directory)
    why = None
    if graded == "student":
        forbidden = imported_from(directory / "reference.py")
        why = refusal(directory / "student.py", forbidden, literal(tests, "STUDENT_MAY_IMPORT", {}))
    table = weights([tests], also=(RANDOM,))
    random_weight = table.get(RANDOM, 1)
    if why is not None:
        grade = Grade(directory.name, "exercise", graded, outcomes_of([tests], None, "refused", "tests", table),
                      seed=seed, refused=why)
        grade.outcomes.append(Outcome("random cases", "random cases", random_weight, False))
        return failed_all(grade, "not run: the file was refused")
    cases, why_none = run_pytest(directory, graded, graded)
    outcomes = outcomes_of([tests], cases, why_none, "tests", table)
    ok = sum(o.passed for o in outcomes)
    summary = [f"tests: {ok} passed, {len(outcomes) - ok} failed" + (f" ({why_none})" if cases is None else "")]
    random_result = run_random_cases(directory, tests, seed, graded)
    if random_result is None:
        summary.append("random cases: none (the exercise defines no random_cases)")
    else:
        agreed, differ, shown = random_result
        if agreed + differ == 0:
            why_cases, shown = (shown or ["no cases"])[0], []
            summary.append(f"random cases: not run: {why_cases}")
        else:
            why_cases = f"{differ} of {agreed + differ} cases differ from the reference (seed {seed})" if differ else ""
            summary.append(f"random cases: {agreed} passed, {differ} failed (seed {seed})")
        outcomes.append(Outcome("random cases", "random cases", random_weight, differ == 0 and agreed > 0,
                                why_cases, shown))
    return Grade(directory.name, "exercise", graded, outcomes, summary, seed)


def run(args) -> int:
    directory = find(args.exercise)
    if grade_project.is_project(directory):
        grade = grade_project.grade(directory, args.graded)
    else:
        seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
        grade = grade_exercise(directory, args.graded, seed)
    if args.out:
        Path(args.out).write_text(render(grade, args.format))
    if grade.refused is not None:
        raise Refused(f"refused: {grade.refused} (write it yourself; see exercises/README.md, Grading)")
    if args.out is None or args.format != "text":
        print(render(grade, "text" if args.out else args.format), end="")
    return 0 if grade.passed else 1
