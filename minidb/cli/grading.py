"""What ``minidb grade`` does the same for an exercise and a project: refusal, outcomes, weights, reports.

A grade is a list of **outcomes**, one per graded test: a name, a category, its points (``max_score``),
whether it passed and, if not, one line saying why. Everything else is read off that list: the score
(the points of the outcomes that passed), the verdict (pass only if every outcome passed) and the
three reports. Worked for exercise 04a with a student's file that passes 15 of its 16 tests and
agrees with the reference on every random case::

    outcome                                     category       max_score  passed
    test_the_readme_worked_example              tests          1          yes
    ... (14 more)                               tests          1          yes
    test_the_hand_wraps_around                  tests          1          no: assert (3, 0, []) == (0, 1, [])
    random cases                                random cases   1          yes
    score 16/17, verdict fail

**Refusal.** The student's file is read (never run) with :mod:`ast`, and refused if it imports what
it must write itself (see :func:`refusal`): a refused file is not graded at all, every outcome fails.

**Tests.** pytest runs the tests in a subprocess (:func:`run_pytest`) and reports each test case in
its ``--junitxml`` file, read here with :mod:`xml.etree`. A failure, an error or a skip (the student's
code may call ``pytest.skip``) is a failed test; its reason is the first line of pytest's message
(the assertion's, or the exception's), trimmed to 160 characters. When pytest stops before it
reports a test (a test file that cannot be imported, the student's code ending the process), every
test function the test files define (read with :mod:`ast`) fails with pytest's last line as the
reason: the maximum score never depends on how badly a submission breaks.

**Weights.** Every test weighs 1 unless its test file says otherwise in a literal
``WEIGHTS = {"test_name": 2, ...}``, keyed by the test function's name (each case of a
parametrized test weighs what its function does); a key that names no test function, or a weight
that is not a positive number, is the exercise's error (a one-line :class:`UserError`, exit 2).

**Reports** (``--format``):

``text``        one line per outcome, the summary lines, the score, the verdict::

                    passed  1  test_the_readme_worked_example
                    failed  1  test_the_hand_wraps_around: assert (3, 0, []) == (0, 1, [])
                    ...
                    tests: 15 passed, 1 failed
                    random cases: 300 passed, 0 failed (seed 2719431)
                    score: 16/17
                    grade 04a_clock_replacement: fail

``json``        minidb's own schema, one object::

                    {"name": "04a_clock_replacement", "kind": "exercise", "impl": "student",
                     "seed": 2719431, "score": 16, "max_score": 17, "passed": false,
                     "refused": null, "summary": ["tests: 15 passed, 1 failed", ...],
                     "tests": [{"name": "test_the_readme_worked_example", "category": "tests",
                                "score": 1, "max_score": 1, "status": "passed", "why": "",
                                "details": [], "hidden": false}, ...]}

                ``status`` is ``passed`` or ``failed``; ``why`` is the one line, ``details`` the
                lines under it (the random cases that differ); ``refused`` the refusal, if any.

``gradescope``  Gradescope's ``results.json``: ``score``, ``output`` (the summary and the score),
                ``stdout_visibility`` (``hidden`` when some tests are), and ``tests``, each with ``name``, ``score``, ``max_score``,
                ``status``, ``output`` (why, then the details) and ``visibility`` (``visible``, or
                ``after_published`` for a project's hidden tests).

A hidden test's reason is never shown (its assertion would show the instructor's expected values);
a random case's never names the reference's answer (see ``grade.py``).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from minidb import impl
from minidb.errors import UserError

TRIM = 160  # characters of a reason
TIMEOUT = 600  # seconds for one pytest run or one judge command
HIDDEN_WHY = "a hidden test failed (its details are not shown)"
TRICKS = {"importlib", "runpy", "imp"}
TRICK_CALLS = {"__import__", "exec", "eval", "compile"}
ENGINE_ROOT = Path(__file__).resolve().parents[2]  # the directory holding the minidb package being run


class Refused(UserError):
    """student.py imports what it must write itself."""


@dataclass
class Outcome:
    """One graded test."""

    name: str
    category: str
    max_score: float
    passed: bool
    why: str = ""
    details: list[str] = field(default_factory=list)
    hidden: bool = False

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0


@dataclass
class Grade:
    """Everything a report says: what was graded, how, and its outcomes."""

    name: str
    kind: str  # "exercise" or "project"
    impl: str  # "student" or "reference"
    outcomes: list[Outcome]
    summary: list[str] = field(default_factory=list)
    seed: int | None = None
    refused: str | None = None

    @property
    def score(self) -> float:
        return sum(o.score for o in self.outcomes)

    @property
    def max_score(self) -> float:
        return sum(o.max_score for o in self.outcomes)

    @property
    def passed(self) -> bool:
        return self.refused is None and bool(self.outcomes) and all(o.passed for o in self.outcomes)


@dataclass
class Case:
    """One test case of pytest's junit report."""

    file: str  # the test file's name
    name: str  # the test's name, with its parameters: test_a[2]
    passed: bool
    why: str

    @property
    def function(self) -> str:
        return self.name.split("[", 1)[0]


