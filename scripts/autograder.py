"""Gradescope autograders (`make autograder`): one zip per exercise and per project, in dist/autograder/NAME.zip.

Gradescope unpacks an autograder's zip in /autograder/source, runs its ``setup.sh`` once while it builds the
image, then its ``run_autograder`` for every submission, with the submitted files in /autograder/submission;
``run_autograder`` must leave /autograder/results/results.json. Each zip here holds:

    setup.sh             a Python 3.11+ in source/.venv with what grading needs, pinned by constraints.txt
    run_autograder       the submitted student.py in place of the stub, then
                         minidb grade NAME --format gradescope --out $AUTOGRADER_ROOT/results/results.json
    minidb/              the engine, run from this folder (not installed)
    exercises/NAME/      the exercise (or exercises/projects/NAME/, the project, hidden tests included)
    tests/...            for a project, the modules of the engine's tests its own tests import (helpers, and
                         tests they collect again), with tests/golden/ that those compare against
    exercises/conftest.py, conftest.py, pyproject.toml, constraints.txt, README.md
    wheels/              only with --wheels DIR: the pinned wheels, so setup.sh needs no network

The two scripts are scripts/autograder_template/'s, with the exercise's name filled in. Both honour
``AUTOGRADER_ROOT`` (default /autograder), and ``run_autograder`` ``MINIDB_PYTHON`` (default the venv
setup.sh makes), so a zip can be tried on any machine: unpack it in ROOT/source, put a student.py in
ROOT/submission and run ``AUTOGRADER_ROOT=ROOT bash ROOT/source/run_autograder`` (tests/test_autograder.py
does). The zips are the same bytes for the same files (sorted entries, a fixed date).

What setup.sh installs: minidb's dependencies (pyproject.toml's ``dependencies``) and what grading needs
(:data:`GRADING`), each pinned by constraints.txt; none of the other extras (Spark, JupyterLab, the slides). For a Gradescope without network, download the wheels on
a machine with the image's Python and platform, then build with them:

    .venv/bin/pip download -d wheels -c constraints.txt tqdm matplotlib pytest pytest-xdist hypothesis
    .venv/bin/python scripts/autograder.py --wheels wheels

    .venv/bin/python scripts/autograder.py                  # every exercise and project
    .venv/bin/python scripts/autograder.py 04a --out /tmp   # one, elsewhere
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "autograder_template"
EXERCISES = ROOT / "exercises"
PROJECTS = EXERCISES / "projects"
# What grading needs beyond minidb's own dependencies: the test runner and what the tests use, and matplotlib,
# which the command line imports as it starts (the pictures' module of minidb figures).
GRADING = ("matplotlib", "pytest", "pytest-xdist", "hypothesis")
TOP_FILES = ("pyproject.toml", "constraints.txt", "README.md", "conftest.py", "exercises/conftest.py")
DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip holds: the same bytes every build
SCRIPTS = ("setup.sh", "run_autograder")
TESTS = "tests"  # the engine's test package, whose helpers and tests a project's tests import


def targets() -> dict[str, Path]:
    """Every exercise and project by the name ``minidb grade`` takes, with its directory."""
    found = {p.name: p for p in sorted(EXERCISES.iterdir()) if p.is_dir() and re.match(r"\d\d[a-z]?_", p.name)}
    if PROJECTS.is_dir():
        found |= {p.name: p for p in sorted(PROJECTS.iterdir()) if (p / "project.json").is_file()}
    return found


def packages() -> list[str]:
    """The packages setup.sh installs, each pinned in constraints.txt (else this stops)."""
    wanted = [re.split(r"[<>=!~ \[;]", d, maxsplit=1)[0] for d in
              tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]] + list(GRADING)
    pinned = {line.split("==")[0].strip().lower() for line in (ROOT / "constraints.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}
    loose = [p for p in wanted if p.lower() not in pinned]
    if loose:
        sys.exit(f"autograder: constraints.txt pins no version of {', '.join(loose)}")
    return wanted


def files_of(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix != ".pyc")


def module_file(name: str) -> Path | None:
    """``tests.pagestore.helpers`` -> ROOT/tests/pagestore/helpers.py (or a package's ``__init__.py``)."""
    path = ROOT.joinpath(*name.split("."))
    return next((f for f in (path.with_suffix(".py"), path / "__init__.py") if f.is_file()), None)


def tests_imported(files: list[Path]) -> list[Path]:
    """The modules of the engine's ``tests`` package that ``files`` import, directly or through each other,
    with the packages' ``__init__.py``: a project's tests reuse the engine's helpers and collect some of
    its tests, which the zip must carry or every such test fails before it runs."""
    todo, seen = [f for f in files if f.suffix == ".py"], set()
    while todo:
        file = todo.pop()
        if file in seen:
            continue
        seen.add(file)
        for node in ast.walk(ast.parse(file.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                     if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            for parts in (name.split(".") for name in names if name.split(".")[0] == TESTS):
                todo += [f for f in (module_file(".".join(parts[:i])) for i in range(1, len(parts) + 1)) if f]
    return sorted(f for f in seen if f.relative_to(ROOT).parts[0] == TESTS)


def contents(directory: Path) -> list[Path]:
    """What the zip of one exercise or project carries besides the scripts and wheels."""
    chosen = [ROOT / name for name in TOP_FILES] + files_of(ROOT / "minidb") + files_of(directory)
    if directory.parent == PROJECTS:  # what every project shares (a conftest), the engine's tests it reuses
        chosen += sorted(p for p in PROJECTS.iterdir() if p.is_file())
        reused = tests_imported(files_of(directory))
        chosen += reused + (files_of(ROOT / TESTS / "golden") if reused else [])
    return chosen


def add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o755 if executable else 0o644) << 16
    archive.writestr(info, data)


def build(name: str, directory: Path, out: Path, wheels: list[Path]) -> Path:
    """dist/autograder/NAME.zip (in ``out``) for one exercise or project."""
    fill = {"@NAME@": name, "@TARGET@": directory.relative_to(ROOT).as_posix(), "@PACKAGES@": " ".join(packages())}
    path = out / f"{name}.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for script in SCRIPTS:
            text = (TEMPLATES / script).read_text()
            for placeholder, value in fill.items():
                text = text.replace(placeholder, value)
            add(archive, script, text.encode(), executable=True)
        for file in contents(directory):
            add(archive, file.relative_to(ROOT).as_posix(), file.read_bytes())
        for wheel in wheels:
            add(archive, f"wheels/{wheel.name}", wheel.read_bytes())
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Gradescope autograder zips, one per exercise and project")
    parser.add_argument("names", nargs="*", metavar="NAME", help="exercises (04a or 04a_clock_replacement) or "
                        "projects to build (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist" / "autograder", help="where the zips go")
    parser.add_argument("--wheels", type=Path, help="a folder of the pinned wheels to carry (no network in setup.sh)")
    args = parser.parse_args(argv)
    every = targets()
    chosen = {}
    for wanted in args.names or list(every):
        matches = [n for n in every if n == wanted or n.split("_", 1)[0] == wanted]
        if len(matches) != 1:
            parser.error(f"no exercise or project {wanted!r} (there are: {', '.join(every)})")
        chosen[matches[0]] = every[matches[0]]
    wheels = sorted(args.wheels.glob("*.whl")) if args.wheels else []
    if args.wheels and not wheels:
        parser.error(f"--wheels {args.wheels}: no .whl files there")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, directory in chosen.items():
        print(build(name, directory, args.out, wheels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
