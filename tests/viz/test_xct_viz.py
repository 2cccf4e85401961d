"""Pictures and widgets of transactions and restart: the demos, their pure callbacks, fixed sizes."""

import pytest
from matplotlib.figure import Figure

from minidb.log import NULL_LSN
from minidb.pagestore.ids import RecordId
from minidb.viz.pagestore_widgets import recovery_explorer, xct_explorer
from minidb.viz.recovery import TABLES_HEIGHT, RecoveryPicture, draw_recovery
from minidb.viz.recovery_demo import KEEP_MODES, PHASES, SCRIPT as RECOVERY_SCRIPT, demo_run, last_write, recovery_view
from minidb.viz.script import ScriptError
from minidb.viz.style import WIDTH
from minidb.viz.xct_demo import SCRIPT, STEPS, run_script, xct_step
from minidb.viz.xctlog import draw_xct_log, lanes_height


# -- notebook 06: transactions and records -----------------------------------------------------
def test_the_transaction_script_outcomes():
    assert xct_step(11).page.slots[2][1] == "reserved" and xct_step(11).page.rsvd_tid == 2
    assert xct_step(13).outcomes == ("T3 creates theta, 30 bytes: r(1.3.12.4)",)  # not gamma's reserved slot 2
    after_abort = xct_step(14)
    clrs = [r for r in after_abort.rows if r.is_clr and r.tid == 2]
    assert [r.type_name for r in clrs] == ["clr_rec_remove", "clr_rec_insert", "clr_rec_splice", "clr_rec_splice",
                                           "clr_rec_splice"]
    forward = [r for r in after_abort.rows if r.tid == 2 and r.type_name.startswith("rec_")]
    assert [c.undo_nxt for c in clrs] == [f.prev for f in reversed(forward)]
    assert clrs[-1].undo_nxt == NULL_LSN
    assert after_abort.page.slots[2][1] == "in use"  # gamma back in its very slot
    assert xct_step(20).outcomes == ("T5 creates iota, 20 bytes: r(1.3.12.0)",)  # alpha's slot, T4 has ended
    assert xct_step(21).outcomes == ("T5 creates kappa, 1080 bytes: r(1.3.12.3) (a large record)",)
    with pytest.raises(ValueError, match=f"step must be between 0 and {STEPS}"):
        xct_step(STEPS + 1)


def test_the_log_picture_shows_only_the_scripts_transactions():
    first = xct_step(10, since=6)
    images = [r for r in first.rows if r.type_name == "page_image"]  # full page images belong to no transaction
    assert images and {r.tid for r in images} == {0}
    assert {r.tid for r in first.rows if r not in images} == {1, 2}
    assert not any(r.type_name.startswith("chkpt") for r in first.rows)
    assert first.description == "steps 7-10" and len(first.entries) == 4
    assert [line.split()[2] for line in first.entries] == ["rec_splice"] * 3 + ["rec_insert"]


def test_what_if_t2_commits():
    script = [("commit", "T2") if op == ("abort", "T2") else op for op in SCRIPT]
    step = xct_step(14, script)
    assert [line.split()[2:4] for line in step.entries] == [["xct_end", "committed"]]
    assert not any(r.is_clr and r.tid == 2 for r in step.rows)
    demo = run_script(script)
    workload = demo.workload
    assert workload.ended["T2"] == "committed"
    assert workload.committed[workload.rids["delta"]] == b"delta" * 6
    assert workload.rids["kappa"] == workload.rids["gamma"]  # gamma's slot, freed for good, is kappa's now
    assert workload.committed[workload.rids["kappa"]] == b"kappa " * 180


@pytest.mark.parametrize("script, message", [
    ([("begin", "T2")], r"step 1 \('begin', 'T2'\): transactions are named in the order they begin: this one is T1"),
    ([("begin", "T1"), ("commit", "T9")], r"step 2 .*no transaction T9 has begun"),
    ([("begin", "T1"), ("commit", "T1"), ("commit", "T1")], r"step 3 .*T1 has already ended \(committed\)"),
    ([("begin", "T1"), ("create", "T1", "a", "x")], r"step 2 .*no file yet"),
    ([("begin", "T1"), ("create_file", "T1"), ("free", "T1", "zeta")], r"step 3 .*no record called 'zeta'"),
    ([("begin", "T1"), ("create_file", "T1"), ("create", "T1", "a", "abc"), ("update", "T1", "a", 2, "xy")],
     r"step 4 .*a holds 3 bytes: start must be a number from 0 to 1"),
    ([("begin", "T1"), ("create_file", "T1"), ("create", "T1", "a", 3)], r"step 3 .*the body must be a string"),
    ([("begin", "T1"), ("checkpoint",)], r"step 2 .*unknown operation 'checkpoint'"),
    ([("begin", ["T1"])], r"step 1 .*plain strings and numbers"),
])
def test_a_bad_transaction_script_names_the_step(script, message):
    with pytest.raises(ScriptError, match=message):
        xct_step(len(script), script)


