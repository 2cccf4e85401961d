"""Suite-wide pytest set-up.

``--minidb-full-suite`` (used by ``make test``) makes sure the run really
covers everything: every notebook in notebooks/, the unit tests in tests/,
every exercise in exercises/ and every course project in exercises/projects/
must contribute collected tests, so a missing plugin flag or a misnamed file
cannot turn the run green by accident.
"""

from __future__ import annotations

import os
from collections import OrderedDict
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


# Tests that share one SparkSession (tests/spark/) must run in one process, so
# that the suite starts one JVM for them however many xdist workers there are:
# with --dist loadfile they form one work unit instead of one per file.
SPARK_TESTS = "tests/spark/"
# Files whose tests are each a work unit of their own: long tests that share nothing costly, so the
# two workers can split them (a whole file of crash-sweep chunks would otherwise run in one worker).
ONE_UNIT_PER_TEST = ("tests/pagestore/test_xct_crash_sweep.py", "tests/logstore/test_crash_sweep.py",
                     "tests/replication/test_crash_sweep.py", "exercises/test_stubs_fail.py")
# The work units that take longest (measured with --durations on 2 cores), longest first: handed out
# before all others, so the workers end together instead of one running a long unit alone at the end.
LONGEST_FIRST = (SPARK_TESTS, "tests/pagestore/test_xct_crash_sweep.py", "tests/test_tour.py",
                 "tests/logstore/test_tree_model.py", "tests/test_autograder.py", "tests/test_projects.py",
                 "tests/logstore/test_crash_sweep.py", "exercises/test_stubs_fail.py",
                 "tests/replication/test_crash_sweep.py", "tests/test_impl.py",
                 "tests/browser/test_notebooks_in_browser.py")


def work_unit(nodeid: str) -> str:
    """The work unit a test belongs to: its file, all of tests/spark/ together, or the test itself."""
    if nodeid.startswith(SPARK_TESTS):
        return SPARK_TESTS
    path = nodeid.split("::", 1)[0]
    return nodeid if path in ONE_UNIT_PER_TEST else path


def unit_rank(unit: str) -> int:
    """Where a work unit goes in the queue: the units of LONGEST_FIRST in its order, then all others."""
    return next((i for i, first in enumerate(LONGEST_FIRST) if unit.startswith(first)), len(LONGEST_FIRST))


class LongestFirst(OrderedDict):
    """A queue of work units (unit -> its tests) that keeps the units of ``LONGEST_FIRST`` in front, in
    that order, the others after them as they came (xdist fills the queue once, then hands units out)."""

    def __setitem__(self, unit, tests):
        super().__setitem__(unit, tests)
        if unit_rank(unit) < len(LONGEST_FIRST):
            ranked = sorted((u for u in self if unit_rank(u) < len(LONGEST_FIRST)), key=unit_rank)
            for first in reversed(ranked):
                self.move_to_end(first, last=False)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SparkTestsTogether(LoadFileScheduling):
        def __init__(self, config, log=None):
            super().__init__(config, log)
            self.workqueue = LongestFirst()

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return SparkTestsTogether(config, log)
