"""How ``make test`` splits the suite between its xdist workers."""

from tests.work_units import LONGEST_FIRST, SPARK_TESTS, LongestFirst, work_unit


def test_spark_tests_form_one_unit_sweep_chunks_one_each_and_other_files_one_each():
    assert work_unit("tests/spark/test_load.py::test_x") == work_unit("tests/spark/test_cluster.py::t") == SPARK_TESTS
    chunk = "tests/pagestore/test_xct_crash_sweep.py::test_pagestore_crash_sweep_has_no_violations[2]"
    assert work_unit(chunk) == chunk
    assert work_unit("tests/test_x.py::test_a") == work_unit("tests/test_x.py::test_b") == "tests/test_x.py"


def test_the_longest_units_are_handed_out_first_in_their_order_and_the_rest_as_they_came():
    queue = LongestFirst()
    units = ["tests/a.py", "tests/test_autograder.py", "tests/b.py", f"{LONGEST_FIRST[1]}::test[1]", SPARK_TESTS,
             f"{LONGEST_FIRST[1]}::test[0]", "tests/c.py"]
    for unit in units:
        queue[unit] = {}
    assert list(queue) == [SPARK_TESTS, f"{LONGEST_FIRST[1]}::test[1]", f"{LONGEST_FIRST[1]}::test[0]",
                           "tests/test_autograder.py", "tests/a.py", "tests/b.py", "tests/c.py"]
    assert queue.popitem(last=False)[0] == SPARK_TESTS  # what xdist takes next