# --- refusal -------------------------------------------------------------------------------------


def imported_from(path: Path) -> set[str]:
    """The minidb modules a file imports from (``from m import n``, ``import m``)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "minidb":
            modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules |= {a.name for a in node.names if a.name.split(".")[0] == "minidb"}
    return modules


def names_imported(path: Path) -> dict[str, list[str]]:
    """``{module: [names]}`` of a file's ``from module import names``."""
    found: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.setdefault(node.module, []).extend(a.name for a in node.names)
    return found


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
    """Why ``student`` may not be graded, or None: it imports ``reference``, a module of ``forbidden``
    (or one of its packages or submodules; only the names ``allowed`` lists for it are let through),
    imports relatively, or uses ``importlib``, ``runpy``, ``__import__``, ``exec``, ``eval``,
    ``compile`` or ``sys.modules``."""
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
                        return f"{where}: imports {alias.name} from {module}, where minidb implements this"
        elif isinstance(node, ast.Name) and node.id in TRICK_CALLS:
            return f"{where}: uses {node.id}"
        elif isinstance(node, ast.Attribute) and node.attr == "modules" and getattr(node.value, "id", "") == "sys":
            return f"{where}: uses sys.modules"
    return None


# --- tests, through pytest's junit report --------------------------------------------------------


def one_line(text: str) -> str:
    """The first non-blank line of ``text``, trimmed to :data:`TRIM` characters."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= TRIM else line[:TRIM - 3] + "..."


def child_env(mode: str | None) -> dict[str, str]:
    """The environment of a child process: none of the running pytest's variables, the exercises
    directory and the minidb package this process runs, ``$MINIDB_IMPL`` set to ``mode`` (or unset)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k != impl.ENV_VAR}
    if mode is not None:
        env[impl.ENV_VAR] = mode
    env[impl.DIR_VAR] = str(impl.exercises_dir().resolve())
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the graded tests need no plugin; each run starts faster
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ENGINE_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def junit_cases(xml_text: str) -> tuple[list[Case] | None, str]:
    """The test cases of a junit report, or None and why if pytest could not collect the tests."""
    cases: list[Case] = []
    for element in ET.fromstring(xml_text).iter("testcase"):
        problem = next((c for c in element if c.tag in ("failure", "error", "skipped")), None)
        if problem is not None and problem.tag == "error" and not element.get("classname"):
            lines = [s[1:].strip() for s in (problem.text or "").splitlines() if s.startswith("E ")]
            return None, one_line(lines[-1] if lines else problem.get("message", "collection failure"))
        why = ""
        if problem is not None:
            why = one_line(problem.get("message", "") or problem.tag)
            why = f"skipped: {why}" if problem.tag == "skipped" else why
        cases.append(Case(Path(element.get("file", "")).name, element.get("name", "?"), problem is None, why))
    return cases, ""


