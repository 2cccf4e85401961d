"""Pictures and widgets of transactions and restart: the demos, their pure callbacks, fixed sizes."""

import pytest
from matplotlib.figure import Figure

from minidb.log import NULL_LSN
from minidb.pagestore.ids import RecordId
from minidb.viz.pagestore_widgets import recovery_explorer, xct_explorer
from minidb.viz.recovery import TABLES_HEIGHT, RecoveryPicture, draw_recovery
from minidb.viz.recovery_demo import KEEP_MODES, PHASES, WRITES, demo_run, recovery_view
from minidb.viz.style import WIDTH
from minidb.viz.xct_demo import STEPS, xct_step
from minidb.viz.xctlog import draw_xct_log, lanes_height


# -- notebook 06: transactions and records -----------------------------------------------------
def test_the_transaction_script_outcomes():
    assert xct_step(3).page.slots[2][1] == "reserved" and xct_step(3).page.rsvd_tid == 2
    assert xct_step(4).outcome.endswith("r(1.3.12.4), not gamma's reserved slot")
    after_abort = xct_step(5)
    clrs = [r for r in after_abort.rows if r.is_clr and r.tid == 2]
    assert [r.type_name for r in clrs] == ["clr_rec_remove", "clr_rec_insert", "clr_rec_splice", "clr_rec_splice",
                                           "clr_rec_splice"]
    forward = [r for r in after_abort.rows if r.tid == 2 and r.type_name.startswith("rec_")]
    assert [c.undo_nxt for c in clrs] == [f.prev for f in reversed(forward)]
    assert clrs[-1].undo_nxt == NULL_LSN
    assert after_abort.page.slots[2][1] == "in use"  # gamma back in its very slot
    assert xct_step(7).outcome.endswith("iota reuses alpha's slot, r(1.3.12.0)")
    assert "large record r(1.3.12.3)" in xct_step(8).outcome
    with pytest.raises(ValueError, match=f"step must be between 0 and {STEPS}"):
        xct_step(STEPS + 1)


def test_xct_pictures_have_fixed_sizes():
    step = xct_step(5)
    lanes = len({0} | {r.tid for r in step.rows})
    types = len({r.type_name for r in step.rows})
    size = tuple(step.figure.get_size_inches())
    assert isinstance(step.figure, Figure) and size == (WIDTH, lanes_height(lanes, len(step.rows), WIDTH, types))
    assert tuple(step.page_figure.get_size_inches()) == (WIDTH, 4.6)
    assert tuple(draw_xct_log([], width=8).get_size_inches()) == (8.0, lanes_height(1, title_lines=0))


def test_xct_explorer_drives_the_pure_callback():
    explorer = xct_explorer()
    assert explorer.result.step == STEPS
    explorer.controls["step"].value = 3
    assert explorer.result.step == 3 and explorer.result.entries[0].split()[2] == "rec_remove"


# -- notebook 08: crash recovery --------------------------------------------------------------------
def test_the_recovery_script_has_every_kind_of_transaction():
    run = demo_run()
    assert WRITES == len(run.writes) > 20
    names = [r.type_name for r in run.rows]
    assert {"clr_rec_insert", "clr_rec_splice", "chkpt_begin", "chkpt_xct_tab"} <= set(names)
    assert [tid for tid, _, _ in run.commits] == [1, 4, 6]


@pytest.mark.parametrize("keep", sorted(KEEP_MODES))
def test_every_crash_point_recovers_exactly_the_committed_data(keep):
    run = demo_run()
    survived = set()
    for write in range(1, WRITES + 1):
        view = recovery_view(write, keep, "restarted", draw=False)
        assert view.ok, (write, view.summary())
        survived.add(view.committed)
    # the crash points cover every outcome: nothing committed yet, T1, T1 and T4, all three
    if keep == "everything":
        assert survived == {(), (1,), (1, 4), (1, 4, 6)}
    assert len(run.commits) == 3


def test_the_phases_show_the_tables_as_restart_builds_them():
    crashed = recovery_view(WRITES, "nothing", "crashed", draw=False)
    assert crashed.picture.xct_table == () and crashed.picture.faded
    analysis = recovery_view(WRITES, "nothing", "analysis", draw=False)
    assert [row[:2] for row in analysis.picture.xct_table] == [("T3", "ACTIVE"), ("T5", "ACTIVE")]
    assert analysis.picture.dirty_pages and "master" in analysis.picture.marks
    redo = recovery_view(WRITES, "nothing", "redo", draw=False)
    assert set(redo.picture.outlined.values()) <= {"#2e7d32", "#ffb300"}
    undo = recovery_view(WRITES, "nothing", "undo", draw=False)
    assert [row[:2] for row in undo.picture.xct_table] == [("T3", "rolled back"), ("T5", "rolled back")]
    assert any(row.is_clr and row.tid == 5 for row in undo.picture.rows)
    done = recovery_view(WRITES, "nothing", "restarted", draw=False)
    assert done.ok and done.found == done.expected and RecordId(1, 3, 12, 1) in done.found
    assert done.summary().endswith("check: committed data is there, uncommitted data is not")
    with pytest.raises(ValueError, match="crash_write must be between 1 and"):
        recovery_view(0)
    with pytest.raises(ValueError, match="phase one of"):
        recovery_view(1, "nothing", "later")


def test_recovery_picture_has_a_fixed_size():
    view = recovery_view(WRITES // 2, "torn", "undo")
    lanes = len(view.picture.lanes)
    rows, types = view.picture.rows, len({r.type_name for r in view.picture.rows})
    title = view.figure.get_suptitle().count("\n") + 1
    assert tuple(view.figure.get_size_inches()) == (WIDTH, lanes_height(lanes, len(rows), WIDTH, types, title) + TABLES_HEIGHT)
    empty = draw_recovery(RecoveryPicture("crashed", (), (), (), ()))
    assert isinstance(empty, Figure)


def test_recovery_explorer_drives_the_pure_callback():
    explorer = recovery_explorer()
    assert explorer.result.phase == "restarted" and explorer.result.ok
    explorer.controls["phase"].value = "analysis"
    explorer.controls["crash_write"].value = 3
    assert (explorer.result.crash_write, explorer.result.phase, explorer.result.found) == (3, "analysis", None)
    assert list(explorer.controls["phase"].options) == list(PHASES)