def test_xct_pictures_have_fixed_sizes():
    step = xct_step(14)
    lanes = len({r.tid for r in step.rows})
    types = len({r.type_name for r in step.rows})
    size = tuple(step.figure.get_size_inches())
    assert isinstance(step.figure, Figure) and size == (WIDTH, lanes_height(lanes, len(step.rows), WIDTH, types))
    assert tuple(step.page_figure.get_size_inches()) == (WIDTH, 4.6)
    assert tuple(draw_xct_log([], width=8).get_size_inches()) == (8.0, lanes_height(1, title_lines=0))


def test_xct_explorer_drives_the_pure_callback():
    explorer = xct_explorer()
    assert explorer.result.step == STEPS
    explorer.controls["step"].value = 11
    assert explorer.result.step == 11 and explorer.result.entries[0].split()[2] == "rec_remove"


def test_xct_explorer_runs_an_edited_script():
    script = SCRIPT[:11] + [("abort", "T2")]
    explorer = xct_explorer(script)
    assert explorer.controls["step"].max == 12 and explorer.result.step == 12
    assert explorer.result.entries[0].split()[2] == "xct_abort"
    explorer.controls["step"].value = 11
    assert explorer.result.page.slots[2][1] == "reserved"


# -- notebook 08: crash recovery --------------------------------------------------------------------
def test_the_recovery_script_has_every_kind_of_transaction():
    run = demo_run()
    assert last_write() == len(run.writes) > 20
    names = [r.type_name for r in run.rows]
    assert {"clr_rec_insert", "clr_rec_splice", "chkpt_begin", "chkpt_xct_tab"} <= set(names)
    assert [tid for tid, _, _ in run.commits] == [1, 4, 6]
    assert run.events[18] == "after write 28: step 19 T5 creates phi, 1200 bytes: r(1.3.12.4) (a large record)"
    assert run.events[19].startswith("after write 30: step 20 T5 updates epsilon")  # write 29 is in step 20


def test_what_if_t2_commits_before_the_crash():
    script = [("commit", "T2") if op == ("abort", "T2") else op for op in RECOVERY_SCRIPT]
    view = recovery_view(28, "everything", "restarted", draw=False, script=script)
    delta, alpha = RecordId(1, 3, 12, 3), RecordId(1, 3, 12, 0)
    assert view.committed == (1, 2, 4) and view.ok
    assert view.found[delta] == b"delta" and view.found[alpha] == b"ALPHA"
    default = recovery_view(28, "everything", "restarted", draw=False)
    names = demo_run().names
    assert default.found[alpha] == b"alpha" and sorted(names[rid] for rid in default.found) == ["alpha", "beta",
                                                                                                   "epsilon"]


def test_a_bad_recovery_script_names_the_step():
    with pytest.raises(ScriptError, match=r"step 2 \('update', 'T1', 'alpha', 0, 'A'\): no transaction T1"):
        demo_run([("checkpoint",), ("update", "T1", "alpha", 0, "A")])
    with pytest.raises(ScriptError, match=r"step 1 .*unknown operation 'crash'"):
        recovery_explorer([("crash",)])
    with pytest.raises(ScriptError, match=r"step 2 .*plain strings and numbers"):
        demo_run([("begin", "T1"), ("create_file", ["T1"])])


@pytest.mark.parametrize("keep", sorted(KEEP_MODES))
def test_every_crash_point_recovers_exactly_the_committed_data(keep):
    run = demo_run()
    survived = set()
    for write in range(1, last_write() + 1):
        view = recovery_view(write, keep, "restarted", draw=False)
        assert view.ok, (write, view.summary())
        survived.add(view.committed)
    # the crash points cover every outcome: nothing committed yet, T1, T1 and T4, all three
    if keep == "everything":
        assert survived == {(), (1,), (1, 4), (1, 4, 6)}
    assert len(run.commits) == 3


