"""Pictures of the log store and its widgets: data, fixed-size figures, pure callbacks."""

import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from minidb.logstore.cases import worked_case
from minidb.logstore.verify import live_but_obsolete
from minidb.viz.checkpoint import PROVISIONAL_COLOURS, draw_checkpoint, draw_dirty_map, draw_worked_case
from minidb.viz.gallery import FIGURES
from minidb.viz.logstore import draw_tree_and_log, draw_utilization, tree_graph
from minidb.viz.logstore_demo import (TREE_OPS, bank_writes, checkpoint_demo_env, logstore_crash_demo,
                                      tree_step)
from minidb.viz.logstore_widgets import logstore_crash_explorer, tree_explorer
from minidb.viz.style import WIDTH

FINAL = {b"alice": b"70", b"bob": b"80", b"carol": b"70", b"erin": b"5", b"frank": b"60", b"grace": b"35",
         b"heidi": b"40"}


def test_tree_and_log_marks_entries_in_use_and_obsolete():
    step = tree_step(len(TREE_OPS))
    picture = step.picture
    assert len(picture.boxes) == len(list(step.env.log.scan()))
    for node in picture.view.nodes():
        if not node.lsn.is_null:
            assert picture.box(node.lsn).in_use
    assert not any(b.in_use and b.obsolete for b in picture.boxes)
    assert live_but_obsolete(step.env) == []
    assert any(b.obsolete for b in picture.boxes) and any(b.provisional == "YES" for b in picture.boxes)


def test_draw_tree_and_log_has_a_box_per_node_and_per_entry():
    picture = tree_step(len(TREE_OPS)).picture
    fig = draw_tree_and_log(picture, title="t")
    assert isinstance(fig, Figure) and fig.get_size_inches()[0] == WIDTH
    tree_ax, log_ax = fig.axes
    assert sum(isinstance(p, Rectangle) for p in tree_ax.patches) == len(picture.view.nodes())
    assert sum(isinstance(p, Rectangle) for p in log_ax.patches) == len(picture.boxes)


def test_tree_graph_has_a_record_per_node():
    picture = tree_step(len(TREE_OPS)).picture
    source = tree_graph(picture).source
    for node in picture.view.nodes():
        assert f"n{node.node_id} [label=" in source
    tree_edges = [line for line in source.splitlines() if "->" in line and "log:" not in line]
    assert len(tree_edges) == sum(len(n.children) for n in picture.view.nodes())
    # Every record slot points into the log strip, where obsolete entries are grey.
    records = sum(1 for n in picture.view.nodes() if n.is_bin for d in n.known_deleted if not d)
    assert sum(1 for line in source.splitlines() if ":s" in line and "-> log:" in line) == records
    assert source.count('BGCOLOR="#d9d9d9"') == sum(1 for b in picture.boxes if b.obsolete)
    assert tree_graph(picture, show_log=False).source.count("log:") == 0


def test_utilization_bars():
    env = tree_step(len(TREE_OPS)).env
    fig = draw_utilization(env)
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]
    assert len(bars) == 2 * len(env.utilization_report())


def test_tree_steps():
    assert tree_step(0).operation == "a new environment"
    assert "put alice=100" in tree_step(1).summary()
    with pytest.raises(ValueError, match="step must be between"):
        tree_step(len(TREE_OPS) + 1)


def test_dirty_map_and_checkpoint_pictures():
    env = checkpoint_demo_env()
    run = env.checkpointer.start()
    run.through(4)
    names = {impl.id: impl.name for impl in env.db_tree.by_id.values()}
    fig = draw_dirty_map(run.result.dirty_map, names)
    refs = sum(len(r) for _, _, r in run.result.dirty_map.levels)
    assert sum(isinstance(p, Rectangle) for p in fig.axes[0].patches) == refs
    assert {l for _, l, _ in run.result.dirty_map.levels} == {1, 2}
    half = draw_checkpoint(run.result, current_step=4)
    assert not [p for p in half.axes[1].patches if isinstance(p, Rectangle)]  # nothing logged yet
    result = run.finish()
    fig = draw_checkpoint(result)
    logged = [p for p in fig.axes[1].patches if isinstance(p, Rectangle)]
    assert len(logged) == len(result.logged)
    assert {l.provisional.name for l in result.logged} <= set(PROVISIONAL_COLOURS)


def test_worked_case_strip():
    fig = draw_worked_case(worked_case(3, bug=True))
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "INCORRECT" in texts and "bug option" in texts


def test_crash_demo_gives_the_committed_state():
    last = len(bank_writes())
    nothing = logstore_crash_demo(last, "nothing")
    assert nothing.records == FINAL  # ivan was never synced; erin's loser write undone; dave deleted
    everything = logstore_crash_demo(last, "everything")
    assert everything.records == {**FINAL, b"ivan": b"90"}
    assert logstore_crash_demo(1, "nothing").records == {}
    assert [p.name for p in nothing.phases][-1] == "checkpoint" and len(nothing.phases) == 11
    assert nothing.phases[0].picture is None or nothing.phases[0].name == "find the end of the log"
    assert "records after recovery" in nothing.summary()


def test_crash_demo_every_point_keeps_committed_writes():
    for k in range(1, len(bank_writes()) + 1):
        for keep in ("nothing", "torn", "everything"):
            records = logstore_crash_demo(k, keep).records
            assert b"erin" not in records or records[b"erin"] == b"5"  # the loser never shows
            if b"alice" in records:
                assert records[b"alice"] in (b"100", b"70")


def test_crash_demo_rejects_bad_arguments():
    with pytest.raises(ValueError, match="after_write must be between 1 and"):
        logstore_crash_demo(0)
    with pytest.raises(ValueError, match="keep must be one of"):
        logstore_crash_demo(1, "some")
    with pytest.raises(ValueError, match="phase must be between"):
        logstore_crash_demo(1, "nothing", 99)


def test_explorers_are_driven_by_their_controls():
    explorer = logstore_crash_explorer()
    explorer.controls["after_write"].value = len(bank_writes())
    explorer.controls["keep"].value = "everything"
    explorer.controls["phase"].value = 7
    result = explorer.result
    assert (result.after_write, result.keep, result.phase) == (len(bank_writes()), "everything", 7)
    assert result.phases[7].name == "redo LNs" and b"ivan" in result.records
    trees = tree_explorer()
    trees.controls["step"].value = 3
    assert trees.result.step == 3 and trees.result.operation == "put carol=75"


def test_the_gallery_lists_the_log_store_pictures():
    assert {"logstore_tree.png", "logstore_utilization.png", "logstore_dirty_map.png", "logstore_checkpoint.png",
            "logstore_worked_cases.png", "logstore_recovery.png"} <= set(FIGURES)
    assert isinstance(FIGURES["logstore_dirty_map.png"](), Figure)
