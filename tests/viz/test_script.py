"""Workloads as data (minidb.viz.script): checking a script names the step and the problem."""

import pytest

from minidb.viz.script import Op, ScriptError, checked, op_table, operations_table

OPS = op_table(Op("fix", ("page",), "fix a page and unfix it"), Op("clean", (), "run the page cleaner"))


def test_script_checked_keeps_a_good_script_as_tuples():
    assert checked([["fix", "1.1.4"], ("clean",)], OPS) == [("fix", "1.1.4"), ("clean",)]


@pytest.mark.parametrize("script, message", [
    ([("fix", "1.1.4"), ("fx", "1.1.5")], r"step 2 \('fx', '1.1.5'\): unknown operation 'fx'; the operations are fix, clean"),
    ([("fix",)], r"step 1 \('fix',\): fix takes page"),
    ([("clean", 3)], r"step 1 \('clean', 3\): clean takes no arguments"),
    (["fix"], r"step 1 'fix': an operation is a tuple"),
    ([()], r"step 1 \(\): an operation is a tuple"),
])
def test_script_checked_names_the_step_and_the_problem(script, message):
    with pytest.raises(ScriptError, match=message):
        checked(script, OPS)


def test_script_operations_table_lists_every_operation():
    assert operations_table(OPS).splitlines() == ["('fix', page)  fix a page and unfix it",
                                                  "('clean',)     run the page cleaner"]
