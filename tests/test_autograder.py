"""``make autograder`` (scripts/autograder.py): a Gradescope zip per exercise and per project, tried end to end.

One exercise's zip is built into a temporary directory and unpacked as Gradescope does, in a made-up
AUTOGRADER_ROOT's source/; its run_autograder grades a submission there with this checkout's Python
(``MINIDB_PYTHON``) instead of the venv setup.sh would build (setup.sh is only checked by ``bash -n``), and
with the engine the zip carries. The packages setup.sh does not install are made unimportable in every
Python the run starts, so grading is shown to need nothing else.

A project's zip (vlsn_index, the quickest to grade) the same way: minidb's own class as the submission gets
full marks, the skeleton zero. Its judge runs one seed per command here: what is tried is the zip, its
scripts and its grading; the judge's seeds are test_projects.py's (each mutant fails them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.grade_helpers import RIGHT_04A

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "autograder.py"
STUB = ROOT / "exercises" / "04a_clock_replacement" / "student.py"
# Top-level modules of the extras setup.sh leaves out (Spark, JupyterLab, the slides, the browser test).
NOT_INSTALLED = ("pyspark", "pandas", "pyarrow", "ipywidgets", "graphviz", "IPython", "ipykernel", "jupyterlab",
                 "nbformat", "nbclient", "nbval", "nbconvert", "sphinx_revealjs", "playwright")
SITECUSTOMIZE = f"""
import sys


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {NOT_INSTALLED!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (setup.sh does not install it)")


sys.meta_path.insert(0, NotInstalled())
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, str(SCRIPT), "04a", "--out", str(out)], check=True, capture_output=True)
    return out / "04a_clock_replacement.zip"


def autograde(built: Path, tmp_path: Path, submission: str | None,
              prepare: Callable[[Path], None] | None = None) -> tuple[dict, str]:
    """Unpack the zip in ROOT/source (then ``prepare(source)``), submit ``submission`` as student.py, run
    run_autograder: results.json and what it printed."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(built) as archive:
        archive.extractall(root / "source")
    if prepare is not None:
        prepare(root / "source")
    (root / "submission").mkdir()
    if submission is not None:
        (root / "submission" / "student.py").write_text(submission)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "MINIDB_"))}
    env |= {"AUTOGRADER_ROOT": str(root), "MINIDB_PYTHON": sys.executable, "PYTHONPATH": str(tmp_path / "site")}
    result = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((root / "results" / "results.json").read_text()), result.stdout + result.stderr


def test_the_zip_holds_the_scripts_the_engine_and_the_exercise_and_is_rebuilt_byte_for_byte(built, tmp_path):
    with zipfile.ZipFile(built) as archive:
        infos = {info.filename: info for info in archive.infolist()}
    for name in ("setup.sh", "run_autograder"):
        assert infos[name].external_attr >> 16 & 0o111, f"{name} is not executable"
    assert {"minidb/__main__.py", "minidb/cli/grade.py", "pyproject.toml", "constraints.txt", "exercises/conftest.py",
            "exercises/04a_clock_replacement/student.py", "exercises/04a_clock_replacement/reference.py",
            "exercises/04a_clock_replacement/test_04a_clock_replacement.py"} <= set(infos)
    assert not any("__pycache__" in name or name.startswith("exercises/01a") for name in infos)
    subprocess.run([sys.executable, str(SCRIPT), "04a", "--out", str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / built.name).read_bytes() == built.read_bytes()


def test_setup_sh_and_run_autograder_are_bash_and_install_only_pinned_packages(built, tmp_path):
    with zipfile.ZipFile(built) as archive:
        archive.extractall(tmp_path)
    for name in ("setup.sh", "run_autograder"):
        result = subprocess.run(["bash", "-n", str(tmp_path / name)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    install = re.search(r"-c constraints.txt (.+)$", (tmp_path / "setup.sh").read_text(), re.M)
    pinned = {line.split("==")[0].lower() for line in (ROOT / "constraints.txt").read_text().splitlines() if "==" in line}
    assert install and set(install[1].split()) == {"tqdm", "matplotlib", "pytest", "pytest-xdist", "hypothesis"}
    assert set(install[1].split()) <= pinned
    assert "@" not in (tmp_path / "run_autograder").read_text()  # every placeholder filled


def test_a_right_submission_gets_full_marks(built, tmp_path):
    results, printed = autograde(built, tmp_path, RIGHT_04A)
    assert results["score"] == 17 and len(results["tests"]) == 17, printed
    assert {t["status"] for t in results["tests"]} == {"passed"}
    assert "grade 04a_clock_replacement: pass" in printed


def test_the_untouched_stub_gets_zero(built, tmp_path):
    results, printed = autograde(built, tmp_path, STUB.read_text())
    assert results["score"] == 0 and len(results["tests"]) == 17, printed
    assert {t["status"] for t in results["tests"]} == {"failed"}
    assert results["tests"][0]["output"] == "NotImplementedError: choose_victim: your code here"


def test_a_submission_without_student_py_gets_zero_and_is_told_why(built, tmp_path):
    results, _ = autograde(built, tmp_path, None)
    assert results == {"score": 0, "tests": [], "output": "no student.py in the submission: upload your "
                                                          "exercises/04a_clock_replacement/student.py"}


PROJECT = "vlsn_index"
PROJECT_DIR = ROOT / "exercises" / "projects" / PROJECT


@pytest.fixture(scope="module")
def project_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, str(SCRIPT), PROJECT, "--out", str(out)], check=True, capture_output=True)
    return out / f"{PROJECT}.zip"


def reference_submission() -> str:
    """minidb's own component as a student.py: the reference module without its hot spot declaration (and
    the import of minidb.impl it needs): the class alone, as a student's file defines it."""
    spec = json.loads((PROJECT_DIR / "project.json").read_text())
    (path,) = spec["reference_files"]
    lines = (ROOT / path).read_text().splitlines(keepends=True)
    kept = [line for line in lines if line != "from minidb import impl\n" and "impl.hot_spot(" not in line]
    assert len(kept) == len(lines) - 2
    return "".join(kept)


