"""``minidb grade EXERCISE``: grade a student's ``exercises/EXERCISE/student.py``.

Three steps, each reported on one line, then a summary::

    minidb grade 04a
    tests: 14 passed, 0 failed
    random cases: 300 passed, 0 failed (seed 2719431)
    grade 04a_clock_replacement: pass

1. **Refusal.** The student's file is read (never run) with :mod:`ast`: an
   import of ``reference``, of a module ``reference.py`` imports from (the
   engine's module holding the same function), of one of that module's
   packages or submodules (``from minidb.pagestore import choose_victim``),
   relative imports, ``importlib``/``runpy``/``__import__``/``exec``/``eval``
   and ``sys.modules`` are refused with one line and exit code 2. An
   exercise whose stub needs a name from such a module lists it in its test
   file: ``STUDENT_MAY_IMPORT = {"minidb.log": ["LSN"]}``.
2. **Tests.** The exercise's tests run against ``student.py`` in a
   subprocess (``pytest --exercise-impl=student``).
3. **Random cases.** The exercise's test file may define
   ``random_cases(rng)``, a generator of ``(function, args, kwargs)``; each
   case is given to the student's function and to the reference's (on copies
   of the arguments) and the answers must be equal. Their seed is not the
   student's choice: it comes from :mod:`secrets` at grading time and is
   printed, so a grader can rerun the same cases with the hidden option
   ``--seed N`` (below 2**63, like every ``--seed``).

Exit code 0 only if every test and every case passed, 1 otherwise; 2 for an
unknown exercise, a missing file or a refused import. The exercises are
those in ``$MINIDB_EXERCISES_DIR``, else the repository's ``exercises/``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import importlib.util
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path
from random import Random
from types import ModuleType

from minidb import impl
from minidb.cli.common import seed_arg
from minidb.errors import UserError

CASES = 300  # random cases at most, per exercise
SHOWN = 3  # failed cases printed
TRICKS = {"importlib", "runpy", "imp"}
TRICK_CALLS = {"__import__", "exec", "eval", "compile"}


class Refused(UserError):
    """student.py imports what it must write itself."""


def register(commands) -> None:
    p = commands.add_parser("grade", help="grade an exercise's student.py: its tests, random cases, no copying")
    p.add_argument("exercise", help="the exercise's directory name, or its number (04a)")
    p.add_argument("--seed", type=seed_arg, default=None, help=argparse.SUPPRESS)
    p.set_defaults(run=run)


def find_exercise(name: str) -> Path:
    root = impl.exercises_dir()
    names = sorted(p.name for p in root.iterdir() if p.is_dir() and re.match(r"\d\d[a-z]?_", p.name)) \
        if root.is_dir() else []
    matches = [n for n in names if n == name or n.split("_", 1)[0] == name]
    if len(matches) != 1:
        raise UserError(f"no exercise {name!r} in {root} (exercises: {', '.join(names) or 'none'})")
    directory = root / matches[0]
    for needed in ("student.py", "reference.py"):
        if not (directory / needed).is_file():
            raise UserError(f"{directory / needed} does not exist")
    return directory


def test_file(directory: Path) -> Path:
    files = sorted(directory.glob("test_*.py"))
    if not files:
        raise UserError(f"{directory}: no test_*.py")
    return files[0]


def imported_from(path: Path) -> set[str]:
    """The minidb modules a file imports from (``from m import n``, ``import m``)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "minidb":
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules |= {a.name for a in node.names if a.name.split(".")[0] == "minidb"}
    return modules


