"""Notebook 17's runs, pictures and control: the lock manager's reference and twin, profiled and compared."""

import ast
import json
from pathlib import Path

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.io import SimDisk
from minidb.viz.fast import (
    DIFFERENT,
    IMPL_COLOURS,
    SAME,
    SCRIPT,
    describe,
    differences,
    disk_state,
    draw_agreement,
    draw_call_counts,
    excerpt,
    fast_step,
    first_difference,
    function_label,
    parsed,
    run,
    time_both,
    top_functions,
)
from minidb.viz.fast_widgets import MOST_TIMES, fast_explorer
from minidb.viz.gallery import all_figures
from minidb.viz.notebook_figures import forgetful_twin
from minidb.viz.script import ScriptError
from minidb.viz.style import SMALL, WIDTH

from tests.viz.helpers import notebook_scripts

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "17_making_it_fast.ipynb"


def faces(fig: Figure) -> set[str]:
    return {to_hex(p.get_facecolor()) for ax in fig.axes for p in ax.patches if isinstance(p, Rectangle)}


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]


# -- the runs --------------------------------------------------------------------------------------------

def test_the_script_runs_and_the_twin_leaves_what_the_reference_leaves():
    reference, twin = run(SCRIPT, "reference"), run(SCRIPT, "fast")
    assert len(reference.steps) == len(SCRIPT) and twin.steps == reference.steps
    assert differences(reference, twin) == [None] * len(SCRIPT)
    assert first_difference(reference, twin) == "fast left what reference left after each of the 15 steps"
    answers = reference.answers
    assert answers[10].startswith("BadLockRequest: T1's lock on r(1.3.48.6) has long duration")
    assert answers[12].startswith("LockTimeout: T2 SH on r(1.3.48.6)")
    assert answers.count("ok") == 13


def test_the_broken_twin_is_caught_at_the_grant_and_answers_wrongly_later():
    reference, broken = run(SCRIPT, "reference"), run(SCRIPT, forgetful_twin(), name="broken twin")
    found = differences(reference, broken)
    assert found[:9] == [None] * 9 and found[9] == "the lock table"
    assert first_difference(reference, broken).splitlines() == [
        "step 10 ('lock', 'T1', 'r(1.3.48.6)', 'EX', 'long'): the lock table differs",
        "  broken twin: T1 holds r(1.3.48.6) EX short",
        "  reference: T1 holds r(1.3.48.6) EX long"]
    assert broken.answers[10] == "ok" and broken.answers[12] == "ok"  # unlocked early, then read by T2