def one_seed_per_judge_command(source: Path) -> None:
    path = source / "exercises" / "projects" / PROJECT / "project.json"
    spec = json.loads(path.read_text())
    spec["judge"] = [args[:args.index("--seeds") + 1] + ["1"] + args[args.index("--seeds") + 2:]
                     if "--seeds" in args else args for args in spec["judge"]]
    path.write_text(json.dumps(spec))


def test_a_project_zip_carries_the_engines_tests_its_tests_import(project_zip):
    with zipfile.ZipFile(project_zip) as archive:
        names = set(archive.namelist())
    assert {f"exercises/projects/{PROJECT}/tests/hidden/test_hidden_{PROJECT}.py", "exercises/projects/conftest.py",
            "tests/__init__.py", "tests/replication/__init__.py", "tests/replication/test_tracker.py",
            "tests/replication/helpers.py", "tests/golden/vlsn_index_dump.txt"} <= names
    assert "tests/spark/__init__.py" not in names and not any(n.startswith("tests/viz/") for n in names)


@pytest.mark.parametrize("submitted", ["reference", "skeleton"])
def test_a_project_zip_gives_the_reference_full_marks_and_the_skeleton_zero(project_zip, tmp_path, submitted):
    submission = reference_submission() if submitted == "reference" else (PROJECT_DIR / "skeleton.py").read_text()
    results, printed = autograde(project_zip, tmp_path, submission, one_seed_per_judge_command)
    judged = [t for t in results["tests"] if t["name"].startswith("minidb crashtest")]
    assert len(results["tests"]) > 30 and len(judged) == 2, printed
    if submitted == "reference":
        assert results["score"] == 100 and {t["status"] for t in results["tests"]} == {"passed"}, printed
        assert f"grade {PROJECT}: pass" in printed
    else:
        assert results["score"] == 0 and {t["status"] for t in results["tests"]} == {"failed"}, printed
