"""Suite-wide pytest set-up.

``--minidb-full-suite`` (used by ``make test``) makes sure the run really
covers everything: every notebook in notebooks/, the unit tests in tests/,
every exercise in exercises/ and every course project in exercises/projects/
must contribute collected tests, so a missing plugin flag or a misnamed file
cannot turn the run green by accident.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parent


def pytest_addoption(parser):
    parser.addoption("--minidb-full-suite", action="store_true",
                     help="fail unless tests, every notebook and every exercise were collected")
    parser.addoption("--exercise-impl", default=None,
                     help="run exercises/ against minidb's code (reference), the student stubs (student) "
                          "or a named wrong solution (mutant:NAME) "
                          "(default: $MINIDB_IMPL if set, else reference)")


def expected_areas() -> list[Path]:
    areas = [ROOT / "tests"]
    areas += sorted((ROOT / "notebooks").glob("*.ipynb"))
    areas += sorted(p for p in (ROOT / "exercises").iterdir() if p.is_dir() and p.name[:2].isdigit())
    areas += sorted(p.parent for p in (ROOT / "exercises" / "projects").glob("*/project.json"))
    return areas


def pytest_collection_finish(session):
    if not session.config.getoption("--minidb-full-suite"):
        return
    collected = [Path(str(item.path)).resolve() for item in session.items]
    missing = []
    for area in expected_areas():
        area = area.resolve()
        if not any(path == area or area in path.parents for path in collected):
            missing.append(os.path.relpath(area, ROOT))
    if missing:
        pytest.exit(f"the full suite collected nothing from: {', '.join(missing)}", returncode=4)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    # How make test splits the suite into work units for its workers, and which go first (imported here:
    # an exercise's grader runs pytest on its own, without xdist and without tests/).
    from tests.work_units import LongestFirst, work_unit

    class SparkTestsTogether(LoadFileScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.workqueue = LongestFirst()

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return SparkTestsTogether(config, log)