def test_the_notebook_breaks_the_twin_as_notebook_figures_does():
    """The picture 17_making_it_fast-2 is drawn with notebook_figures' copy of the notebook's class."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    defined = [node for c in cells if c["cell_type"] == "code" and "class ForgetfulTwin" in "".join(c["source"])
               for node in ast.parse("".join(c["source"])).body if isinstance(node, ast.ClassDef)]
    source = Path(forgetful_twin.__code__.co_filename).read_text(encoding="utf-8")
    copy = next(node for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.ClassDef) and node.name == "ForgetfulTwin")
    assert len(defined) == 1
    assert ast.dump(defined[0].body[1]) == ast.dump(copy.body[1]) and len(defined[0].body) == len(copy.body)


def test_call_counts_are_the_same_on_every_run_whatever_ran_before():
    first = run(SCRIPT, "reference", profile=True)
    again = run(SCRIPT, "reference", profile=True)
    assert first.counts == again.counts and first.other_calls == again.other_calls
    assert first.steps == []  # a profiled run keeps counts, not states


def test_the_twin_makes_fewer_engine_calls_and_none_of_the_mode_functions():
    reference, twin = run(SCRIPT, "reference", profile=True), run(SCRIPT, "fast", profile=True)
    assert twin.engine_calls < reference.engine_calls
    for name in ("modes.covers", "modes.implicitly_covers", "modes.parent_mode", "manager._missing_ancestors"):
        assert reference.counts[name] > 0 and twin.counts[name] == 0, name
    assert twin.counts["fast manager.lock"] == reference.counts["manager.lock"] == 8
    assert not any(label.startswith(("fast._", "viz", "script.")) for label in reference.counts)


def test_function_labels_name_the_engine_and_leave_the_rest_out():
    engine = str(ROOT / "minidb")
    assert function_label(f"{engine}/pagestore/lock/manager.py", "_acquire") == "manager._acquire"
    assert function_label(f"{engine}/fast/pagestore/lock/manager.py", "lock") == "fast manager.lock"
    assert function_label(f"{engine}/viz/fast.py", "_call") is None
    assert function_label("~", "<method 'get' of 'dict' objects>") is None
    assert function_label("/usr/lib/python3.11/enum.py", "__hash__") is None


@pytest.mark.parametrize("script, message", [
    ([("lock", "T1", "r(1.3.48.1)", "EX")], "step 1 .*lock takes txn, lock_id, mode, duration"),
    ([("commit", "T1"), ("lock", "X1", "r(1.3.48.1)", "EX", "long")], "step 2 .*named 'T1'"),
    ([("unlock", "T1", "q(1)")], "step 1 .*bad lock id"),
    ([("lock", "T1", "r(1.3.48.1)", "NL", "long")], "step 1 .*the mode is one of"),
    ([("lock", "T1", "r(1.3.48.1)", "EX", "forever")], "step 1 .*instant, short or long"),
])
def test_a_bad_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        parsed(script)


def test_describe_writes_a_call_as_the_script_did():
    assert [describe(call) for call in parsed(SCRIPT[:3])] == [
        repr(tuple(SCRIPT[0])), repr(tuple(SCRIPT[1])), repr(tuple(SCRIPT[2]))]


def test_excerpt_reads_from_a_line_to_a_line():
    text = "def f():\n    a = 1\n    b = 2\n    return a + b\n"
    assert excerpt(text, "a = 1", "b = 2") == "a = 1\nb = 2"
    assert excerpt(text, "b = 2") == "b = 2\nreturn a + b"
    assert excerpt(excerpt, "text = source").startswith("text = source if isinstance")
    with pytest.raises(ValueError, match="no line holds 'c = 3'"):
        excerpt(text, "c = 3")
    with pytest.raises(ValueError, match="no line after 'b = 2' holds 'a = 1'"):
        excerpt(text, "b = 2", "a = 1")


def test_time_both_reports_seconds_and_their_ratio():
    seconds = time_both(SCRIPT, times=2, rounds=1)
    assert set(seconds) == {"reference", "fast", "ratio"}
    assert seconds["ratio"] == seconds["reference"] / seconds["fast"]


def test_disk_state_holds_every_file_and_event():
    disk = SimDisk("t")
    f = disk.open("a", create=True)
    f.write(0, b"abc")
    f.fsync()
    f.write(3, b"de")
    state = disk_state(disk)
    assert state["files"] == {"a": (b"abcde", b"abc")}
    assert [e[0] for e in state["events"]][-2:] == ["fsync", "write"]


# -- the pictures ----------------------------------------------------------------------------------------

def test_the_call_counts_picture():
    reference, twin = run(SCRIPT, "reference", profile=True), run(SCRIPT, "fast", profile=True)
    fig = draw_call_counts([reference, twin], top=12)
    assert fig.get_size_inches()[0] == WIDTH
    labels = top_functions([reference, twin], 12)
    assert len(labels) == 12 and labels[0] == "lockid.parent"
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == labels
    assert faces(fig) == {IMPL_COLOURS["reference"], IMPL_COLOURS["fast"]}
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["reference", "fast"]
    assert str(reference.engine_calls) in fig._suptitle.get_text()
    assert all(t.get_fontsize() >= SMALL for t in ax.texts)
    assert texts(fig).count(str(reference.counts["lockid.parent"])) >= 1
    fewer = draw_call_counts([reference], top=5)
    assert len(fewer.axes[0].get_yticklabels()) == 5 and fewer.get_size_inches()[1] < fig.get_size_inches()[1]


def test_the_agreement_picture():
    reference = run(SCRIPT, "reference")
    fig = draw_agreement(reference, [run(SCRIPT, "fast"), run(SCRIPT, forgetful_twin(), name="broken twin")])
    assert fig.get_size_inches()[0] == WIDTH
    assert faces(fig) == {SAME, DIFFERENT} and SAME != DIFFERENT
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["fast", "broken twin"]
    assert "every step equal" in texts(fig) and "step 10: the lock table differs" in texts(fig)
    assert len(fig.axes[0].patches) == 2 * len(SCRIPT)


def test_the_implementation_colours_are_distinct():
    assert len(set(IMPL_COLOURS.values())) == len(IMPL_COLOURS)


def test_the_notebook_pictures_are_named():
    pictures = all_figures()
    assert isinstance(pictures["17_making_it_fast-1"](), Figure)
    assert isinstance(pictures["17_making_it_fast-2"](), Figure)


# -- the control -----------------------------------------------------------------------------------------

def test_fast_step_is_the_pure_callback():
    view = fast_step("fast", 2)
    assert view.runs["fast"].engine_calls < view.runs["reference"].engine_calls
    assert len(view.runs["fast"].calls) == 2 * len(SCRIPT)
    assert view.summary().splitlines()[0] == f"fast: {2 * len(SCRIPT)} calls of the lock manager (2 x the script)"
    assert "the reference makes" in view.summary()
    alone = fast_step("reference", 1)
    assert faces(alone.figure) == {IMPL_COLOURS["reference"]} and "the reference makes" not in alone.summary()
    with pytest.raises(ValueError, match="reference or fast"):
        fast_step("student")
    with pytest.raises(ValueError, match="1 or more times"):
        fast_step("fast", 0)


def test_the_explorer_drives_the_pure_callback_over_an_edited_script():
    explorer = fast_explorer(SCRIPT[:3], "reference", 1)
    assert explorer.result.which == "reference" and len(explorer.result.runs["reference"].calls) == 3
    explorer.controls["which"].value = "fast"
    explorer.controls["times"].value = 3
    assert explorer.result.which == "fast" and explorer.result.times == 3
    assert explorer.controls["times"].max == MOST_TIMES
    with pytest.raises(ScriptError, match="step 1"):
        fast_explorer([("lock", "T0", "r(1.3.48.2)", "EX", "long")])


def test_the_notebook_shows_the_modules_script():
    assert notebook_scripts("17_making_it_fast")["script"] == SCRIPT
