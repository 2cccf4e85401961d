"""How ``make test`` splits the suite between its xdist workers (``--dist loadfile``, with the scheduler of
the root ``conftest.py``): which tests form one work unit, and which units are handed out first."""

from __future__ import annotations

from collections import OrderedDict

# Tests that share one SparkSession (tests/spark/, the tour's test among them) must run in one
# process, so that the suite starts one JVM for them however many xdist workers there are:
# with --dist loadfile they form one work unit instead of one per file.
SPARK_TESTS = "tests/spark/"
# Files whose tests are each a work unit of their own: long tests that share nothing costly, so the
# workers can split them (a whole file of crash-sweep chunks would otherwise run in one worker).
ONE_UNIT_PER_TEST = ("tests/pagestore/test_xct_crash_sweep.py", "tests/logstore/test_crash_sweep.py",
                     "tests/replication/test_crash_sweep.py", "exercises/test_stubs_fail.py")
# The work units that take longest (measured with --durations on 2 cores), longest first: handed out
# before all others, so the workers end together instead of one running a long unit alone at the end.
LONGEST_FIRST = (SPARK_TESTS, "tests/pagestore/test_xct_crash_sweep.py", "tests/logstore/test_tree_model.py",
                 "tests/test_autograder.py", "tests/test_projects.py", "tests/logstore/test_crash_sweep.py",
                 "exercises/test_stubs_fail.py", "tests/replication/test_crash_sweep.py", "tests/test_impl.py",
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
