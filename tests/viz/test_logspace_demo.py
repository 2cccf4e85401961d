"""The log-space demo of notebook 16: its default script, edited scripts, bad scripts, the pictures, the control."""

import ast
import json
import re

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.viz.logspace_demo import (
    CRASHES,
    OPS,
    PARTITION,
    SCRIPT,
    crash_view,
    log_space_explorer,
    logspace_step,
    record_picture,
    run_script,
)
from minidb.viz.script import ScriptError
from minidb.viz.style import LOG_SPACE_COLOURS, TRANSACTION_COLOURS

from tests.viz.helpers import ROOT
from tests.viz.test_readability import problems


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")) if t.get_text()]


def step_of(script, op) -> int:
    return script.index(op) + 1


def edited(old, new, script=SCRIPT) -> list[tuple]:
    return [new if op == old else op for op in script]


def value(node: ast.AST):
    """A literal, allowing a string repeated (``"b" * 448``) as the notebook writes long bodies."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return value(node.left) * value(node.right)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [value(item) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    return ast.literal_eval(node)


def test_the_notebook_shows_the_default_script():
    cells = json.loads((ROOT / "notebooks" / "16_log_space.ipynb").read_text(encoding="utf-8"))["cells"]
    [cell] = [c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).startswith("script = [")]
    assign = ast.parse("".join(cell["source"])).body[0]
    assert value(assign.value) == SCRIPT


# -- the default script: what the notebook shows ------------------------------------------------------------------
def test_the_fill_is_refused_naming_the_oldest_holder_and_the_abort_succeeds_on_the_full_log():
    demo = run_script(upto=11)
    [(step, refusal)] = demo.refused
    assert step == 11 and "out of log space: T3 cannot log rec_insert" in refusal
    assert "the oldest transaction holding the log is T2" in refusal
    assert "T3 created 55 records" in demo.outcomes[-1]
    pic = demo.picture()
    assert pic.free < 160 and {t.name: t.reserved for t in pic.transactions}["T2"] == 915
    aborted = run_script(upto=12)
    assert aborted.workload.ended["T3"] == "aborted"
    assert "the rollback logged 4021 bytes of the 8263 it held reserved" in aborted.outcomes[-1]
    assert aborted.sm.log_space.total == aborted.sm.log_space.held(aborted.workload.xcts["T2"].txn_id) == 915
    assert aborted.records() == {"alpha": "Alpha", "beta": "beta", "gamma": "gamma"}  # T2's changes, not T3's


def test_reservations_follow_the_fudge_factors_and_return_to_zero():
    pic = logspace_step(8, draw=False).picture
    [t2] = pic.transactions
    assert (t2.name, t2.logged, t2.reserved) == ("T2", 117, 915) and t2.reserved > t2.logged
    demo = run_script()
    assert demo.sm.log_space.total == 0 and not demo.sm.xcts.active()


def test_scavenging_waits_for_the_old_transaction_then_removes_exactly_the_files_below_the_bound():
    demo = run_script()
    assert demo.held == ["step 13: T2 (first LSN 0x1/0x530) alone keeps 2 log files from being removed"]
    assert demo.removed == [("00000001.jdb", 15), ("00000002.jdb", 15), ("00000003.jdb", 29)]
    held = logspace_step(13, draw=False).picture
    assert held.head == 1 and [n for n, _ in held.files] == [1, 2, 3]
    gone = logspace_step(15, draw=False).picture
    assert gone.head == 3 and [n for n, _ in gone.files] == [3] and gone.master.file == 3
    assert gone.free == 13099 and all(used <= PARTITION for _, used in gone.files)


def test_the_prepared_transaction_comes_back_in_doubt_and_is_resolved():
    restarted = run_script(upto=20)
    assert restarted.in_doubt == ("T4",)
    [doubt] = restarted.sm.in_doubt()
    assert doubt.gtid == b"g1" and doubt.tid == restarted.workload.xcts["T4"].txn_id
    assert restarted.records()["beta"] == "Beta"
    assert [(t.name, t.state) for t in restarted.picture().transactions] == [("T4", "PREPARED")]
    resolved = run_script(upto=21)
    assert resolved.sm.in_doubt() == [] and resolved.workload.ended["T4"] == "committed"


def test_the_record_grows_through_every_shape_and_back():
    shapes = [line.rsplit(", ", 1)[1] for line in run_script().outcomes if "blob" in line and "bytes, " in line]
    assert shapes == ["LARGE_1", "LARGE_2", "LARGE_1", "LARGE_0", "SMALL"]
    assert "LARGE_0" in texts(record_picture("blob", 25))[0]
    assert run_script().records()["blob"] == "bbbb"


def test_the_default_script_ends_with_the_commits_of_every_transaction():
    demo = run_script()
    assert set(demo.workload.ended.values()) == {"committed", "aborted"}
    assert demo.records() == {"alpha": "Alpha", "beta": "Beta", "gamma": "gamma", "blob": "bbbb", "photo": "p" * 448}


# -- edited scripts ------------------------------------------------------------------------------------------------
def test_an_early_commit_of_t2_lets_the_first_checkpoint_after_the_fill_remove_files():
    script = [op for op in SCRIPT if op != ("commit", "T2")]
    script.insert(step_of(script, ("checkpoint",)) - 1, ("commit", "T2"))
    demo = run_script(script, upto=14)
    assert demo.held == []
    assert [name for name, step in demo.removed if step == 14] == ["00000001.jdb", "00000002.jdb"]
    assert "the oldest transaction holding the log is T3" in demo.refused[0][1]
    assert "T3 created 61 records" in demo.outcomes[11]


def test_abort_prepared_instead_takes_the_change_back():
    script = edited(("commit_prepared", "g1"), ("abort_prepared", "g1"))
    demo = run_script(script, upto=21)
    assert demo.records()["beta"] == "beta" and demo.sm.in_doubt() == []


def test_an_append_too_large_for_the_log_is_refused_and_changes_nothing():
    script = edited(("append", "T7", "blob", "d" * 1344), ("append", "T7", "blob", "d" * 4480))
    demo = run_script(script, upto=32)
    assert demo.refused[-1][0] == 31 and "T7 cannot log" in demo.refused[-1][1]
    assert demo.records()["blob"] == "b" * 448 + "c" * 448


def test_a_tear_in_the_script_is_repaired_from_the_whole_log():
    script = SCRIPT[:8] + [("tear", "alpha"), ("restart",)]
    demo = run_script(script)
    assert demo.sm.restart_report.redo.torn_pages_rebuilt == 1
    assert demo.records() == {"alpha": "alpha", "beta": "beta"}  # T2 rolled back by restart


# -- bad scripts ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad,why", [
    (("commit", "T9"), "no transaction T9 has begun"),
    (("commit_prepared", "g9"), "no transaction is prepared as 'g9'"),
    (("truncate", "T2", "alpha", 99), "alpha holds 5 bytes"),
    (("restart",), "the disk has not crashed"),
    (("prepare", "T2", 7), "a prepare needs a new global id"),
])
def test_a_bad_operation_is_a_script_error_naming_its_step(bad, why):
    script = SCRIPT[:8] + [bad]
    with pytest.raises(ScriptError, match=rf"^step 9 .*{why}"):
        run_script(script)


def test_nothing_but_restart_runs_on_a_crashed_disk():
    crashed = r"step 20 \('commit', 'T2'\): the disk crashed \(at step 19\): restart first"
    with pytest.raises(ScriptError, match=crashed):
        run_script(SCRIPT[:19] + [("commit", "T2")])
    late = SCRIPT[:31] + [("tear", "blob"), ("restart",), ("commit", "T7")]  # T7 was a loser: rolled back
    with pytest.raises(ScriptError, match=r"step 34 .*no transaction T7 has begun"):
        run_script(late)


def test_a_tear_needs_a_page_with_a_change_not_yet_on_the_disk():
    script = SCRIPT[:5] + [("crash",), ("restart",), ("tear", "beta")]  # restart wrote every page
    with pytest.raises(ScriptError, match=r"^step 8 .*the page of beta, p\(1.3.12\), has no change that is not"):
        run_script(script)


def test_an_unknown_operation_is_named_with_the_table():
    with pytest.raises(ScriptError, match="unknown operation 'grow'"):
        run_script([("grow", "T1")])
    assert {"fill", "prepare", "commit_prepared", "abort_prepared", "checkpoint", "crash", "tear", "restart",
            "truncate"} <= set(OPS)


# -- crash anywhere: the control's callback ------------------------------------------------------------------------
def test_crash_view_a_prepared_transaction_survives_and_the_check_passes():
    view = crash_view(18, "crash")
    assert view.in_doubt == ("T4",) and view.ok is True
    assert crash_view(18, "crash", draw=False).summary() == view.summary()  # the same every time


def test_crash_view_a_torn_page_with_the_whole_log_is_rebuilt():
    view = crash_view(8, "tear a page")
    assert "crash while writing p(1.3.12)" in view.summary() and "1 torn page(s) rebuilt" in view.summary()
    assert view.ok is True


def test_crash_view_a_torn_page_after_scavenging_is_rebuilt_from_its_image():
    # The page's history before the log's head is gone; its full image, logged when it became dirty, is not.
    assert run_script(upto=31).picture().head == 4  # files 1 to 3 were scavenged
    view = crash_view(31, "tear a page")
    said = view.summary()
    assert "crash while writing p(1.3.14)" in said and "1 torn page(s) rebuilt" in said and view.ok is True
    # ... from the image logged when the page last became dirty, after the master checkpoint (step 29)
    image = re.search(r"p\(1\.3\.14\) repaired from its image at 0x(\w+)/0x(\w+)", said)
    master = run_script(upto=31).picture().master
    assert image and (int(image[1], 16), int(image[2], 16)) > (master.file, master.offset)


def test_crash_view_no_crash_is_a_clean_shutdown_and_a_bad_choice_is_refused():
    view = crash_view(8, "no crash")
    assert "clean shutdown" in view.summary() and view.ok is True
    with pytest.raises(ValueError, match="crash must be one of"):
        crash_view(8, "fire")


def test_the_explorer_runs_an_edited_script_from_code():
    script = edited(("commit_prepared", "g1"), ("abort_prepared", "g1"))
    explorer = log_space_explorer(script)
    assert list(explorer.controls) == ["step", "crash"] and explorer.controls["step"].max == len(script)
    assert list(explorer.controls["crash"].options) == list(CRASHES)
    explorer.controls["step"].value = 18
    assert explorer.result.in_doubt == ("T4",) and explorer.result.ok
    explorer.controls["crash"].value = "tear a page"
    assert explorer.result.step == 18 and "1 torn page(s) rebuilt" in explorer.result.summary()  # after scavenging
    explorer.controls["step"].value = 8
    assert explorer.result.ok and "1 torn page(s) rebuilt" in explorer.result.summary()
    with pytest.raises(ScriptError):
        log_space_explorer([("commit", )])


# -- pictures ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 8, 11, 12, 15, 20, 42])
def test_the_log_pictures_are_readable_and_use_the_style_colours(k):
    step = logspace_step(k)
    for fig, size in ((step.figure, (9.5, 4.6)), (step.reservations, (9.5, 3.2))):
        assert tuple(fig.get_size_inches()) == size and problems(fig) == []
        faces = {to_hex(p.get_facecolor()) for ax in fig.axes for p in ax.patches if isinstance(p, Rectangle)}
        assert faces <= set(LOG_SPACE_COLOURS.values()) | set(TRANSACTION_COLOURS)


def test_the_log_picture_shows_removed_files_spares_and_the_marks():
    words = texts(logspace_step(15).figure)
    assert words.count("removed\nstep 15") == 2 and words.count("spare") == 3
    assert any(w.startswith("master 0x3/0x39b") for w in words) and any(w.startswith("tail ") for w in words)
    held = texts(logspace_step(11).figure)
    assert "T3\n8263 B" in held and any(w.startswith("T2 (ACTIVE) first 0x1/0x530") for w in held)
    assert "T4 (PREPARED) first 0x3/0x5c1" in texts(logspace_step(20).figure)


def test_the_reservations_picture_shows_logged_against_held():
    words = texts(logspace_step(8).reservations)
    assert "T2 ACTIVE" in words and "117 B" in words and "915 B" in words
    assert "held for its rollback" in words


def test_a_transaction_lost_in_a_crash_leaves_its_name_free_for_the_next():
    # T2's entries never reached the disk: restart never saw it, and the engine numbers the next one 2 again.
    script = SCRIPT[:8] + [("crash",), ("restart",), ("begin", "T2"), ("create", "T2", "delta", "delta"),
                           ("commit", "T2")]
    assert run_script(script).records() == {"alpha": "alpha", "beta": "beta", "delta": "delta"}


def test_marks_close_together_stack_instead_of_hiding_each_other():
    # After step 8 T2's first entry (0x1/0x530) and the tail (0x1/0x5a5) are a few pixels apart in file 1.
    from matplotlib.lines import Line2D

    fig = logspace_step(8).figure
    marks = {line.get_label().split(" ")[0]: line.get_ydata()[0] for line in fig.axes[0].lines
             if isinstance(line, Line2D) and line.get_marker() == "v"}
    assert set(marks) == {"T2", "master", "tail"}
    assert marks["tail"] > marks["T2"]  # the tail's marker one tier up
