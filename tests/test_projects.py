"""The course projects (exercises/projects/NAME/): their layout, their skeletons, their mutants, student mode.

- every project has the files docs/projects.md lists, and a ``project.json`` of the shared schema whose
  components are hot spots declared with the project's name and whose files exist;
- ``student.py`` is the skeleton, unchanged, in the repository;
- against the untouched skeleton every public test fails, with the "not implemented yet" of minidb.impl
  (not an import or a collection error); against the reference they pass (``make test`` runs them);
- each mutant (``mutants/NAME.py``) fails the project's judge, run through the CLI with the mutant as the
  student's file (``$MINIDB_EXERCISES_DIR`` pointed at a copy), seed by seed until the first violation;
- in student mode the engine really constructs the student's class, and an unfinished or missing one
  reaches the command line as one line and exit code 2.
- the student edition of each project holds no line of the component, imports, and collects every test
  without an error (a test module that ran the engine at import would stop its ``make test`` there).
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from minidb import impl
from minidb.cli import main

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = sorted(p for p in (ROOT / "exercises" / "projects").iterdir() if (p / "project.json").is_file())
KEYS = {"name", "title", "components", "reference_files", "fast_files", "judge", "weights"}
INHERITED = ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
             "PYTEST_CURRENT_TEST", "PYTEST_PLUGINS", "MINIDB_IMPL", "MINIDB_EXERCISES_DIR")


def spec(project: Path) -> dict:
    return json.loads((project / "project.json").read_text())


def hot_spot(name: str) -> impl.HotSpot:
    module, _, _ = name.rpartition(".")
    importlib.import_module("minidb." + module)
    return {spot.name: spot for spot in impl.hot_spots()}[name]


def test_there_are_projects():
    assert {p.name for p in PROJECTS} >= {"aries_restart", "buffer_pool", "checkpointer", "lock_manager", "vlsn_index"}


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_a_project_has_its_files_and_its_project_json(project):
    data = spec(project)
    assert KEYS <= set(data) <= KEYS | {"solution_files"} and data["name"] == project.name
    for name in ("README.md", "skeleton.py", "student.py"):
        assert (project / name).is_file(), name
    assert sorted(project.glob("tests/public/test_m1_*.py")) and sorted(project.glob("tests/hidden/test_*.py"))
    assert len(list((project / "mutants").glob("*.py"))) >= 2
    for name in data["components"]:
        assert hot_spot(name).project == project.name, f"{name} is not declared a component of {project.name}"
    for path in data["reference_files"] + data["fast_files"]:
        assert (ROOT / path).is_file(), path
    assert set(data["weights"]) == {"public", "hidden", "judge"} and sum(data["weights"].values()) == 100
    assert data["judge"] and all(isinstance(args, list) and args for args in data["judge"])


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_student_py_is_the_skeleton(project):
    assert (project / "student.py").read_text() == (project / "skeleton.py").read_text(), (
        f"{project.name}/student.py is not the skeleton: restore it with "
        f"git checkout {(project / 'student.py').relative_to(ROOT)}")


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_the_skeleton_fails_every_public_test_as_not_implemented(project):
    """Every public test fails or errors (a fixture that builds the component errors) against the skeleton,
    each with minidb.impl's "is not implemented yet": never an import error, never a pass."""
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    env["COLUMNS"] = "2000"  # the short summary keeps each test's message whole
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the projects' tests need no plugin: a faster start
    result = subprocess.run(
        [sys.executable, "-m", "pytest", os.path.relpath(project / "tests" / "public", ROOT), "--exercise-impl=student",
         "-q", "-rfE", "-p", "no:cacheprovider"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    tail = "\n".join((result.stdout + result.stderr).splitlines()[-15:])
    summary = [line for line in result.stdout.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    assert result.returncode == 1 and summary and "passed" not in summary[-1], tail
    outcomes = [line for line in result.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    total = sum(int(n) for n, _ in re.findall(r"(\d+) (failed|errors?)", summary[-1]))
    assert len(outcomes) == total > 0, tail
    wrong = [line for line in outcomes if "is not implemented yet" not in line]
    assert not wrong, "\n".join(wrong[:5])


def judge_runs(args: list[str]) -> list[list[str]]:
    """A judge's command, one seed per run (``--seeds N`` from ``--seed S``), so a test stops at the first
    seed that fails."""
    if "--seeds" not in args:
        return [args]
    at = args.index("--seeds")
    count = int(args[at + 1])
    rest = args[:at] + args[at + 2:]
    first = 1
    if "--seed" in rest:
        where = rest.index("--seed")
        first = int(rest[where + 1])
        rest = rest[:where] + rest[where + 2:]
    return [rest + ["--seed", str(seed)] for seed in range(first, first + count)]


MUTANTS = [(project, path.stem) for project in PROJECTS for path in sorted((project / "mutants").glob("*.py"))]


@pytest.mark.slow
@pytest.mark.parametrize("project,mutant", MUTANTS, ids=[f"{p.name}-{m}" for p, m in MUTANTS])
def test_each_mutant_fails_the_judge(project, mutant, tmp_path, monkeypatch, capsys):
    home = tmp_path / impl.PROJECTS / project.name
    home.mkdir(parents=True)
    (home / "student.py").write_text((project / "mutants" / f"{mutant}.py").read_text())
    monkeypatch.setenv(impl.DIR_VAR, str(tmp_path))
    monkeypatch.delenv(impl.ENV_VAR, raising=False)
    codes = []
    with impl.using(None):
        for args in spec(project)["judge"]:
            for run in judge_runs(args):
                codes.append(main(run + ["--impl", "student", "--project", project.name]))
                if codes[-1] != 0:
                    break
            if codes[-1] != 0:
                break
    assert codes[-1] == 1, f"mutant {mutant} of {project.name} passed the whole judge ({len(codes)} runs)"
    assert "violation" in capsys.readouterr().out


COUNTING = '''
from minidb.pagestore.buffer import bufferpool as reference

BUILT = []


class BufferPool(reference.BufferPool):
    def __init__(self, *args, **options):
        BUILT.append(args[0])
        super().__init__(*args, **options)
'''


def test_student_mode_builds_the_students_pool_wherever_the_engine_builds_one(tmp_path):
    """A counting subclass as the student's file: the crash sweep's volumes and the storage manager
    construct it; the fast twin never runs for the component, even under a fast choice before."""
    home = tmp_path / impl.PROJECTS / "buffer_pool"
    home.mkdir(parents=True)
    (home / "student.py").write_text(COUNTING)
    from minidb.crashtest import volume
    from minidb.pagestore import BUFFER_POOL

    with impl.using(impl.STUDENT, tmp_path, only=["buffer_pool"]):
        assert not BUFFER_POOL.fast_runs and BUFFER_POOL.student_runs
        assert volume.crash_sweep(1, ops=8).violations == []
        built = sys.modules["minidb_student_projects_buffer_pool"].BUILT
        assert len(built) > 2  # the workload's pool, and one per crash point's redo
        assert type(BUFFER_POOL.call(2)).__mro__[1].__module__ == "minidb_student_projects_buffer_pool"
    with impl.using(impl.ENGINE):
        assert type(BUFFER_POOL.call(2)) is BUFFER_POOL.reference


COUNTING_RESTART = '''
from minidb.pagestore.restart import restart as reference

BUILT = []


class Restart(reference.Restart):
    def __init__(self, *args, **options):
        BUILT.append(args[0])
        super().__init__(*args, **options)
'''


def test_student_mode_builds_the_students_restart_and_no_fast_pass_runs(tmp_path):
    """The restart project's component: every open of the crash sweep constructs the student's class, and
    neither the fast restart nor the fast analysis and redo it calls run, even under a fast choice before."""
    home = tmp_path / impl.PROJECTS / "aries_restart"
    home.mkdir(parents=True)
    (home / "student.py").write_text(COUNTING_RESTART)
    from minidb.crashtest import btree
    from minidb.pagestore.restart.analysis import ANALYSIS_PASS
    from minidb.pagestore.restart.redo import REDO_PASS
    from minidb.pagestore.restart.restart import RESTART

    with impl.using(impl.FAST):
        assert RESTART.fast_runs and ANALYSIS_PASS.fast_runs
    with impl.using(impl.STUDENT, tmp_path, only=["aries_restart"]):
        assert RESTART.student_runs and not (RESTART.fast_runs or ANALYSIS_PASS.fast_runs or REDO_PASS.fast_runs)
        assert btree.crash_sweep(3, ops=20).violations == []
        built = sys.modules["minidb_student_projects_aries_restart"].BUILT
        assert len(built) > 10  # the workload's open, and one per crash point's restart
        assert RESTART.chosen().__mro__[1].__module__ == "minidb_student_projects_aries_restart"


CHECKPOINT_COUNTING = '''
from minidb.logstore.checkpoint import checkpointer, dirty_map

BUILT = []


class DirtyINMap(dirty_map.DirtyINMap):
    def __init__(self, *args):
        BUILT.append("map")
        super().__init__(*args)


class Checkpointer(checkpointer.Checkpointer):
    def __init__(self, *args):
        BUILT.append("checkpointer")
        super().__init__(*args)
'''


def test_student_mode_builds_the_students_checkpointer_and_dirty_map_in_every_environment(tmp_path):
    """Counting subclasses as the student's file: every environment the log store's crash sweep opens (the
    workload's, one per crash point's recovery) builds both, and hands the one map to the checkpointer and
    the evictor."""
    home = tmp_path / impl.PROJECTS / "checkpointer"
    home.mkdir(parents=True)
    (home / "student.py").write_text(CHECKPOINT_COUNTING)
    from minidb.crashtest import logstore
    from minidb.io import SimDisk
    from minidb.logstore import Environment
    from minidb.logstore.checkpoint import CHECKPOINTER, DIRTY_IN_MAP

    with impl.using(impl.STUDENT, tmp_path, only=["checkpointer"]):
        assert CHECKPOINTER.student_runs and DIRTY_IN_MAP.student_runs
        assert logstore.crash_sweep(3, ops=6).violations == []
        built = sys.modules["minidb_student_projects_checkpointer"].BUILT
        assert built.count("map") == built.count("checkpointer") > 2
        env = Environment.open(SimDisk("counted"))
        assert type(env.checkpointer).__mro__[1].__module__ == "minidb_student_projects_checkpointer"
        assert env.evictor.dirty_map is env.checkpointer.dirty_map
        assert type(env.dirty_map).__mro__[1].__module__ == "minidb_student_projects_checkpointer"
        assert [r.invoker for r in env.checkpointer.history] == ["recovery"]


def test_a_missing_student_file_or_class_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(impl.DIR_VAR, str(tmp_path))
    (tmp_path / impl.PROJECTS / "buffer_pool").mkdir(parents=True)
    (tmp_path / impl.PROJECTS / "buffer_pool" / "student.py").write_text("class Other:\n    pass\n")
    with impl.using(None):
        assert main(["crashtest", "volume", "--seed", "1", "--ops", "5", "--impl", "student",
                     "--project", "buffer_pool"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "defines no class BufferPool" in err
        assert main(["crashtest", "volume", "--ops", "5", "--impl", "student", "--project", "no_such"]) == 2
        assert "no project 'no_such'" in capsys.readouterr().err
        assert main(["crashtest", "volume", "--ops", "5", "--project", "buffer_pool"]) == 2
        assert "only with --impl student" in capsys.readouterr().err


def test_the_untouched_skeleton_inside_the_engine_is_one_line_and_exit_2(capsys):
    with impl.using(None):
        assert main(["crashtest", "volume", "--seed", "1", "--ops", "5", "--impl", "student",
                     "--project", "buffer_pool"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "BufferPool.__init__ is not implemented yet" in err


def test_a_bare_student_mode_runs_no_project():
    from minidb.pagestore import BUFFER_POOL

    with impl.using(impl.STUDENT):
        assert not BUFFER_POOL.student_runs and BUFFER_POOL.chosen() is BUFFER_POOL.reference


def method_bodies(source: str, class_name: str) -> list[str]:
    """The bodies (docstrings left out) of the methods of ``class_name`` in ``source``, dedented, one
    string each, those of more than one statement or of a statement longer than a call of a sibling."""
    bodies = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
                    text = "\n".join(textwrap.dedent(ast.get_source_segment(source, s, padded=True)) for s in body)
                    if len(body) > 1 or len(text) > 40:
                        bodies.append(text)
    return bodies


def function_bodies(source: str) -> list[str]:
    """The bodies (docstrings left out) of every function and method in ``source`` of more than one
    statement, as :func:`method_bodies` gives those of one class."""
    classes = [node.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef)]
    tree = ast.parse(source)
    module = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    bodies = [text for name in classes for text in method_bodies(source, name)]
    for function in module:
        body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) > 1:
            bodies.append("\n".join(textwrap.dedent(ast.get_source_segment(source, s, padded=True)) for s in body))
    return bodies


EDITIONS: dict[str, Path] = {}


def edition(project: str, tmp_path_factory) -> Path:
    """The student edition of ``project``, exported once per test session."""
    if project not in EDITIONS:
        out = tmp_path_factory.mktemp("edition") / f"minidb-{project}"
        with impl.using(None):
            assert main(["course", "export", "--project", project, "--out", str(out)]) == 0
        EDITIONS[project] = out
    return EDITIONS[project]


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_the_student_edition_holds_no_line_of_the_component_and_no_instructor_file(project, tmp_path_factory):
    out = edition(project.name, tmp_path_factory)
    data = spec(project)
    for component, path in zip(data["components"], data["reference_files"], strict=True):
        class_name = component.rpartition(".")[2]
        bodies = method_bodies((ROOT / path).read_text(), class_name)
        assert len(bodies) > 10
        exported = {path: path.read_text() for path in out.rglob("*.py")}
        for body in bodies:
            found = [str(path.relative_to(out)) for path, text in exported.items() if body in text]
            assert not found, f"a method body of the reference {class_name} is in {found}:\n{body}"
        assert (out / path).read_text().endswith(
            f'impl.hot_spot({class_name}, twin=False, project="{project.name}")\n')
    for path in data["fast_files"]:
        assert not (out / path).exists()
    for path in data.get("solution_files", []):  # left out, and not a function of them left anywhere
        assert not (out / path).exists()
        for body in function_bodies((ROOT / path).read_text()):
            found = [str(p.relative_to(out)) for p in out.rglob("*.py") if body in p.read_text()]
            assert not found, f"a function of {path} is in {found}:\n{body}"
    assert not list(out.glob("exercises/projects/*/mutants")) and not list(out.glob("exercises/projects/*/tests/hidden"))
    assert (out / "exercises" / "04a_clock_replacement" / "reference.py").is_file()  # exercises keep theirs
    assert (out / "STUDENT.md").is_file() and (out / "exercises/projects/lock_manager/tests/public").is_dir()
    assert not missing_imports(out), missing_imports(out)[:3]  # make test collects every module it keeps


def missing_imports(out: Path) -> list[str]:
    """The top-level imports of minidb modules, in the edition's tests/, of modules the edition has not."""
    def present(module: str) -> bool:
        path = out.joinpath(*module.split("."))
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    missing = []
    for test in sorted((out / "tests").rglob("*.py")):
        for node in ast.parse(test.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else [])
            missing += [f"{test.relative_to(out)}: {name}" for name in names
                        if name.split(".")[0] == "minidb" and not present(name)]
    return missing


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_the_student_edition_imports_and_its_project_tests_fail_as_not_implemented(project, tmp_path_factory):
    out = edition(project.name, tmp_path_factory)
    modules = ", ".join(["minidb"] + ["minidb." + c.rpartition(".")[0] for c in spec(project)["components"]])
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    imported = subprocess.run([sys.executable, "-c", f"import {modules}; print(minidb.__file__)"],
                              cwd=out, env=env, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0 and imported.stdout.strip() == str(out / "minidb" / "__init__.py"), imported.stderr
    first = sorted(project.glob("tests/public/test_m1_*.py"))[0].relative_to(ROOT)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the projects' tests need no plugin: a faster start
    tests = subprocess.run([sys.executable, "-m", "pytest", str(first), "-q", "-p", "no:cacheprovider"],
                           cwd=out, env=env, capture_output=True, text=True, timeout=600)
    assert tests.returncode == 1 and "passed" not in tests.stdout.splitlines()[-1], tests.stdout[-2000:]
    errors = [line for line in tests.stdout.splitlines() if line.startswith("E   ") and "Error" in line]
    assert errors and all("NotImplementedError" in line for line in errors), errors[:5]


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_the_student_edition_collects_every_test_without_an_error(project, tmp_path_factory):
    """``make test`` in the edition gets past collection: no test module runs the engine (and so the
    skeleton) when it is imported. Collection only, without assertion rewriting or plugins: a few seconds."""
    out = edition(project.name, tmp_path_factory)
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                "--assert=plain", "tests", "exercises"],
                               cwd=out, env=env, capture_output=True, text=True, timeout=600)
    errors = [line for line in collected.stdout.splitlines() if line.startswith("ERROR ")]
    assert collected.returncode == 0 and not errors, "\n".join(errors or collected.stdout.splitlines()[-5:])
    assert re.search(r"^\d{4,} tests collected", collected.stdout.splitlines()[-1]), collected.stdout[-500:]


def test_the_export_refuses_a_directory_in_use_and_an_unknown_project(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    with impl.using(None):
        assert main(["course", "export", "--project", "buffer_pool", "--out", str(tmp_path)]) == 2
        assert "not empty" in capsys.readouterr().err
        assert main(["course", "export", "--project", "nothing", "--out", str(tmp_path / "new")]) == 2
        assert "no project 'nothing'" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine" and not (tmp_path / "new").exists()


def test_the_lock_manager_edition_leaves_out_the_waiting_threads_and_still_imports(tmp_path):
    out = tmp_path / "minidb-lock-manager"
    with impl.using(None):
        assert main(["course", "export", "--project", "lock_manager", "--out", str(out)]) == 0
    assert not (out / "minidb/pagestore/lock/waiting.py").exists()  # Dreadlocks waiting is the student's to write
    env = {k: v for k, v in os.environ.items() if k not in INHERITED}
    imported = subprocess.run([sys.executable, "-c", "import minidb.pagestore.sm, minidb.pagestore.lock"],
                              cwd=out, env=env, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr


def test_a_student_file_importing_the_waiting_threads_is_refused(tmp_path, capsys, monkeypatch):
    import shutil

    copy = tmp_path / "exercises"
    shutil.copytree(ROOT / "exercises" / "projects" / "lock_manager", copy / "projects" / "lock_manager")
    student = copy / "projects" / "lock_manager" / "student.py"
    student.write_text(student.read_text() + "\nfrom minidb.pagestore.lock.waiting import WaitingThreads\n")
    monkeypatch.setenv(impl.DIR_VAR, str(copy))
    assert main(["grade", "lock_manager"]) == 2
    assert "waiting" in capsys.readouterr().err
