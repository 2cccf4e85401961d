"""Pytest set-up for the course projects (see docs/projects.md and each project's README.md).

A project's tests (``exercises/projects/NAME/tests/public/`` and ``tests/hidden/``)
never import the component they test: they build it, and the engine around it,
through the engine's own hot spot (``BUFFER_POOL.call(...)``, a whole storage
manager), and this fixture decides, for every test of a project, which class
the hot spot constructs:

``--exercise-impl=reference``   (the default) minidb's own class: what ``make test`` checks;
``--exercise-impl=student``     the project's ``student.py`` (``MINIDB_IMPL=student:NAME``);
``--exercise-impl=mutant:WRONG`` the project's ``mutants/WRONG.py``, as if it were ``student.py``.

Without the option, ``$MINIDB_IMPL`` decides (``student`` or ``student:NAME``
picks the student's class; anything else the reference).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from minidb import impl

OPTION = "--exercise-impl"
MUTANT = "mutant:"


def project_of(path: Path) -> Path | None:
    """The project directory (the one holding ``project.json``) a test file lies in, or None."""
    for parent in path.parents:
        if (parent / "project.json").is_file():
            return parent
        if parent.name == impl.PROJECTS:
            return None
    return None


def chosen(config: pytest.Config) -> str:
    try:
        value = config.getoption(OPTION)
    except ValueError:
        value = None
    if value is None:
        value = os.environ.get(impl.ENV_VAR, "").strip().partition(":")[0] or "reference"
    return value if value == "student" or value.startswith(MUTANT) else "reference"


@pytest.fixture(autouse=True)
def component_under_test(request, tmp_path_factory):
    """Run the test with the engine building the chosen class of the test's project (see above)."""
    project = project_of(Path(str(request.path)))
    which = chosen(request.config)
    if project is None or which == "reference":
        with impl.using(impl.ENGINE):
            yield
        return
    root = project.parent.parent
    if which.startswith(MUTANT):
        wrong = project / "mutants" / f"{which[len(MUTANT):]}.py"
        if not wrong.is_file():
            raise pytest.UsageError(f"{OPTION}={which}: no {wrong}")
        root = tmp_path_factory.mktemp("mutant")
        (root / impl.PROJECTS / project.name).mkdir(parents=True)
        shutil.copy(wrong, root / impl.PROJECTS / project.name / "student.py")
    with impl.using(impl.STUDENT, root, only=[project.name]):
        yield