def run_pytest(target: Path, exercise_impl: str, mode: str | None) -> tuple[list[Case] | None, str]:
    """pytest on ``target`` with ``--exercise-impl=exercise_impl`` in a subprocess (``$MINIDB_IMPL``
    set to ``mode``): its test cases, or None and why it reported none."""
    with tempfile.TemporaryDirectory(prefix="minidb-grade-") as scratch:
        report = Path(scratch) / "junit.xml"
        command = [sys.executable, "-m", "pytest", str(target), f"--exercise-impl={exercise_impl}", "-q",
                   "-p", "no:cacheprovider", f"--junitxml={report}",
                   "-o", "junit_family=xunit1"]
        try:
            result = subprocess.run(command, cwd=impl.exercises_dir().resolve().parent, env=child_env(mode),
                                    capture_output=True, text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, f"the tests took longer than {TIMEOUT // 60} minutes"
        if result.returncode == 5:  # no tests collected
            return [], ""
        if not report.is_file():
            last = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
            return None, f"pytest stopped (exit code {result.returncode}): {one_line(last[0])}"
        return junit_cases(report.read_text())


def defined_tests(files: list[Path]) -> list[str]:
    """The test functions the files define (``test_*`` at the top, or in a ``Test*`` class)."""
    names = []
    for path in files:
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
                names.append(node.name)
            elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                names += [n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    return names


def weights(files: list[Path], also: tuple[str, ...] = ()) -> dict[str, float]:
    """The test files' ``WEIGHTS``, checked: every key a test function (or one of ``also``), every
    weight a positive number."""
    found: dict[str, float] = {}
    for path in files:
        found.update(literal(path, "WEIGHTS", {}))
    unknown = sorted(set(found) - set(defined_tests(files)) - set(also))
    if unknown:
        raise UserError(f"{files[0].parent}: WEIGHTS names {', '.join(unknown)}, which is no test")
    bad = sorted(k for k, w in found.items() if isinstance(w, bool) or not isinstance(w, int | float) or w <= 0)
    if bad:
        raise UserError(f"{files[0].parent}: WEIGHTS gives {', '.join(bad)} a weight that is not a positive number")
    return found


def outcomes_of(files: list[Path], cases: list[Case] | None, why_none: str, category: str,
                table: dict[str, float], hidden: bool = False, with_file: bool = False) -> list[Outcome]:
    """One outcome per test case (per test function of ``files``, all failed, if pytest reported none),
    each worth its weight in ``table`` (see :func:`weights`), else 1; ``with_file`` names each by its
    file too (``test_m1.py::test_a``)."""
    if cases is None:
        cases = [Case(path.name, name, False, f"not run: {why_none}")
                 for path in files for name in defined_tests([path])]
    outcomes = []
    for case in cases:
        name = f"{case.file}::{case.name}" if with_file else case.name
        why = HIDDEN_WHY if hidden and not case.passed else case.why
        outcomes.append(Outcome(name, category, table.get(case.function, 1), case.passed, why, hidden=hidden))
    return outcomes


def scaled(outcomes: list[Outcome], points: float) -> list[Outcome]:
    """The outcomes with ``points`` split among them in proportion to their weights."""
    total = sum(o.max_score for o in outcomes)
    for o in outcomes:
        o.max_score = points * o.max_score / total
    return outcomes


def failed_all(grade: Grade, why: str) -> Grade:
    """``grade`` with every outcome failed for ``why`` (a refused file is not graded)."""
    for o in grade.outcomes:
        o.passed, o.why, o.details = False, why, []
    return grade


# --- reports ------------------------------------------------------------------------------------


def points(x: float) -> str:
    return f"{round(x, 2):g}"


def text_report(grade: Grade) -> str:
    width = max((len(points(o.max_score)) for o in grade.outcomes), default=1)
    lines = []
    for o in grade.outcomes:
        lines.append(f"  {'passed' if o.passed else 'failed'}  {points(o.max_score):>{width}}  {o.name}"
                     + (f": {o.why}" if o.why else ""))
        lines += [f"      {d}" for d in o.details]
    lines += grade.summary
    if grade.refused:
        lines.append(f"refused: {grade.refused}")
    lines.append(f"score: {points(grade.score)}/{points(grade.max_score)}")
    lines.append(f"grade {grade.name}: {'pass' if grade.passed else 'fail'}")
    return "\n".join(lines) + "\n"


def json_report(grade: Grade) -> dict:
    return {
        "name": grade.name, "kind": grade.kind, "impl": grade.impl, "seed": grade.seed,
        "score": round(grade.score, 4), "max_score": round(grade.max_score, 4), "passed": grade.passed,
        "refused": grade.refused, "summary": grade.summary,
        "tests": [{"name": o.name, "category": o.category, "score": round(o.score, 4),
                   "max_score": round(o.max_score, 4), "status": "passed" if o.passed else "failed",
                   "why": o.why, "details": o.details, "hidden": o.hidden} for o in grade.outcomes],
    }


def gradescope_report(grade: Grade) -> dict:
    output = grade.summary + ([f"refused: {grade.refused}"] if grade.refused else [])
    output.append(f"score: {points(grade.score)}/{points(grade.max_score)}")
    return {
        "score": round(grade.score, 4),
        "output": "\n".join(output),
        "stdout_visibility": "hidden" if any(o.hidden for o in grade.outcomes) else "visible",
        "tests": [{"name": o.name, "score": round(o.score, 4), "max_score": round(o.max_score, 4),
                   "status": "passed" if o.passed else "failed", "output": "\n".join(filter(None, [o.why, *o.details])),
                   "visibility": "after_published" if o.hidden else "visible"} for o in grade.outcomes],
    }


FORMATS = ("text", "json", "gradescope")


def render(grade: Grade, form: str) -> str:
    if form == "text":
        return text_report(grade)
    report = json_report(grade) if form == "json" else gradescope_report(grade)
    return json.dumps(report, indent=2) + "\n"