def test_the_phases_show_the_tables_as_restart_builds_them():
    last = last_write()
    crashed = recovery_view(last, "nothing", "crashed", draw=False)
    assert crashed.picture.xct_table == () and crashed.picture.faded
    analysis = recovery_view(last, "nothing", "analysis", draw=False)
    assert [row[:2] for row in analysis.picture.xct_table] == [("T3", "ACTIVE"), ("T5", "ACTIVE")]
    assert analysis.picture.dirty_pages and "master" in analysis.picture.marks
    redo = recovery_view(last, "nothing", "redo", draw=False)
    assert set(redo.picture.outlined.values()) <= {"#2e7d32", "#ffb300"}
    undo = recovery_view(last, "nothing", "undo", draw=False)
    assert [row[:2] for row in undo.picture.xct_table] == [("T3", "rolled back"), ("T5", "rolled back")]
    assert any(row.is_clr and row.tid == 5 for row in undo.picture.rows)
    done = recovery_view(last, "nothing", "restarted", draw=False)
    assert done.ok and done.found == done.expected and RecordId(1, 3, 12, 1) in done.found
    assert done.summary().endswith("check: committed data is there, uncommitted data is not")
    with pytest.raises(ValueError, match="crash_write must be between 1 and"):
        recovery_view(0)
    with pytest.raises(ValueError, match="phase one of"):
        recovery_view(1, "nothing", "later")


def test_recovery_picture_has_a_fixed_size():
    view = recovery_view(last_write() // 2, "torn", "undo")
    lanes = len(view.picture.lanes)
    rows, types = view.picture.rows, len({r.type_name for r in view.picture.rows})
    title = view.figure.get_suptitle().count("\n") + 1
    assert tuple(view.figure.get_size_inches()) == (WIDTH, lanes_height(lanes, len(rows), WIDTH, types, title) + TABLES_HEIGHT)
    empty = draw_recovery(RecoveryPicture("crashed", (), (), (), ()))
    assert isinstance(empty, Figure)


def test_recovery_explorer_runs_an_edited_script():
    script = RECOVERY_SCRIPT[:6] + [("begin", "T2"), ("create", "T2", "delta", "delta"), ("commit", "T2")]
    explorer = recovery_explorer(script)
    writes = last_write(script)
    slider = explorer.controls["crash_write"]
    assert slider.description == "crash after write" and slider.max == writes < last_write()
    slider.value = writes
    explorer.controls["keep"].value = "everything"  # T2's commit is in the last write, not yet fsynced
    assert explorer.result.committed == (1, 2) and explorer.result.ok
    assert explorer.result.summary().startswith(f"crash after write {writes} of {writes}")


def test_recovery_explorer_drives_the_pure_callback():
    explorer = recovery_explorer()
    assert explorer.result.phase == "restarted" and explorer.result.ok
    explorer.controls["phase"].value = "analysis"
    explorer.controls["crash_write"].value = 3
    assert (explorer.result.crash_write, explorer.result.phase, explorer.result.found) == (3, "analysis", None)
    assert list(explorer.controls["phase"].options) == list(PHASES)


@pytest.mark.parametrize("keep, words", [("nothing", "keeping nothing of the unsynced writes"),
                                         ("everything", "keeping everything of the unsynced writes"),
                                         ("torn", "keeping the unsynced writes, the last one torn")])
def test_the_crash_line_says_in_words_what_each_mode_keeps(keep, words):
    first = recovery_view(5, keep, "crashed", draw=False).lines[0]
    assert f"({words})" in first and "keeping torn" not in first


def test_each_log_box_is_labelled_with_its_types_code_not_only_its_colour():
    from minidb.viz.xctlog import box_code

    run = demo_run()
    fig = draw_xct_log(list(run.rows))
    shown = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert sorted(shown) == sorted(box_code(r.type_name) for r in run.rows)  # one code in every box
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "ins rec_insert" in legend and "img page_image" in legend
    assert len({box_code(r.type_name) for r in run.rows if not r.is_clr}) == len(
        {r.type_name for r in run.rows if not r.is_clr})  # no two types share a code