def literal(path: Path, name: str, default):
    """A top-level ``name = <literal>`` of ``path`` (read, not run), else ``default``."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return default


def related(module: str, forbidden: set[str]) -> bool:
    """``module`` is one of ``forbidden``, a package of one, or inside one."""
    return any(module == f or f.startswith(module + ".") or module.startswith(f + ".") for f in forbidden)


def refusal(student: Path, forbidden: set[str], allowed: dict[str, list[str]]) -> str | None:
    """Why ``student`` may not be graded (see the module documentation), or None."""
    try:
        tree = ast.parse(student.read_text(), str(student))
    except SyntaxError as e:
        return f"{student}:{e.lineno}: a syntax error: {e.msg}"
    for node in ast.walk(tree):
        where = f"{student}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top == "reference" or top in TRICKS or alias.name.endswith(".reference") \
                        or related(alias.name, forbidden):
                    return f"{where}: imports {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level or module.split(".")[0] in TRICKS | {"reference"} or module.endswith(".reference"):
                return f"{where}: imports from {'.' * node.level}{module}"
            if related(module, forbidden):
                for alias in node.names:
                    if alias.name not in allowed.get(module, ()):
                        return f"{where}: imports {alias.name} from {module}, where minidb implements this exercise"
        elif isinstance(node, ast.Name) and node.id in TRICK_CALLS:
            return f"{where}: uses {node.id}"
        elif isinstance(node, ast.Attribute) and node.attr == "modules" and getattr(node.value, "id", "") == "sys":
            return f"{where}: uses sys.modules"
    return None


def run_tests(directory: Path) -> tuple[int, int, str]:
    """(passed, failed) of the exercise's tests against student.py, and pytest's last line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env[impl.ENV_VAR] = impl.STUDENT
    command = [sys.executable, "-m", "pytest", str(directory), "--exercise-impl=student", "-q", "-n", "0",
               "-p", "no:cacheprovider", "-p", "no:nbval"]
    try:
        result = subprocess.run(command, cwd=directory.parent.parent, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return 0, 1, "the tests took longer than 10 minutes"
    lines = [line for line in result.stdout.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    last = lines[-1] if lines else (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?)", lines[-1])} if lines else {}
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    if result.returncode not in (0, 1) or not counts:
        failed = max(failed, 1)
    return counts.get("passed", 0), failed, last if isinstance(last, str) else last[0]


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass in the file looks its module up there
    spec.loader.exec_module(module)
    return module


def run_random_cases(directory: Path, tests: Path, seed: int) -> tuple[int, int, list[str]] | None:
    """(passed, failed, first failures) of the test file's ``random_cases``; None if it has none."""
    tag = "".join(c if c.isalnum() else "_" for c in directory.name)
    test_module = load(tests, f"minidb_grade_{tag}_tests")
    cases = getattr(test_module, "random_cases", None)
    if cases is None:
        return None
    try:
        student = load(directory / "student.py", f"minidb_grade_{tag}_student")
    except Exception as e:
        return 0, 1, [f"student.py cannot be imported: {type(e).__name__}: {e}"]
    reference = load(directory / "reference.py", f"minidb_grade_{tag}_reference")
    return compare(student, reference, cases(Random(seed)))


def compare(student, reference, cases) -> tuple[int, int, list[str]]:
    """(passed, failed, first failures) of ``student``'s answers against ``reference``'s on ``cases``
    (``(function, args, kwargs)``, at most ``CASES``), each given copies of the arguments."""
    passed, failed, shown = 0, 0, []
    with impl.using(impl.ENGINE):
        for number, (function, args, kwargs) in enumerate(cases, 1):
            if number > CASES:
                break
            expected = getattr(reference, function)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            try:
                got = getattr(student, function)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            except Exception as e:
                got = f"{type(e).__name__}: {e}"
            if got == expected:
                passed += 1
                continue
            failed += 1
            if len(shown) < SHOWN:
                call = f"{function}({', '.join([repr(a) for a in args] + [f'{k}={v!r}' for k, v in kwargs.items()])})"
                shown.append(f"case {number}: {call[:300]} gave {got!r:.200}, expected {expected!r:.200}")
    return passed, failed, shown


def run(args) -> int:
    directory = find_exercise(args.exercise)
    tests = test_file(directory)
    forbidden = imported_from(directory / "reference.py")
    why = refusal(directory / "student.py", forbidden, literal(tests, "STUDENT_MAY_IMPORT", {}))
    if why is not None:
        raise Refused(f"refused: {why} (write the function yourself; see exercises/README.md, Grading)")
    seed = args.seed if args.seed is not None else secrets.randbelow(2**32)
    passed, failed, last = run_tests(directory)
    print(f"tests: {passed} passed, {failed} failed" + ("" if failed == 0 else f" ({last})"))
    random_result = run_random_cases(directory, tests, seed)
    if random_result is None:
        print("random cases: none (the exercise defines no random_cases)")
        case_failures = 0
    else:
        ok, case_failures, shown = random_result
        print(f"random cases: {ok} passed, {case_failures} failed (seed {seed})")
        for line in shown:
            print(f"  {line}")
    verdict = failed == 0 and passed > 0 and case_failures == 0
    print(f"grade {directory.name}: {'pass' if verdict else 'fail'}")
    return 0 if verdict else 1
